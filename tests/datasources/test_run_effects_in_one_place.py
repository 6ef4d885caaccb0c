"""Every effect of a run in one place: `core.run_effects` (pure), `GET /v1/runs/{id}/effects`
and `eudaimon runs effects RUN_ID [--json]` list each call that is not READ with its effect
class, datasource, idempotency key, attempts, outcome, the approval behind it and its result."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from eudaimon import Agent, Datasource, Message, ToolCall, ToolContext, tool
from eudaimon.cli import app
from eudaimon.core.run_effects import EffectOutcome, run_effects
from eudaimon.models import ScriptedModel
from eudaimon.stores import SqliteStore


def _tools() -> list[Any]:
    @tool(effect="read")
    def look(sku: str) -> str:
        """Look."""
        return "in stock"

    @tool(datasource="shop")
    def place(sku: str, ctx: ToolContext) -> str:
        """Place an order."""
        ctx.db.execute("INSERT INTO orders (sku) VALUES (?)", (sku,))
        return f"ordered {sku}"

    @tool(effect="irreversible")
    def wire(amount: int) -> str:
        """Send money."""
        return f"sent {amount}"

    @tool(effect="irreversible")
    def shred(doc: str) -> str:
        """Destroy a document."""
        return "gone"

    return [look, place, wire, shred]


async def _run(tmp_path: Path) -> tuple[SqliteStore, str]:
    with sqlite3.connect(tmp_path / "shop.db") as conn:
        conn.execute("CREATE TABLE orders (sku TEXT)")
    store = SqliteStore(str(tmp_path / "runs.db"))
    calls = Message.assistant(
        tool_calls=[
            ToolCall("c_look", "look", {"sku": "tea"}),
            ToolCall("c_place", "place", {"sku": "tea"}),
            ToolCall("c_wire", "wire", {"amount": 5}),
            ToolCall("c_shred", "shred", {"doc": "x"}),
        ]
    )
    agent = Agent(
        ScriptedModel([calls, "done"]),
        tools=_tools(),
        store=store,
        datasources={"shop": Datasource(f"sqlite:///{tmp_path / 'shop.db'}")},
    )
    paused = await agent.prompt("go")
    await agent.approve(paused.run_id, "c_wire", by="alice", arguments={"amount": 3})
    await agent.approve(paused.run_id, "c_shred", False, by="bob", note="keep it")
    done = await agent.resume(paused.run_id)
    assert done.status == "completed"
    return store, done.run_id


async def test_a_runs_effects_list_every_call_that_is_not_read(tmp_path: Path) -> None:
    store, run_id = await _run(tmp_path)
    rows = {r.call_id: r for r in run_effects(await store.load(run_id))}
    assert set(rows) == {"c_place", "c_wire", "c_shred"}  # the READ call is left out
    place, wire, shred = rows["c_place"], rows["c_wire"], rows["c_shred"]
    assert (place.outcome, place.datasource, place.effect, place.attempts) == (
        EffectOutcome.COMMITTED,
        "shop",
        "write",
        1,
    )
    assert place.idempotency_key and place.result == "ordered tea" and place.started_seq is not None
    assert wire.outcome is EffectOutcome.DONE and wire.effect == "irreversible"
    assert wire.approval is not None and wire.approval.by == "alice" and wire.approval.approved
    assert wire.approval.edited_from == {"amount": 5} and wire.approval.arguments == {"amount": 3}
    assert wire.result == "sent 3"
    assert shred.outcome is EffectOutcome.DENIED and shred.approval is not None and shred.approval.by == "bob"
    await store.close()


async def test_the_api_serves_the_effects(tmp_path: Path) -> None:
    from eudaimon.server import create_app

    store, run_id = await _run(tmp_path)
    agent = Agent(ScriptedModel(["x"]), store=store)
    app = create_app(agent, store, recover=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        answer = await client.get(f"/v1/runs/{run_id}/effects")
    assert answer.status_code == 200
    effects = {e["call_id"]: e for e in answer.json()["effects"]}
    assert effects["c_place"]["outcome"] == "committed" and effects["c_place"]["datasource"] == "shop"
    assert effects["c_wire"]["approval"]["edited_from"] == {"amount": 5}
    assert effects["c_shred"]["outcome"] == "denied"
    await store.close()


def _finished_run(tmp_path: Path) -> tuple[str, str]:
    """The run of `_run`, ended, and its journal's URL, for the CLI to read in this process."""

    async def made() -> str:
        store, run_id = await _run(tmp_path)
        await store.close()
        return run_id

    return asyncio.run(made()), f"sqlite:///{tmp_path / 'runs.db'}"


def test_the_cli_prints_the_effects(tmp_path: Path) -> None:
    run_id, url = _finished_run(tmp_path)
    runner = CliRunner()
    env = {"COLUMNS": "250", "NO_COLOR": "1"}
    as_json = runner.invoke(app, ["runs", "effects", run_id, "--store", url, "--json"], env=env)
    assert as_json.exit_code == 0, as_json.output
    effects = {e["call_id"]: e for e in json.loads(as_json.output)["effects"]}
    assert effects["c_place"]["outcome"] == "committed" and effects["c_wire"]["approval"]["by"] == "alice"
    table = runner.invoke(app, ["runs", "effects", run_id, "--store", url], env=env)
    assert table.exit_code == 0, table.output
    assert "committed in datasource" in table.output and "denied" in table.output and "alice" in table.output


def test_a_call_that_never_started_has_its_tools_effect_from_the_journal_alone(tmp_path: Path) -> None:
    """Invariant: the CLI reads a denied call's effect class from the run's own record of its
    tools (the fingerprint of `run_started`), not "unknown", and a denial reads once ("denied by
    bob: …", not "denied: denied by bob: …")."""
    run_id, url = _finished_run(tmp_path)
    runner = CliRunner()
    env = {"COLUMNS": "250", "NO_COLOR": "1"}
    as_json = runner.invoke(app, ["runs", "effects", run_id, "--store", url, "--json"], env=env)
    effects = {e["call_id"]: e for e in json.loads(as_json.output)["effects"]}
    assert effects["c_shred"]["outcome"] == "denied" and effects["c_shred"]["effect"] == "irreversible"
    table = runner.invoke(app, ["runs", "effects", run_id, "--store", url], env=env)
    assert "denied by bob" in table.output and "denied: denied" not in table.output, table.output
