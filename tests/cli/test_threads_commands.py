"""`eudaimon threads list|show` read conversations back from the journal alone."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cli_support import Invoke

from eudaimon import Agent
from eudaimon.core.messages import Message, Usage
from eudaimon.models import ChatResponse, ScriptedModel
from eudaimon.stores.sqlite import SqliteStore


def _two_turns(db_path: Path) -> None:
    async def write() -> None:
        store = SqliteStore(db_path)
        script = [ChatResponse(Message.assistant(t), usage=Usage(10, 3)) for t in ("hi", "again", "other")]
        agent = Agent(ScriptedModel(script), store=store, name="chat")
        await agent.prompt("one", thread_id="support-42")
        await agent.prompt("two", thread_id="support-42")
        await agent.prompt("three", thread_id="sales-7")
        await store.close()

    asyncio.run(write())


def test_threads_list_shows_each_thread_with_its_runs(cli: Invoke, store_url: str, db_path: Path) -> None:
    """Invariant: every thread that has runs is listed with its run count."""
    _two_turns(db_path)
    result = cli("threads", "list", "--store", store_url)
    assert result.exit_code == 0, result.output
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in result.output.splitlines() if "│" in line]
    counts = {row[0]: row[2:4] for row in rows}
    assert counts == {"support-42": ["2", "2"], "sales-7": ["1", "1"]}


def test_threads_show_prints_the_snapshot(cli: Invoke, store_url: str, db_path: Path) -> None:
    """Invariant: `threads show` prints the thread snapshot derived from its runs."""
    _two_turns(db_path)
    result = cli("threads", "show", "support-42", "--store", store_url)
    assert result.exit_code == 0, result.output
    assert "turns 2" in result.output and "tokens in 20 / out 6" in result.output
    assert "cost unpriced" in result.output


def test_an_unknown_thread_is_a_clear_error(cli: Invoke, store_url: str, db_path: Path) -> None:
    """Invariant: a thread id that has no runs exits 1 with a one-line message, no traceback."""
    _two_turns(db_path)
    result = cli("threads", "show", "nope", "--store", store_url)
    assert result.exit_code == 1
    assert "no thread 'nope'" in result.output and "Traceback" not in result.output
