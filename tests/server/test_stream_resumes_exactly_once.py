"""The journal is the stream: each event once, in order, across cuts, reconnects with
`Last-Event-ID`, a `kill -9` of the server mid-run and a run driven by another process."""

from __future__ import annotations

import asyncio

import httpx2
from _server_support import Server, Sse, read_sse, wait_until

from eudaimon.stores import SqliteStore


def _read(client: httpx2.Client, run_id: str, last_id: int | None, *, stop_after: int | None = None) -> list[Sse]:
    """Stream from `last_id`; keep what arrives until `end`, or cut after `stop_after` journal events."""
    headers = {"Last-Event-ID": str(last_id)} if last_id is not None else {}
    got: list[Sse] = []
    with client.stream("GET", f"/v1/runs/{run_id}/events/stream", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for item in read_sse(response):
            got.append(item)
            if item.event == "end":
                break
            if stop_after is not None and sum(1 for g in got if g.id is not None) >= stop_after:
                break  # the client goes away mid-stream
    return got


def _journal_ids(items: list[Sse]) -> list[int]:
    return [i.id for i in items if i.id is not None]


def _stored_types(server: Server, run_id: str) -> list[str]:
    async def load() -> list[str]:
        store = SqliteStore(str(server.db))
        try:
            return [e.type for e in await store.load(run_id)]
        finally:
            await store.close()

    return asyncio.run(load())


def test_a_cut_stream_resumed_with_last_event_id_has_no_gap_and_no_duplicate(server: Server) -> None:
    """Invariant: reading in three pieces, each resumed with the last id seen, yields seqs
    0..N exactly once, each `id` equal to its row's seq, the rows as stored; deltas carry no id."""
    with server.client() as client:
        run_id = client.post("/v1/agents/ticker/runs", json={"input": "ticks=12"}).json()["run_id"]
        items = _read(client, run_id, None, stop_after=5)
        items += _read(client, run_id, _journal_ids(items)[-1], stop_after=7)
        items += _read(client, run_id, _journal_ids(items)[-1])
    ids = _journal_ids(items)
    assert ids == list(range(len(ids)))
    assert all(i.data["seq"] == i.id and i.data["type"] == i.event for i in items if i.id is not None)
    assert [i.event for i in items if i.id is not None] == _stored_types(server, run_id)
    assert items[-1].event == "end" and items[-1].data["status"] == "completed"
    deltas = [i for i in items if i.event == "text_delta"]
    assert deltas and all(d.id is None for d in deltas)
    assert "".join(d.data["text"] for d in deltas).startswith("Ticked 12 times.")


def test_a_stream_resumed_across_a_kill_9_of_the_server_misses_nothing(fresh: Server) -> None:
    """Invariant: kill -9 the server mid-run, start it again: its recovery resumes the run once
    the dead server's lease lapses, the run completes, and the stream resumed with
    `Last-Event-ID` continues with no gap and no duplicate."""
    fresh.env = {"EUDAIMON_TEST_STEP_S": "0.1"}
    fresh.start()
    with fresh.client() as client:
        run_id = client.post("/v1/agents/ticker/runs", json={"input": "ticks=30"}).json()["run_id"]
        before = _read(client, run_id, None, stop_after=12)
    fresh.kill()
    assert "run_completed" not in _stored_types(fresh, run_id)
    fresh.start()
    with fresh.client() as client:
        after = _read(client, run_id, _journal_ids(before)[-1])
    ids = _journal_ids(before) + _journal_ids(after)
    assert ids == list(range(len(ids)))
    assert after[-1].event == "end" and after[-1].data["status"] == "completed"
    assert [i.event for i in before + after if i.id is not None] == _stored_types(fresh, run_id)


def test_a_stream_reads_a_run_another_process_appends_to(server: Server) -> None:
    """Invariant: a run driven outside the server (here: by this test process) streams live."""

    async def drive() -> None:
        import _server_agents

        store = SqliteStore(str(server.db))
        agent = _server_agents.Agent(
            _server_agents.ticker.model, tools=[_server_agents.tick], name="outside", store=store
        )
        await agent.prompt("ticks=8", run_id="outside-1")
        await store.close()

    import threading

    driver = threading.Thread(target=lambda: asyncio.run(drive()))
    driver.start()
    with server.client() as client:
        wait_until(lambda: client.get("/v1/runs/outside-1").status_code == 200, "the outside run")
        items = _read(client, "outside-1", None)
    driver.join(60)
    ids = _journal_ids(items)
    assert ids == list(range(len(ids))) and items[-1].data["status"] == "completed"
    assert not [i for i in items if i.event == "text_delta"]  # deltas only of runs driven here


def test_a_paused_run_ends_its_stream_and_a_client_that_leaves_leaves_nothing(server: Server) -> None:
    """Invariant: a stream of a run waiting for approval ends (`end`, awaiting_approval); a client
    that disconnects mid-stream leaves no subscription behind (/health counts open streams)."""
    with server.client() as client:
        paused = client.post("/v1/agents/payer/runs", json={"input": "pay 1 to AL"}).json()["run_id"]
        # seq 0 run_queued, 1 run_started, 2 model_attempt_started, 3 model_called, 4 approval_requested
        assert _read(client, paused, None)[-1].data == {"status": "awaiting_approval", "seq": 4}
        long = client.post("/v1/agents/ticker/runs", json={"input": "ticks=100000"}).json()["run_id"]
        _read(client, long, None, stop_after=2)
        wait_until(lambda: client.get("/health").json()["streams"] == 0, "the stream to be let go")
        client.post(f"/v1/runs/{long}/cancel", json={})


def test_bad_last_event_id_is_422_and_unknown_run_404(server: Server) -> None:
    """Invariant: a Last-Event-ID that is not a seq is refused naming the header; an unknown run is 404."""
    with server.client() as client:
        run_id = client.post("/v1/agents/ticker/runs?wait=true", json={"input": "ticks=1"}).json()["run_id"]
        bad = client.get(f"/v1/runs/{run_id}/events/stream", headers={"Last-Event-ID": "abc"})
        assert bad.status_code == 422 and "Last-Event-ID" in bad.json()["detail"]
        assert client.get("/v1/runs/nope/events/stream").status_code == 404
        tail = _read(client, run_id, 4)
        assert _journal_ids(tail) == list(range(5, 5 + len(_journal_ids(tail))))
