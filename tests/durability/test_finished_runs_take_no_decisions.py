"""A finished run takes no more events: `reconcile` and `approve` on it are refused.

Bug: a run cancelled while a WRITE was in flight (its outcome unknown) accepted `reconcile`,
which appended after the terminal `run_cancelled`; `gc`, which deletes runs whose last event
is terminal, then never deleted it.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eudaimon import Agent, CancellationToken, Message, ToolCall, tool
from eudaimon.cli import app
from eudaimon.core.errors import InvalidOperation
from eudaimon.models import ScriptedModel
from eudaimon.runtime.process import operations
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.sqlite import SqliteStore


async def _cancelled_with_an_unknown_write(store: SqliteStore) -> str:
    cancel = CancellationToken()

    @tool(effect="write")
    async def write() -> str:
        """A write that hangs until the run is cancelled."""
        await asyncio.sleep(30)
        return "written"

    @tool(effect="read")
    async def look() -> str:
        """A read that cancels the run while the write is in flight."""
        cancel.cancel("operator stop")
        return "looked"

    model = ScriptedModel([Message.assistant(tool_calls=[ToolCall("w", "write", {}), ToolCall("l", "look", {})])])
    agent = Agent(model, tools=[write, look], store=store)
    with pytest.raises(Exception, match="cancelled"):
        await agent.prompt("go", cancel=cancel)
    [summary] = await store.list_runs()
    state = await load_state(store, summary.run_id)
    assert state.status == "cancelled" and [c.id for c in state.unknown_outcomes()] == ["w"]
    return summary.run_id


async def test_reconciling_a_cancelled_run_is_refused_and_gc_still_deletes_it(tmp_path: Path) -> None:
    """Invariant: `reconcile` (either way) and `approve` on a finished run raise
    `InvalidOperation` saying the run is finished, append nothing, and `gc` deletes the run."""
    store = SqliteStore(tmp_path / "runs.db")
    try:
        run_id = await _cancelled_with_an_unknown_write(store)
        before = len(await store.load(run_id))
        with pytest.raises(InvalidOperation, match="is cancelled: a finished run takes no more decisions"):
            await operations.reconcile(store, run_id, "w", retry=True, by="ops")
        with pytest.raises(InvalidOperation, match="finished run"):
            await operations.reconcile(store, run_id, "w", output="it ran", by="ops")
        with pytest.raises(InvalidOperation, match="finished run"):
            await operations.approve(store, run_id, "w", True, by="ops")
        assert len(await store.load(run_id)) == before
        assert await operations.gc(store, timedelta(0)) == [run_id]
    finally:
        await store.close()


def test_the_cli_refuses_to_reconcile_a_finished_run_in_one_line(tmp_path: Path) -> None:
    """Invariant: `eudaimon runs reconcile` on a cancelled run exits 1 with one line that names
    the run and says it is finished, and no traceback."""
    path = tmp_path / "runs.db"

    async def make() -> str:
        store = SqliteStore(path)
        try:
            return await _cancelled_with_an_unknown_write(store)
        finally:
            await store.close()

    run_id = asyncio.run(make())
    result = CliRunner().invoke(app, ["runs", "reconcile", run_id, "w", "--retry", "--store", f"sqlite:///{path}"])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert run_id in lines[0] and "finished run" in lines[0]
    assert "Traceback" not in result.output
