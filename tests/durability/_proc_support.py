"""Shared by the multi-process durability tests and the worker processes they start.

- The LEDGER is the outside world: every tool execution appends one JSON line (tool, call id,
  idempotency key, attempt, pid, incarnation, fencing token) to a file of its own process, opened O_APPEND and
  fsync'ed, BEFORE the tool returns. It never goes through eudaimon, so it shows what really
  ran, whatever the journal says. One file per worker process means a SIGKILL can tear at most
  the last line of that process's file, and a torn line is read as "may have run".
- Four tools cover the effect classes: `look` (READ), `put` (WRITE, idempotent), `write` (WRITE)
  and `send` (IRREVERSIBLE, allowed by the approval policy in the soak).
- The model is a `FunctionModel` whose answer is a pure function of the request: it asks for
  the batches of tool calls the run's plan (derived from its run id) lists, one batch per
  step, then answers with the number of tool results it saw. A re-issued model attempt
  therefore asks for the very same calls, with the very same call ids.
- Stores are named by a spec string the workers receive on their command line:
  `sqlite:///abs/path.db`, or `postgresql://…#schema=NAME` (one schema per test).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eudaimon import Agent, Message, ToolCall, ToolContext, ToolPolicy, tool
from eudaimon.core.events import Event
from eudaimon.core.messages import Role
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores import EventStore
from eudaimon.stores.base import Fence, Snapshot

DEFAULT_PG_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
KINDS = ("look", "put", "write", "send")
RERUNNABLE = frozenset({"look", "put"})
"""READ and idempotent WRITE: recovery may run them again (same key, next attempt)."""
READ_ONLY = frozenset({"look"})
"""READ: a batch of only these runs before its intents are committed (one commit per step), so
a process that died before that commit may have run them with no intent in the journal."""


# -- stores ----------------------------------------------------------------------------------


def pg_dsn() -> str:
    return os.environ.get("EUDAIMON_TEST_PG_DSN", DEFAULT_PG_DSN)


@contextlib.contextmanager
def scratch_pg_schema(label: str) -> Iterator[str]:
    """The spec of a PostgreSQL schema nobody uses yet; the schema is dropped afterwards."""
    import psycopg

    name = f"eudaimon_test_{label}_{uuid.uuid4().hex[:12]}"
    try:
        yield f"{pg_dsn()}#schema={name}"
    finally:
        with contextlib.suppress(psycopg.OperationalError), psycopg.connect(pg_dsn(), autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def open_store(spec: str) -> EventStore:
    """The store a spec names: `sqlite:///path.db` or `postgresql://…#schema=NAME`."""
    if spec.startswith("sqlite:///"):
        from eudaimon.stores.sqlite import SqliteStore

        return SqliteStore(spec[len("sqlite:///") :])
    if spec.startswith(("postgresql://", "postgres://")):
        from eudaimon.stores.postgres import PostgresStore

        dsn, _, fragment = spec.partition("#")
        options = dict(part.split("=", 1) for part in fragment.split("&") if part)
        return PostgresStore(dsn, **options)  # type: ignore[arg-type]
    raise ValueError(f"unknown store spec {spec!r}")


# -- the ledger ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Execution:
    """One line of the ledger: a tool really ran (at least up to writing this line)."""

    run: str
    call: str
    tool: str
    key: str
    attempt: int
    pid: int
    incarnation: str
    token: int = 0
    """The call's `ToolContext.fencing_token`."""


class LedgerWriter:
    """Appends executions to `<dir>/<incarnation>.jsonl`: one write() and one fsync per line."""

    def __init__(self, directory: Path, incarnation: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.incarnation = incarnation
        self._fd = os.open(directory / f"{incarnation}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def record(self, tool_name: str, ctx: ToolContext) -> None:
        line = json.dumps(
            {
                "run": ctx.run_id,
                "call": ctx.call_id,
                "tool": tool_name,
                "key": ctx.idempotency_key,
                "attempt": ctx.attempt,
                "pid": os.getpid(),
                "incarnation": self.incarnation,
                "token": ctx.fencing_token,
            },
            separators=(",", ":"),
        )
        os.write(self._fd, (line + "\n").encode())
        os.fsync(self._fd)


def read_ledger(directory: Path) -> tuple[list[Execution], list[str]]:
    """Every execution recorded, and the incarnations whose last line is torn.

    A torn line can only be the last one of its file (one process per file, appends only);
    anything else unreadable is a broken ledger and raises.
    """
    executions: list[Execution] = []
    torn: list[str] = []
    if not directory.exists():
        return executions, torn
    for path in sorted(directory.glob("*.jsonl")):
        text = path.read_text()
        lines = text.split("\n")
        for index, line in enumerate(lines):
            if not line:
                continue
            is_tail = index == len(lines) - 1  # no newline after it: the write may have been cut
            try:
                row = json.loads(line)
            except ValueError:
                if is_tail:
                    torn.append(path.stem)
                    continue
                raise AssertionError(f"ledger {path} line {index + 1} is unreadable: {line!r}") from None
            if is_tail:
                torn.append(path.stem)
                continue
            executions.append(Execution(**row))
    return executions, torn


class CommitLog:
    """An `EventStore` that writes, after each append the store committed, one line to
    `<dir>/<incarnation>.commits.jsonl`: the types of the events committed together. It shows
    the journal's commit boundaries, which the events themselves do not carry."""

    def __init__(self, store: EventStore, directory: Path, incarnation: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._store = store
        self._fd = os.open(directory / f"{incarnation}.commits.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    async def append(
        self,
        run_id: str,
        expected_seq: int,
        events: Sequence[Event],
        snapshot: Snapshot | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        await self._store.append(run_id, expected_seq, events, snapshot, fence=fence)
        os.write(self._fd, (json.dumps([e.type for e in events]) + "\n").encode())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def read_commits(directory: Path, incarnation: str) -> list[list[str]]:
    """The batches `CommitLog` saw one process commit, in order."""
    path = directory / f"{incarnation}.commits.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# -- tools, model, agent ----------------------------------------------------------------------

Emit = Callable[..., None]


def stdout_emit(*parts: object) -> None:
    """One line on stdout for the parent, which may SIGKILL us on seeing it."""
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


def _quiet(*parts: object) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Timing:
    """Random sleeps (seconds) that widen the windows a kill may land in."""

    before_ledger: tuple[float, float] = (0.0, 0.003)
    """Between the committed `tool_started` and the ledger line: a kill here means "never ran"."""
    after_ledger: tuple[float, float] = (0.002, 0.02)
    """Between the ledger line and the tool's return: a kill here means "ran, outcome unknown"."""
    model: tuple[float, float] = (0.001, 0.008)
    """Inside the model call, after `model_attempt_started` was committed."""


def build_tools(
    ledger: LedgerWriter,
    rng: random.Random,
    timing: Timing,
    emit: Emit = _quiet,
    *,
    stall: dict[str, float] | None = None,
    after_ledger: Callable[[str], None] | None = None,
) -> list[Any]:
    """The four tools. `stall` maps a tool name to seconds it BLOCKS the event loop after its
    ledger line (a GC pause, an overloaded host): the process's lease cannot be renewed meanwhile.
    `after_ledger(tool)` runs right after each ledger line (the SIGSTOP soak stops there)."""

    async def run_tool(name: str, n: int, ctx: ToolContext) -> str:
        delay = rng.uniform(*timing.before_ledger)
        if delay:  # no await at all when there is no delay: the ledger line follows the call at once
            await asyncio.sleep(delay)
        ledger.record(name, ctx)
        emit("T", ctx.run_id, ctx.call_id, ctx.attempt, name)
        if after_ledger is not None:
            after_ledger(name)
        if stall and name in stall:
            time.sleep(stall[name])
        await asyncio.sleep(rng.uniform(*timing.after_ledger))
        return f"{name}#{n} ok"

    @tool(effect="read")
    async def look(n: int, ctx: ToolContext) -> str:
        """Read something."""
        return await run_tool("look", n, ctx)

    @tool(effect="write", idempotent=True)
    async def put(n: int, ctx: ToolContext) -> str:
        """An idempotent write (an upsert keyed by the idempotency key)."""
        return await run_tool("put", n, ctx)

    @tool(effect="write")
    async def write(n: int, ctx: ToolContext) -> str:
        """A write that must not happen twice."""
        return await run_tool("write", n, ctx)

    @tool(effect="irreversible")
    async def send(n: int, ctx: ToolContext) -> str:
        """Something that cannot be undone."""
        return await run_tool("send", n, ctx)

    return [look, put, write, send]


def plan_for(run_id: str) -> list[list[str]]:
    """The batches of tool calls a run's model asks for: 2 to 4 batches of 1 to 4 calls.

    Derived from the run id alone, so every process (and the checks) agree on it.
    """
    rng = random.Random(f"plan:{run_id}")
    return [[rng.choice(KINDS) for _ in range(rng.randint(1, 4))] for _ in range(rng.randint(2, 4))]


def call_id(batch: int, index: int, kind: str) -> str:
    return f"b{batch}c{index}_{kind}"


def run_of(request: ChatRequest) -> str:
    first_user = next(m for m in request.messages if m.role is Role.USER)
    return first_user.content.split()[-1]


def plan_model(
    rng: random.Random,
    timing: Timing,
    emit: Emit = _quiet,
    plan: Callable[[str], Any] = plan_for,
    on_call: Callable[[], None] | None = None,
) -> Any:
    """The model: the next batch of the run's plan until every batch has results, then an answer.
    `on_call()` runs as each call begins (the SIGSTOP soak stops there)."""

    async def answer(request: ChatRequest) -> Message | str:
        run_id = run_of(request)
        emit("M", run_id)
        if on_call is not None:
            on_call()
        await asyncio.sleep(rng.uniform(*timing.model))
        batches: Sequence[Sequence[str]] = plan(run_id)
        asked = sum(1 for m in request.messages if m.role is Role.ASSISTANT and m.tool_calls)
        results = sum(1 for m in request.messages if m.role is Role.TOOL)
        if asked < len(batches):
            batch = batches[asked]
            return Message.assistant(
                tool_calls=[ToolCall(call_id(asked, i, kind), kind, {"n": i}) for i, kind in enumerate(batch)]
            )
        return f"done with {results} tool results"

    return FunctionModel(answer, model_id="plan")


def allow_all(call: ToolCall, tool: Any) -> ToolPolicy:
    return ToolPolicy.ALLOW


def build_agent(
    store: EventStore, tools: list[Any], model: Any, *, allow_irreversible: bool, hooks: Any = None
) -> Agent:
    return Agent(
        model,
        tools=tools,
        store=store,
        name="proc-test",
        max_iterations=12,
        approval_policy=allow_all if allow_irreversible else None,
        hooks=hooks,
    )


def expected_answer(run_id: str, plan: Callable[[str], Any] = plan_for) -> str:
    return f"done with {sum(len(b) for b in plan(run_id))} tool results"


def worker_env(lease_ttl_s: float) -> dict[str, str]:
    """The environment of a worker: this one, a short lease, and `src` importable."""
    env = dict(os.environ)
    env["EUDAIMON_LEASE_TTL_S"] = str(lease_ttl_s)
    env["PYTHONUNBUFFERED"] = "1"
    return env
