"""`eudaimon replay`: a batch of recorded runs, replayed by a changed agent from the command line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import _replay_agents
from _replay_agents import COUNTER, support
from typer.testing import CliRunner

from eudaimon.cli.app import app
from eudaimon.stores import index
from eudaimon.stores.sqlite import SqliteStore


async def _record(path: Path, runs: int) -> list[str]:
    store = SqliteStore(path)
    try:
        agent = support(store, COUNTER)
        return [(await agent.prompt(f"refund order {n}")).run_id for n in range(1, runs + 1)]
    finally:
        await store.close()


async def _listed(path: Path, query: index.RunQuery) -> list[str]:
    store = SqliteStore(path)
    try:
        return [row.run_id for row in await index.query_runs(store, query)]
    finally:
        await store.close()


def test_a_batch_of_50_recorded_runs_is_replayed_with_an_evaluator(tmp_path: Path, monkeypatch: object) -> None:
    """Invariant: 50 runs picked with --where, replayed by v2 (which would refund 10, not 5):
    each diverges at step 2 and is scored by the evaluator; the batch prints a table, writes its
    JSON, and no tool ran (the ledger holds the originals' 50 refunds). The replays are kept
    out of the listing unless asked for, by original or by version."""
    db = tmp_path / "runs.db"
    originals = asyncio.run(_record(db, 50))
    ran = dict(COUNTER.executions)
    assert ran["refund"] >= 50
    result = CliRunner().invoke(
        app,
        [
            "replay",
            "--where",
            "agent=support,q=refund",
            "--limit",
            "50",
            "--agent",
            "_replay_agents:generous",
            "--evaluator",
            "_replay_agents:same_answer",
            "--store",
            f"sqlite:///{db}",
            "--out",
            str(tmp_path / "replays.json"),
        ],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert COUNTER.executions == ran  # not one tool ran again
    assert "50 replays: 0 completed, 50 stopped (diverged)" in result.output
    body = json.loads((tmp_path / "replays.json").read_text())
    assert {r["of"] for r in body["replays"]} == set(originals)
    assert all(r["status"] == "diverged" and r["diverged_at"] == 2 for r in body["replays"])
    assert all(r["scores"] == {"same_answer": False} for r in body["replays"])
    assert all(r["would_call"][0]["arguments"]["amount"] == 10 for r in body["replays"])
    assert body["summary"]["served"] == 50 and body["summary"]["live_reads"] == 0

    listed = asyncio.run(_listed(db, index.RunQuery(limit=500)))
    assert sorted(listed) == sorted(originals)  # replays are left out of listings
    first = body["replays"][0]
    assert asyncio.run(_listed(db, index.RunQuery(replay_of=first["of"]))) == [first["run_id"]]
    assert len(asyncio.run(_listed(db, index.RunQuery(limit=500, version="v2")))) == 0  # hidden by default
    assert len(asyncio.run(_listed(db, index.RunQuery(limit=500, version="v2", replays=True)))) == 50
    assert _replay_agents.COUNTER is COUNTER
    listing = CliRunner().invoke(
        app, ["runs", "list", "--replay-of", first["of"], "--store", f"sqlite:///{db}"], env={"COLUMNS": "200"}
    )
    assert listing.exit_code == 0 and first["run_id"] in listing.output and first["of"] not in listing.output


def test_a_batch_of_one_reads_in_the_singular(tmp_path: Path) -> None:
    """Invariant: the summary of one replay says "1 replay" and "1 call served", not "1 replays"."""
    db = tmp_path / "runs.db"
    (original,) = asyncio.run(_record(db, 1))
    result = CliRunner().invoke(
        app,
        ["replay", original, "--agent", "_replay_agents:generous", "--store", f"sqlite:///{db}"],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "1 replay: 0 completed, 1 stopped (diverged)" in result.output
    assert "1 call served from the journal, 0 live reads" in result.output
