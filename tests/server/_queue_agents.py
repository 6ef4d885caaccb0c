"""Agents for the queueing tests (`--agent _queue_agents:NAME`), on models that wait for a gate.

- `gated` writes `begin INPUT` to `$QUEUE_TEST_LOG` when its run's model is first called, then
  waits until the file `$QUEUE_TEST_GATE` exists (an event the test controls, not a timing),
  writes `end INPUT` and answers `done: INPUT`. A run of it holds its thread until the gate
  opens, so the runs started after it on that thread queue behind it.
- `quick` answers at once, for many starts.
- `guarded` is `quick` behind an input guardrail that refuses "password:" and redacts card
  numbers: what a run journals is the input as the guardrail let it through.

With `$QUEUE_TEST_PG_SCHEMA` set both agents journal to that schema of the test PostgreSQL
(so a test has a database of its own); otherwise to the server's `--store`.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from eudaimon import Agent
from eudaimon.core.messages import Role
from eudaimon.guardrails import RegexFilterGuardrail
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores.base import EventStore

GATE = Path(os.environ.get("QUEUE_TEST_GATE", "/nonexistent/gate"))
LOG = Path(os.environ.get("QUEUE_TEST_LOG", os.devnull))
DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


def _store() -> EventStore | None:
    schema = os.environ.get("QUEUE_TEST_PG_SCHEMA")
    if not schema:
        return None
    from eudaimon.stores.postgres import PostgresStore

    return PostgresStore(DSN, schema=schema)


def _input(request: ChatRequest) -> str:
    return [m for m in request.messages if m.role is Role.USER][-1].content


def _note(line: str) -> None:
    with LOG.open("a") as log:
        log.write(line + "\n")


async def _gated(request: ChatRequest) -> str:
    said = _input(request)
    _note(f"begin {said}")
    while not GATE.exists():
        await asyncio.sleep(0.02)
    _note(f"end {said}")
    history = [m.content for m in request.messages if m.role is Role.USER][:-1]
    return f"done: {said} (after {len(history)} earlier turn(s))"


def _quick(request: ChatRequest) -> str:
    said = _input(request)
    _note(f"begin {said}")
    _note(f"end {said}")
    return f"done: {said}"


STORE = _store()
gated = Agent(FunctionModel(_gated, "gated-model"), name="gated", store=STORE)
quick = Agent(FunctionModel(_quick, "quick-model"), name="quick", store=STORE)
GUARD = RegexFilterGuardrail().block(r"password:", "a credential").redact(r"\b\d{16}\b", "[CARD]")
guarded = Agent(FunctionModel(_quick, "quick-model"), name="guarded", store=STORE, input_guardrails=[GUARD])
