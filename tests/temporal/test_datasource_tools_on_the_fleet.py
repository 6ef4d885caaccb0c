"""A datasource tool on a Temporal fleet: the worker's `eudaimon.tool` activity opens the
transaction, the tool writes through `ctx.db`, and the worker commits it with the call's
completion record; the workflow journals `tool_completed` naming the datasource."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from datasource_agent import make_shop
from temporalio.client import Client

from eudaimon.datasources import COMPLETIONS_TABLE
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker


async def test_a_datasource_tool_commits_on_the_worker(
    client: Client,
    temporal_target: str,
    task_queue: str,
    store_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shop = tmp_path / "shop.db"
    with sqlite3.connect(shop) as conn:
        conn.execute("CREATE TABLE orders (sku TEXT, call_key TEXT)")
    monkeypatch.setenv("SHOP_URL", f"sqlite:///{shop}")
    monkeypatch.setenv("SHOP_TABLE", "orders")
    store = open_store(store_url)
    worker_agent = make_shop(store=store)
    worker = create_worker(
        client, task_queue=task_queue, agent=worker_agent, spec="datasource_agent:make_shop", store=store
    )
    async with worker:
        agent = make_shop(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        response = await agent.prompt("two teas")
        assert response.output == "placed"
        events = await agent.store.load(response.run_id)
        await agent.aclose()
    await store.close()
    completed = [e.data for e in events if e.type == "tool_completed"]
    assert completed[0].datasource == "shop" and completed[0].output == "ordered tea"  # type: ignore[union-attr]
    with sqlite3.connect(shop) as conn:
        assert conn.execute("SELECT sku FROM orders").fetchall() == [("tea",)]
        rows = conn.execute(f"SELECT run_id, call_id FROM {COMPLETIONS_TABLE}").fetchall()
    assert rows == [(response.run_id, "call_0")]


def test_a_worker_sends_back_whether_the_result_was_read_from_the_record() -> None:
    """Invariant: the tool activity's result says `recovered` (and `is_error`) when set, and the
    workflow reads them back; a plain commit's result is the bare text it always was, so recorded
    histories replay unchanged."""
    from eudaimon.runtime.loop.datasource_calls import Committed
    from eudaimon.temporal._payloads import decode_tool_result, encode_tool_result

    assert encode_tool_result(Committed(output="ordered tea"), ()) == "ordered tea"
    for said in (Committed(output="ordered tea", recovered=True), Committed(output="sold out", is_error=True)):
        decoded, parts = decode_tool_result(encode_tool_result(said, ()))
        assert decoded == said and parts == ()
