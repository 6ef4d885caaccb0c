"""What the datasource fault tests share: the orders database their fault agent writes to
(`datasource_fault_agent`, told by environment where), and the check that each call landed
exactly once and was never shown to the model as an error."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from datasource_fault_agent import close_all, make

from eudaimon import AgentResponse
from eudaimon.core.events import Event
from eudaimon.datasources import COMPLETIONS_TABLE
from eudaimon.temporal import TemporalEngine
from support.datasource_soaks import call_problems, orders_database

CALLS = 2
"""Insert calls the fault agent's model asks for in each run."""


@pytest.fixture(params=["after_insert", "before_insert"])
async def shop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[str, str]]:
    """The fault agent's orders database (its URL, the table); the parameter says where the
    tool's connection is cut: after its insert or before it."""
    dsn = os.environ.get("EUDAIMON_TEST_PG_DSN")
    if not dsn:
        pytest.skip("EUDAIMON_TEST_PG_DSN is unset")
    with orders_database("eudaimon_dsfault", dsn) as (url, table):
        env = {"FAULT_URL": url, "FAULT_TABLE": table, "FAULT_CALLS": str(CALLS), "FAULT_WHEN": request.param}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        try:
            yield url, table
        finally:
            await close_all()


def check_each_call_landed_once(url: str, table: str, run_id: str, events: list[Any]) -> None:
    """Each call has its one row, its one completion record and a result that is no error."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(f"SELECT run_id, n, call_key FROM {table}").fetchall()
        records = conn.execute(f"SELECT run_id, call_id, idempotency_key FROM {COMPLETIONS_TABLE}").fetchall()
    problems = call_problems({run_id: events}, rows, records, calls=CALLS, tool="insert")
    assert not problems, "\n".join(problems)
    assert len(rows) == len(records) == CALLS
    assert not any(e.data.recovered for e in events if e.type == "tool_completed")


async def prompt_once(engine: TemporalEngine | None, store: str) -> tuple[AgentResponse[Any], list[Event]]:
    """The fault agent's run of two inserts, on the fleet (`engine`) or in this process, and its
    journal as it ended."""
    agent = make(store=store) if engine is None else make(store=store, engine=engine)
    try:
        response = await agent.prompt("two rows")
        return response, await agent.store.load(response.run_id)
    finally:
        await agent.aclose()


def local_journal(tmp_path: Path) -> str:
    """A SQLite journal of the test's own, for a run in this process."""
    return f"sqlite:///{tmp_path / 'journal.db'}"
