"""`eudaimon demo`: a crash, a recovery and an approval, each in a process of its own.

1. A worker process starts the run; in the middle of `lookup_order` the demo kills it with
   SIGKILL. 2. A new worker resumes from the journal: `open_case`, which had completed, is not
   run again; `lookup_order`, a READ, runs again with the same idempotency key. The run then
   asks for a human's approval of a refund over the limit. 3. The demo asks (a prompt on a
   terminal; `--approve`/`--deny` for scripts), journals the decision, and a third worker
   finishes the run. Then the timeline, read from the journal, and the commands to inspect it.

The workers get a lease TTL of three seconds, so a resume waits at most that long for the
killed worker's lease to lapse (the default, 30 s, is for production).
"""

from __future__ import annotations

import asyncio
import codecs
import getpass
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from rich.console import Console
from rich.prompt import Confirm
from rich.text import Text

from eudaimon.cli._common import fail, fold, load_events, make_default_directory, with_store
from eudaimon.cli._escape import shown
from eudaimon.cli.demo import _show
from eudaimon.cli.demo._agent import CRASH_ENV, LEDGER_ENV, REFUND_LIMIT_USD, demo_agent, read_ledger
from eudaimon.core.events import ApprovalRequested, Event
from eudaimon.core.state import Status
from eudaimon.runtime.process import operations
from eudaimon.stores.base import EventStore

CRASH_TOOL = "lookup_order"
WORKER_TIMEOUT_S = 120.0


def play(url: str, pace_s: float, decision: bool | None, console: Console) -> Status:
    """Play the whole demo on the journal `url`; return the status the run ends in."""
    if url.startswith("memory:"):
        fail(
            "the demo's worker processes share the run through its journal, and memory: lives in one "
            "process; give a file (--store sqlite:///demo.db) or PostgreSQL"
        )
    make_default_directory(url)
    _open(url)  # here first: a journal that cannot be opened is one line, not a worker's traceback
    run_id = f"demo-{secrets.token_hex(4)}"
    command = _show.eudaimon_command()
    tools = list(demo_agent().tools.values())
    with tempfile.TemporaryDirectory(prefix="eudaimon-demo-") as scratch:
        ledger = Path(scratch) / "executions.jsonl"
        env = {**os.environ, LEDGER_ENV: str(ledger), "EUDAIMON_LEASE_TTL_S": "3"}
        _show.header(console, url, run_id, tools)

        _show.act(console, 1, "A worker process starts the run, and is killed in the middle of a tool")
        worker = _Worker(url, run_id, "start", pace_s, {**env, CRASH_ENV: CRASH_TOOL})
        worker.wait_for_tool(ledger, CRASH_TOOL)
        _show.kill_report(console, worker.process.pid, worker.kill(), CRASH_TOOL)
        _show.after_crash(console, _events(url, run_id))

        _show.act(console, 2, "A new worker process resumes the run from the journal")
        _Worker(url, run_id, "resume", pace_s, env).finish()
        events = _events(url, run_id)
        console.print()
        console.print(_show.proof_table(events, read_ledger(ledger), tools))
        _show.verdicts(console, events, read_ledger(ledger))

        _show.act(console, 3, f"A refund over ${REFUND_LIMIT_USD:.0f} waits for a human")
        state = fold(events)
        if state.status is Status.AWAITING_APPROVAL:
            [call] = state.awaiting_approval()
            asked = next(e.data for e in reversed(events) if isinstance(e.data, ApprovalRequested))
            _show.approval_panel(console, call.id, call.name, call.arguments, asked.reason)
            verdict = _ask(console, decision)
            if verdict is None:
                _show.undecided(console, command, run_id, call.id, url, terminal=_interactive())
            else:
                approved, by = verdict
                _decide(url, run_id, call.id, approved, by)
                word = "approved" if approved else "denied"
                console.print(shown(f"  {word} by {by}; a third worker process continues the run", "bold"))
                _Worker(url, run_id, "resume", pace_s, env).finish()
                events = _events(url, run_id)

    _show.act(console, 4, "The timeline, read back from the journal")
    state = fold(events)
    _show.timeline(console, events, state)
    _show.inspect_hint(console, command, run_id, url)
    return state.status


class _Worker:
    """A worker process whose output is copied, as it comes, to this process's `sys.stdout`
    (which need not be a file descriptor: under a test runner it is a buffer)."""

    def __init__(self, url: str, run_id: str, mode: str, pace_s: float, env: dict[str, str]) -> None:
        argv = [sys.executable, "-m", "eudaimon.cli.demo._worker", url, run_id, mode, repr(pace_s)]
        if sys.stdout.isatty():  # the worker writes to a pipe, but for this terminal
            env = {**env, "FORCE_COLOR": "1", "COLUMNS": str(shutil.get_terminal_size().columns)}
        sys.stdout.flush()
        self.process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self._pump = threading.Thread(target=self._copy, daemon=True)
        self._pump.start()

    def _copy(self) -> None:
        assert self.process.stdout is not None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := os.read(self.process.stdout.fileno(), 65536):
            sys.stdout.write(decoder.decode(chunk))
            sys.stdout.flush()

    def wait(self, timeout_s: float = WORKER_TIMEOUT_S) -> int:
        """The exit code, once the process ended and all it wrote was copied."""
        try:
            code = self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            fail(f"the demo's worker did not finish within {timeout_s:.0f} s")
        self._pump.join()
        assert self.process.stdout is not None
        self.process.stdout.close()
        return code

    def wait_for_tool(self, ledger: Path, tool: str) -> None:
        """Until the worker is inside `tool` (the tool recorded its execution, then stalls)."""
        deadline = time.monotonic() + WORKER_TIMEOUT_S
        while not any(row["tool"] == tool for row in read_ledger(ledger)):
            if self.process.poll() is not None:
                fail(f"the demo's worker exited (code {self.wait()}) before it reached {tool}")
            if time.monotonic() > deadline:
                self.process.kill()
                fail(f"the demo's worker did not reach {tool} within {WORKER_TIMEOUT_S:.0f} s")
            time.sleep(0.02)

    def kill(self) -> int:
        os.kill(self.process.pid, signal.SIGKILL)
        return self.wait()

    def finish(self) -> None:
        if (code := self.wait()) != 0:
            fail(f"the demo's worker failed (exit code {code}); its error is printed above")


def _ask(console: Console, decision: bool | None) -> tuple[bool, str] | None:
    """The decision and who made it: the flag, else the person at the terminal, else None."""
    if decision is not None:
        return decision, "eudaimon demo " + ("--approve" if decision else "--deny")
    if not _interactive():
        return None
    try:
        approved = Confirm.ask(Text("Approve this refund?", style="bold"), console=console)
    except (EOFError, KeyboardInterrupt):  # no answer: the run waits, as it would for anyone
        console.print()
        return None
    try:
        return approved, getpass.getuser()
    except (OSError, KeyError):  # no login name (a container without a passwd entry)
        return approved, "the terminal"


def _interactive() -> bool:
    """A person can see the question and answer it: stdin and stdout are both a terminal (a
    script that sends the output to a file gets no prompt it cannot see, and never hangs)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def _events(url: str, run_id: str) -> list[Event]:
    async def read(store: EventStore) -> list[Event]:
        return await load_events(store, run_id)

    return asyncio.run(with_store(url, read))


def _open(url: str) -> None:
    async def touch(store: EventStore) -> None:
        await store.list_runs(limit=1)  # opens (or creates) the journal, as a writer would

    asyncio.run(with_store(url, touch))


def _decide(url: str, run_id: str, call_id: str, approved: bool, by: str) -> None:
    async def write(store: EventStore) -> None:
        note = "decided in eudaimon demo"
        await operations.approve(store, run_id, call_id, approved, by=by, note=note)

    asyncio.run(with_store(url, write))
