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

With `stalls` > 0 some workers are STOPPED instead (SIGSTOP, by themselves, at a point a kill
mode names: `stall-intent` right after a WRITE/IRREVERSIBLE intent is committed, `stall-hook`
inside `on_tool_call`, `stall-tool` inside a tool after its ledger line, `stall-model` inside a
model call). The stopped process is left stopped while the lane goes on: the next workers wait
for its leases to lapse, take its runs over, find its calls ambiguous, the operator reconciles
(with `retry=True` every other time), and the retried calls run. Only then does the stopped
process get SIGCONT. It must stop before any further effect: `SoakResult.stall_marks` records
how many ledger lines it had written when it stopped, and any WRITE/IRREVERSIBLE line after
that is an effect a replaced process performed after waking.
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
from _stall_points import is_stopped

from eudaimon.core.errors import RunNotFound
from eudaimon.core.state import RunState, Status
from eudaimon.runtime.process import operations
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores import EventStore

WORKER = Path(__file__).with_name("_soak_worker.py")
WORKER_TIMEOUT_S = 90.0
KILL_MODES = (("tool", 0.45), ("model", 0.2), ("work", 0.25), ("start", 0.1))
STALL_MODES = ("stall-intent", "stall-hook", "stall-tool", "stall-model")
STALL_SHARE = 0.35
"""The share of workers stopped rather than killed while both budgets last."""


LOST_STATUS = 255
"""What asyncio reports for a child whose status another waiter took ("Unknown child process
pid …, will report returncode 255"): with Linux's pid_max of 32,768 a long test session reuses
pids, and a stale waiter of an earlier process with the same pid can reap the worker first."""


def exit_status(returncode: int | None, lines: list[str]) -> int | None:
    """The worker's exit status; a lost one (`LOST_STATUS`) counts as 0 only when the worker's
    last word was its `done` report, which it prints just before it returns from `main`."""
    if returncode == LOST_STATUS and lines and lines[-1].startswith("done "):
        return 0
    return returncode


class WorkerHung(AssertionError):
    """A worker process did not finish within `WORKER_TIMEOUT_S` (or failed without a report)."""


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
    stalls: int = 0
    stall_modes: Counter[str] = field(default_factory=Counter)
    stall_marks: dict[str, int] = field(default_factory=dict)
    """Per stopped incarnation, the ledger lines it had written when it stopped."""
    woken_exits: Counter[str] = field(default_factory=Counter)
    """How the stopped processes ended once woken: `lease-lost`, `conflict`, `clean`."""

    @property
    def dead(self) -> set[str]:
        """Incarnations whose in-flight calls may be ambiguous: killed, crashed, or stopped and
        replaced (a stalled process looks dead to the ones that take its runs over)."""
        return self.killed | self.crashed | set(self.stall_marks)


@dataclass
class _Stopped:
    """A worker stopped by itself, left so while the lane goes on without it."""

    proc: asyncio.subprocess.Process
    incarnation: str
    stderr: asyncio.Future[bytes]
    cycles_left: int
    next_seqs: dict[str, int]
    """Each of its runs' next seq when it stopped. It is woken only once another worker has
    appended to one of them (taken it over): a stopped worker that nobody replaced (its
    successors were all killed before its lease lapsed) rightly takes its lapsed lease back
    when it wakes and goes on, and that is not the attack."""


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
        stalls: int = 0,
    ) -> None:
        self.spec = spec
        self.ledger_dir = workdir / "ledger"
        self.target = kills
        self.stall_target = stalls
        self._stopped: dict[int, _Stopped] = {}
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
        try:
            await self._drive_lane(lane)
        finally:
            stopped = self._stopped.pop(lane, None)
            if stopped is not None and stopped.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    stopped.proc.kill()
                await stopped.proc.wait()

    async def _drive_lane(self, lane: int) -> None:
        runs: list[str] = []
        while True:
            stopped = self._stopped.get(lane)
            if stopped is not None:
                stopped.cycles_left -= 1
                if stopped.cycles_left < 0 and await self._replaced(stopped):
                    await self._wake(lane)
            states = {run: await self._state(run) for run in runs}
            for state in states.values():
                if state is not None and state.status is Status.AWAITING_RECONCILIATION:
                    await self._reconcile(state)
            active = [r for r, s in states.items() if s is None or s.status is not Status.COMPLETED]
            bad = {r: s.status.value for r, s in states.items() if s is not None and s.status.is_terminal}
            bad = {r: v for r, v in bad.items() if v != Status.COMPLETED}
            assert not bad, f"runs ended badly: {bad}"
            if not active:
                if lane in self._stopped:
                    await self._wake(lane)  # its runs are done: now let it wake up
                if self.result.kills >= self.target and self.result.stalls >= self.stall_target:
                    return
                runs = [self._new_run_id(lane) for _ in range(self.runs_per_worker)]
                self.result.runs.extend(runs)
                continue
            killed = await self._cycle(active, lane)
            if killed:
                after = [await self._state(run) for run in active]
                if any(s is not None and s.open_attempt is not None for s in after):
                    self.result.kills_with_open_model_attempt += 1

    def _new_run_id(self, lane: int) -> str:
        self._run_counter += 1
        return f"{self.label}-l{lane}-r{self._run_counter:04d}"

    async def _replaced(self, stopped: _Stopped) -> bool:
        """Whether another worker has appended to a run of `stopped` since it stopped."""
        for run, seq in stopped.next_seqs.items():
            state = await self._state(run)
            if state is not None and state.next_seq > seq:
                return True
        return False

    async def _state(self, run_id: str) -> RunState | None:
        assert self._store is not None
        try:
            return await load_state(self._store, run_id)
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

    def _kill_plan(self, lane: int) -> tuple[str, float]:
        stalls_left = self.result.stalls < self.stall_target and lane not in self._stopped
        if stalls_left and (self.result.kills >= self.target or self.rng.random() < STALL_SHARE):
            # The point that has landed least so far: a planned stop that the run finished before
            # reaching is tried again, so every point is attacked whatever the timing.
            fewest = min(self.result.stall_modes[m] for m in STALL_MODES)
            mode = self.rng.choice([m for m in STALL_MODES if self.result.stall_modes[m] == fewest])
            return mode, float(self.rng.randint(1, 4))
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

    async def _cycle(self, runs: list[str], lane: int) -> bool:
        """One incarnation on `runs`; True when it was killed."""
        self.result.incarnations += 1
        incarnation = f"{self.label}-i{self.result.incarnations:05d}"
        mode, arg = self._kill_plan(lane)
        env = self.env
        if mode.startswith("stall-"):
            env = {**env, "EUDAIMON_SOAK_STOP": f"{mode.removeprefix('stall-')}:{int(arg)}"}
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
            env=env,
            cwd=str(WORKER.parent),
        )
        assert proc.stdout is not None and proc.stderr is not None
        stderr_task = asyncio.ensure_future(proc.stderr.read())
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
            raise WorkerHung(
                f"{incarnation} on {runs} hung or failed; last lines: {lines[-10:]}\nstderr:\n{stderr}"
            ) from None
        if lines and lines[-1].startswith("Z "):  # it stopped itself: leave it so for now
            await self._stall(lane, proc, incarnation, stderr_task, mode, runs)
            return False
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
        status = exit_status(proc.returncode, lines)
        assert status == 0, f"{incarnation} exited {status}: {errors or lines[-5:]}\n{stderr}"
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
            if tag == "Z":
                return False  # the worker stopped itself (a stall mode): the caller takes over
            seen[tag] += 1
            if mode == "tool" and tag == "T" and seen["T"] >= arg:
                return self._kill(proc)
            if mode == "model" and tag == "M" and seen["M"] >= arg:
                return self._kill(proc)
            if deadline is None and ((mode == "start" and tag == "ready") or (mode == "work" and tag in ("T", "M"))):
                deadline = time.monotonic() + arg

    async def _stall(
        self,
        lane: int,
        proc: asyncio.subprocess.Process,
        incarnation: str,
        stderr: asyncio.Future[bytes],
        mode: str,
        runs: list[str],
    ) -> None:
        for _ in range(1000):
            if is_stopped(proc.pid):
                break
            await asyncio.sleep(0.01)
        assert is_stopped(proc.pid), f"{incarnation} said it stopped, but it runs"
        ledger = self.ledger_dir / f"{incarnation}.jsonl"
        written = ledger.read_text().count("\n") if ledger.exists() else 0
        self.result.stall_marks[incarnation] = written
        self.result.stalls += 1
        self.result.stall_modes[mode] += 1
        # Left stopped for one to three more workers of the lane, and until one of them has taken
        # a run of it over: its runs are taken over, reconciled and retried meanwhile.
        next_seqs = {run: state.next_seq if (state := await self._state(run)) is not None else 0 for run in runs}
        self._stopped[lane] = _Stopped(proc, incarnation, stderr, self.rng.randint(1, 3), next_seqs)

    async def _wake(self, lane: int) -> None:
        """SIGCONT the lane's stopped worker and wait for it to end: it must stop at its next
        commit or effect, with a journal error (exit 3), or finish with nothing left to do."""
        stopped = self._stopped.pop(lane)
        proc = stopped.proc
        assert proc.stdout is not None
        proc.send_signal(signal.SIGCONT)
        try:
            out = await asyncio.wait_for(proc.stdout.read(), WORKER_TIMEOUT_S)
            await asyncio.wait_for(proc.wait(), WORKER_TIMEOUT_S)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGUSR1)
                await asyncio.sleep(0.5)
                proc.kill()
            await proc.wait()
            stderr = (await stopped.stderr).decode(errors="replace")[-4000:]
            raise WorkerHung(f"{stopped.incarnation} hung after SIGCONT\nstderr:\n{stderr}") from None
        lines = out.decode().splitlines()
        errors = [line for line in lines if line.startswith("E ")]
        if proc.returncode == 3 and errors:
            kind = errors[0].split()[2]
            self.result.woken_exits["lease-lost" if kind == "LeaseLost" else kind] += 1
            return
        stderr = (await stopped.stderr).decode(errors="replace")[-4000:]
        status = exit_status(proc.returncode, lines)
        assert status == 0, f"{stopped.incarnation} exited {status} after SIGCONT: {lines[-5:]}\n{stderr}"
        self.result.woken_exits["clean"] += 1

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
