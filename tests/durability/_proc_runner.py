"""Start `_proc_worker.py` processes from a test: one at a time, killed mid-batch, or racing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from _proc_support import Execution, open_store, read_ledger, worker_env
from _stall_points import is_stopped

from eudaimon.core.events import Event
from eudaimon.stores import EventStore

WORKER = Path(__file__).with_name("_proc_worker.py")
T = TypeVar("T")


@dataclass
class Procs:
    """A store spec, a ledger and the processes started on them."""

    spec: str
    workdir: Path
    lease_ttl_s: float = 1.0
    tool_sleep_s: float = 0.01
    count: int = 0
    killed: set[str] = field(default_factory=set)
    commit_log: Path | None = None
    """Where every process logs its commits (`CommitLog`), if anywhere."""

    @property
    def ledger_dir(self) -> Path:
        return self.workdir / "ledger"

    def _argv(self, command: str, run_id: str, *args: str) -> tuple[str, list[str]]:
        self.count += 1
        incarnation = f"p{self.count:03d}-{command}"
        return incarnation, [
            sys.executable,
            str(WORKER),
            self.spec,
            str(self.ledger_dir),
            incarnation,
            command,
            run_id,
            *args,
        ]

    def _env(self, tool_sleep_s: float | None = None) -> dict[str, str]:
        env = worker_env(self.lease_ttl_s)
        env["EUDAIMON_TEST_TOOL_SLEEP_S"] = str(self.tool_sleep_s if tool_sleep_s is None else tool_sleep_s)
        if self.commit_log is not None:
            env["EUDAIMON_TEST_COMMIT_LOG"] = str(self.commit_log)
        return env

    def run(self, command: str, run_id: str, *args: str) -> dict[str, Any]:
        """One process, to the end; its JSON report."""
        _, argv = self._argv(command, run_id, *args)
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, env=self._env(), cwd=WORKER.parent, check=False
        )
        assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    def kill_after_tools(self, run_id: str, plan: str, policy: str, tools_in_flight: int) -> str:
        """Start the run in a process whose tools sleep long; SIGKILL it once `tools_in_flight`
        tools have written their ledger line (so they are between tool_started and tool_completed)."""
        incarnation, argv = self._argv("prompt", run_id, plan, policy)
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self._env(30.0), cwd=WORKER.parent
        )
        assert proc.stdout is not None
        seen = 0
        try:
            for line in proc.stdout:
                seen += line.startswith("T ")
                if seen >= tools_in_flight:
                    proc.send_signal(signal.SIGKILL)
                    break
        finally:
            if proc.poll() is None and seen < tools_in_flight:
                proc.kill()
            proc.wait(timeout=30)
            with contextlib.suppress(Exception):
                proc.communicate(timeout=5)
        assert proc.returncode == -signal.SIGKILL, f"the worker was not killed mid-batch (saw {seen} tools)"
        self.killed.add(incarnation)
        return incarnation

    def stall_and_take_over(
        self, run_id: str, plan: str, stall_tool: str, stall_s: float
    ) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """Process A starts the run and, inside `stall_tool`, blocks its whole event loop for
        `stall_s` (so its lease lapses while it is alive); process B, ready at a gate, resumes
        the moment A stalls. Returns A's incarnation and both reports."""
        _, b_argv = self._argv("resume", run_id, plan, "allow")
        b = subprocess.Popen(
            b_argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self._env(),
            cwd=WORKER.parent,
        )
        a_inc, a_argv = self._argv("prompt", run_id, plan, "allow")
        a_env = self._env() | {"EUDAIMON_TEST_STALL": json.dumps({stall_tool: stall_s})}
        a = subprocess.Popen(
            a_argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=a_env, cwd=WORKER.parent
        )
        try:
            assert b.stdout is not None and b.stdin is not None and a.stdout is not None
            assert b.stdout.readline().strip() == "ready"
            for line in a.stdout:
                if line.startswith("T ") and line.split()[-1] == stall_tool:
                    break
            else:
                raise AssertionError(f"A never ran {stall_tool}: {a.communicate(timeout=30)}")
            b.stdin.write("go\n")
            b.stdin.flush()
            a_out, a_err = a.communicate(timeout=120)
            b_out, b_err = b.communicate(timeout=120)
        finally:
            for proc in (a, b):
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        assert a.returncode == 0 and b.returncode == 0, (a_out, a_err, b_out, b_err)
        return a_inc, json.loads(a_out.strip().splitlines()[-1]), json.loads(b_out.strip().splitlines()[-1])

    def start_stopped(self, run_id: str, plan: str, point: str) -> tuple[str, subprocess.Popen[str]]:
        """Start the run in a process that stops itself (SIGSTOP) at `point` (`hook` or
        `intent`, see `_stall_points`); return once it is stopped. `wake` lets it go on."""
        incarnation, argv = self._argv("prompt", run_id, plan, "allow")
        env = self._env() | {"EUDAIMON_TEST_SIGSTOP": point}
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=WORKER.parent
        )
        assert proc.stdout is not None
        while not (line := proc.stdout.readline()).startswith("Z "):
            if not line:
                proc.kill()
                raise AssertionError(f"the worker never reached {point}: {proc.communicate(timeout=30)}")
        for _ in range(1000):  # it printed `Z`, then sent itself SIGSTOP
            if is_stopped(proc.pid):
                break
            time.sleep(0.01)
        assert is_stopped(proc.pid), f"the worker did not stop at {point}"
        return incarnation, proc

    @staticmethod
    def wake(proc: subprocess.Popen[str]) -> dict[str, Any]:
        """SIGCONT a process `start_stopped` left stopped; its JSON report once it has exited."""
        proc.send_signal(signal.SIGCONT)
        try:
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 0, f"exit {proc.returncode}:\n{out}\n{err}"
        return dict(json.loads(out.strip().splitlines()[-1]))

    def race(self, processes: int, command: str, run_id: str, *args: str) -> list[dict[str, Any]]:
        """`processes` processes that open the store, wait at a gate, then all go at once."""
        procs = []
        for _ in range(processes):
            _, argv = self._argv(command, run_id, *args)
            procs.append(
                subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=self._env(),
                    cwd=WORKER.parent,
                )
            )
        reports: list[dict[str, Any]] = []
        try:
            for proc in procs:
                assert proc.stdout is not None
                line = proc.stdout.readline()
                assert line.strip() == "ready", f"{line!r} {proc.communicate(timeout=30)}"
            for proc in procs:  # every process is past its imports and has the store open: go
                assert proc.stdin is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
            for proc in procs:
                out, err = proc.communicate(timeout=120)
                assert proc.returncode == 0, f"exit {proc.returncode}:\n{out}\n{err}"
                reports.append(json.loads(out.strip().splitlines()[-1]))
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        return reports

    def executions(self) -> list[Execution]:
        executions, torn = read_ledger(self.ledger_dir)
        assert set(torn) <= self.killed, f"torn ledger lines from live processes: {torn}"
        return executions

    def with_store(self, use: Callable[[EventStore], Awaitable[T]]) -> T:
        """Run `use(store)` on a store of our own, in an event loop of its own."""

        async def go() -> T:
            store = open_store(self.spec)
            try:
                return await use(store)
            finally:
                await store.close()

        return asyncio.run(go())

    def journal(self, run_id: str) -> list[Event]:
        return self.with_store(lambda store: store.load(run_id))
