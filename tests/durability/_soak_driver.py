"""The parent side of the kill -9 soak: lanes of worker processes, killed and resumed.

A lane owns a few runs at a time. Each cycle it settles what waits for an operator (the
ambiguous calls of runs awaiting reconciliation: alternately reconciled with an output and
with `retry=True`), starts a fresh `_soak_worker.py` process on the lane's unfinished runs,
and SIGKILLs it at a moment chosen by a kill mode:

- `tool`: on the k-th `T` line, i.e. while a tool sleeps between its ledger line and its
  return — between `tool_started` and `tool_completed`;
- `model`: on the k-th `M` line, i.e. inside a model call after `model_attempt_started`;
- `work`: a random delay after the first sign of work (anywhere: commits, folds, gathers);
- `start`: a random delay after the process is ready (often while it waits for the lease).

Lanes run concurrently and share one store (one SQLite file, or one PostgreSQL schema), so
workers of different lanes contend for it. Once the kill budget is spent, lanes run their
workers undisturbed until every run has completed.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from _proc_support import Execution, open_store, read_ledger, worker_env

from eudaimon.core.errors import RunNotFound
from eudaimon.core.state import RunState, Status
from eudaimon.runtime import operations
from eudaimon.stores import EventStore

WORKER = Path(__file__).with_name("_soak_worker.py")
WORKER_TIMEOUT_S = 90.0
KILL_MODES = (("tool", 0.45), ("model", 0.2), ("work", 0.25), ("start", 0.1))


@dataclass
class SoakResult:
    kills: int = 0
    kill_modes: Counter[str] = field(default_factory=Counter)
    kills_with_open_model_attempt: int = 0
    killed: set[str] = field(default_factory=set)
    crashed: set[str] = field(default_factory=set)
    crash_kinds: Counter[str] = field(default_factory=Counter)
    clean_exits: int = 0
    incarnations: int = 0
    reconciled_output: int = 0
    reconciled_retry: int = 0
    runs: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def dead(self) -> set[str]:
        return self.killed | self.crashed


class Soak:
    def __init__(
        self,
        spec: str,
        workdir: Path,
        *,
        kills: int,
        lanes: int = 3,
        runs_per_worker: int = 3,
        lease_ttl_s: float = 0.5,
        seed: int = 0,
        label: str = "soak",
        mutant: str | None = None,
    ) -> None:
        self.spec = spec
        self.ledger_dir = workdir / "ledger"
        self.target = kills
        self.lanes = lanes
        self.runs_per_worker = runs_per_worker
        self.env = worker_env(lease_ttl_s)
        if mutant is not None:
            self.env["EUDAIMON_SOAK_MUTANT"] = mutant
        self.rng = random.Random(seed)
        self.label = label
        self.result = SoakResult()
        self._run_counter = 0
        self._store: EventStore | None = None

    async def run(self) -> SoakResult:
        started = time.monotonic()
        self._store = open_store(self.spec)
        try:
            await asyncio.gather(*(self._lane(n) for n in range(self.lanes)))
        finally:
            await self._store.close()
        self.result.seconds = time.monotonic() - started
        return self.result

    # -- a lane -------------------------------------------------------------------------

    async def _lane(self, lane: int) -> None:
        runs: list[str] = []
        while True:
            states = {run: await self._state(run) for run in runs}
            for state in states.values():
                if state is not None and state.status is Status.AWAITING_RECONCILIATION:
                    await self._reconcile(state)
            active = [r for r, s in states.items() if s is None or s.status is not Status.COMPLETED]
            bad = {r: s.status.value for r, s in states.items() if s is not None and s.status.is_terminal}
            bad = {r: v for r, v in bad.items() if v != Status.COMPLETED}
            assert not bad, f"runs ended badly: {bad}"
            if not active:
                if self.result.kills >= self.target:
                    return
                runs = [self._new_run_id(lane) for _ in range(self.runs_per_worker)]
                self.result.runs.extend(runs)
                continue
            killed = await self._cycle(active)
            if killed:
                after = [await self._state(run) for run in active]
                if any(s is not None and s.open_attempt is not None for s in after):
                    self.result.kills_with_open_model_attempt += 1

    def _new_run_id(self, lane: int) -> str:
        self._run_counter += 1
        return f"{self.label}-l{lane}-r{self._run_counter:04d}"

    async def _state(self, run_id: str) -> RunState | None:
        assert self._store is not None
        try:
            return await operations.load_state(self._store, run_id)
        except RunNotFound:
            return None

    async def _reconcile(self, state: RunState) -> None:
        """Settle each ambiguous call, after checking that it really is ambiguous."""
        assert self._store is not None
        executions, _ = read_ledger(self.ledger_dir)
        for call in state.unknown_outcomes():
            progress = state.calls[call.id]
            ran = [e for e in executions if (e.run, e.call, e.attempt) == (state.run_id, call.id, progress.attempt)]
            live = [e.incarnation for e in ran if e.incarnation not in self.result.dead]
            assert not live, f"{state.run_id}/{call.id} is unknown but ran to completion in live process {live}"
            if (self.result.reconciled_output + self.result.reconciled_retry) % 2 == 0:
                said = "it ran" if ran else "it never ran"
                await operations.reconcile(
                    self._store, state.run_id, call.id, output=f"reconciled: {said}", by="soak-operator"
                )
                self.result.reconciled_output += 1
            else:
                await operations.reconcile(self._store, state.run_id, call.id, retry=True, by="soak-operator")
                self.result.reconciled_retry += 1

    # -- one worker process ------------------------------------------------------------

    def _kill_plan(self) -> tuple[str, float]:
        if self.result.kills >= self.target:
            return ("none", 0.0)
        mode = self.rng.choices([m for m, _ in KILL_MODES], [w for _, w in KILL_MODES])[0]
        if mode == "tool":
            return mode, float(self.rng.randint(1, 6))
        if mode == "model":
            return mode, float(self.rng.randint(1, 4))
        if mode == "work":
            return mode, self.rng.uniform(0.0, 0.12)
        return mode, self.rng.uniform(0.0, 0.4)

    async def _cycle(self, runs: list[str]) -> bool:
        """One incarnation on `runs`; True when it was killed."""
        self.result.incarnations += 1
        incarnation = f"{self.label}-i{self.result.incarnations:05d}"
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(WORKER),
            self.spec,
            str(self.ledger_dir),
            incarnation,
            str(self.rng.randrange(1 << 30)),
            ",".join(runs),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
            cwd=str(WORKER.parent),
        )
        assert proc.stdout is not None and proc.stderr is not None
        stderr_task = asyncio.ensure_future(proc.stderr.read())
        mode, arg = self._kill_plan()
        lines: list[str] = []
        try:
            killed = await asyncio.wait_for(self._watch(proc, mode, arg, lines), WORKER_TIMEOUT_S)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGUSR1)  # the worker dumps its stacks (faulthandler), then dies
                await asyncio.sleep(0.5)
                proc.kill()
            await proc.wait()
            stderr = (await stderr_task).decode(errors="replace")[-4000:]
            raise AssertionError(
                f"{incarnation} on {runs} hung or failed; last lines: {lines[-10:]}\nstderr:\n{stderr}"
            ) from None
        lines += (await proc.stdout.read()).decode().splitlines()
        await proc.wait()
        stderr = (await stderr_task).decode(errors="replace")
        # A kill sent just as the worker finished on its own does not count as one.
        killed = killed and proc.returncode == -signal.SIGKILL
        if killed:
            self.result.kills += 1
            self.result.kill_modes[mode] += 1
            self.result.killed.add(incarnation)
            return True
        errors = [line for line in lines if line.startswith(("E ", "X "))]
        if proc.returncode == 3 and errors:
            # A journal error (lost lease, lost race) ended the process at once: a crash, allowed.
            self.result.crashed.add(incarnation)
            self.result.crash_kinds[errors[0].split()[2]] += 1
            return False
        assert proc.returncode == 0, f"{incarnation} exited {proc.returncode}: {errors or lines[-5:]}\n{stderr}"
        assert lines and lines[-1].startswith("done "), f"{incarnation} ended without a report: {lines[-5:]}"
        self.result.clean_exits += 1
        return False

    async def _watch(self, proc: asyncio.subprocess.Process, mode: str, arg: float, lines: list[str]) -> bool:
        """Read the worker's lines; SIGKILL it when the kill mode says so. True if killed."""
        assert proc.stdout is not None
        deadline: float | None = None
        seen = Counter[str]()
        while True:
            timeout = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            try:
                raw = await asyncio.wait_for(proc.stdout.readline(), timeout)
            except TimeoutError:
                return self._kill(proc)
            if not raw:
                return False  # the worker finished (or crashed) before its moment came
            line = raw.decode().rstrip("\n")
            lines.append(line)
            tag = line.split(" ", 1)[0]
            seen[tag] += 1
            if mode == "tool" and tag == "T" and seen["T"] >= arg:
                return self._kill(proc)
            if mode == "model" and tag == "M" and seen["M"] >= arg:
                return self._kill(proc)
            if deadline is None and ((mode == "start" and tag == "ready") or (mode == "work" and tag in ("T", "M"))):
                deadline = time.monotonic() + arg

    @staticmethod
    def _kill(proc: asyncio.subprocess.Process) -> bool:
        try:
            proc.send_signal(signal.SIGKILL)
        except ProcessLookupError:
            return False
        return True


def executions_of(ledger_dir: Path, dead: set[str]) -> list[Execution]:
    """The ledger; a torn last line is allowed only in a process that died."""
    executions, torn = read_ledger(ledger_dir)
    alive_torn = [t for t in torn if t not in dead]
    assert not alive_torn, f"ledger lines torn by processes that did not die: {alive_torn}"
    return executions
