"""The CLI reads a run's state through the path `agent.state()` takes (`load_state`: the
latest snapshot of the current fold, then the events after it), so the two never disagree."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

from cli_support import Invoke

from eudaimon import Agent
from eudaimon.core.codec import state_to_json
from eudaimon.models import ScriptedModel
from eudaimon.stores.base import Snapshot
from eudaimon.stores.sqlite import SqliteStore


def test_runs_state_show_and_list_read_the_snapshot_agent_state_reads(cli: Invoke, db_path: Path) -> None:
    """Bug: the CLI folded raw events itself, a second path beside `agent.state()`. A snapshot
    that is marked (its step count set to 42) shows the CLI takes the same path: `runs state`
    and `runs show` report what `agent.state()` reports. `runs list` reads the store's run index
    (kept with the journal, never from a snapshot): the journal's own step count."""

    async def setup() -> tuple[str, int]:
        store = SqliteStore(str(db_path))
        agent = Agent(ScriptedModel(["hello"]), store=store, memory=None)
        run_id = (await agent.prompt("hi")).run_id
        state = await agent.state(run_id)
        marked = replace(state, steps=42)
        await store.save_snapshot(Snapshot(f"run:{run_id}", state.next_seq - 1, state_to_json(marked)))
        seen = (await agent.state(run_id)).steps
        await store.close()
        return run_id, seen

    run_id, seen_by_agent = asyncio.run(setup())
    assert seen_by_agent == 42
    url = f"sqlite:///{db_path}"
    state = cli("runs", "state", run_id, "--json", "--store", url)
    assert state.exit_code == 0, state.output
    assert json.loads(state.output)["steps"] == seen_by_agent
    shown = cli("runs", "show", run_id, "--store", url)
    assert shown.exit_code == 0, shown.output
    assert any("steps" in line and "42" in line for line in shown.output.splitlines()), shown.output
    listed = cli("runs", "list", "--store", url)
    assert listed.exit_code == 0, listed.output
    row = next(line for line in listed.output.splitlines() if run_id[:20] in line)
    assert " 42 " not in row and " 1 " in row, row
