"""`GET /v1/runs` and `GET /v1/dashboard` answer from the store's run index, against a real
`eudaimon serve` on a SQLite file: the listing's fields (previews, cost, tokens, duration, tools,
parent), its filters (status, agent, thread, `q`, since/until), its keyset cursor (a bad one is
422, never 5xx), and the dashboard's rows per agent and day.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

from _server_support import Server, wait_until

FIELDS = {
    "run_id", "agent", "thread_id", "status", "event_count", "last_event_type", "created_at", "updated_at",
    "input_preview", "output_preview", "error_preview", "cost_usd", "input_tokens", "output_tokens",
    "duration_ms", "tools", "parent_run_id", "version", "replay_of", "no_driver",
}  # fmt: skip


def test_items_carry_previews_outcome_usage_duration_and_tools(server: Server) -> None:
    """Invariant: each listed run has exactly the contract's fields, read off its journal:
    the input's start, the outcome, tokens, duration (null while not ended) and the tools called."""
    with server.client() as client:
        done = client.post("/v1/agents/ticker/runs?wait=true", json={"input": "ticks=2 " + "x" * 300}).json()
        waiting = client.post("/v1/agents/payer/runs?wait=true", json={"input": "pay 7 to ZED"}).json()
        assert waiting["status"] == "awaiting_approval"
        rows = {r["run_id"]: r for r in client.get("/v1/runs?limit=500").json()["runs"]}
        ended, paused = rows[done["run_id"]], rows[waiting["run_id"]]
        assert set(ended) == FIELDS and set(paused) == FIELDS
        assert ended["status"] == "completed" and ended["input_preview"] == ("ticks=2 " + "x" * 300)[:200]
        assert ended["output_preview"].startswith("Ticked 2 times.") and ended["error_preview"] is None
        assert ended["tools"] == ["tick"] and ended["duration_ms"] is not None and ended["duration_ms"] >= 0
        assert ended["parent_run_id"] is None and ended["last_event_type"] == "run_completed"
        assert paused["status"] == "awaiting_approval" and paused["duration_ms"] is None
        assert paused["tools"] == ["send_wire"] and paused["output_preview"] is None
        assert ended["no_driver"] is False and paused["no_driver"] is False  # neither needs a driver


def test_filters_by_status_search_and_dates(server: Server) -> None:
    """Invariant: `status` (repeated: any of them), `agent`, `thread_id`, `q` (input, tool names,
    call and run ids, case-insensitive) and `since`/`until` select exactly the runs they name."""
    with server.client() as client:
        a = client.post("/v1/agents/payer/runs?wait=true", json={"input": "pay 3 to QuokkaCorp", "thread_id": "t-q1"})
        b = client.post("/v1/agents/ticker/runs?wait=true", json={"input": "ticks=1 walrus", "thread_id": "t-q2"})
        pay, tick = a.json()["run_id"], b.json()["run_id"]

        def ids(**params: object) -> list[str]:
            answer = client.get("/v1/runs", params={"limit": 500, **params})
            assert answer.status_code == 200, answer.text
            return [r["run_id"] for r in answer.json()["runs"]]

        assert pay in ids(q="quokkacorp") and tick not in ids(q="quokkacorp")
        assert tick in ids(q="WALRUS") and pay not in ids(q="WALRUS")
        assert pay in ids(q="send_WIRE") and pay in ids(q="wire_1") and pay in ids(q=pay[-12:])
        assert tick in ids(q="t-q2") and ids(thread_id="t-q1") == [pay]
        waiting = ids(status="awaiting_approval")
        assert pay in waiting and tick not in waiting
        assert tick in ids(status="completed", agent="ticker") and pay not in ids(agent="ticker")
        either = ids(status=["awaiting_approval", "completed"])  # repeated: any of them
        assert pay in either and tick in either
        assert ids(status=["awaiting_approval", "failed"], thread_id="t-q2") == []
        today = datetime.now(UTC).date()
        assert pay in ids(since=today.isoformat()) and pay in ids(until=today.isoformat())
        assert pay not in ids(since=(today + timedelta(days=1)).isoformat())
        assert pay not in ids(until=(today - timedelta(days=1)).isoformat())
        assert pay not in ids(until=today.isoformat() + "T00:00:00Z")
        assert client.get("/v1/runs?since=yesterday").status_code == 422
        assert client.get("/v1/runs?status=asleep").status_code == 422


def test_a_bad_cursor_is_422_never_500(server: Server) -> None:
    """Invariant: a cursor the server did not give (3,000 nested brackets, not base64, binary,
    a NUL) answers 422 saying what to pass; a good one pages on."""
    nested = base64.urlsafe_b64encode(b"[" * 3000 + b"]" * 3000).decode()
    bad = [nested, "%%%", base64.urlsafe_b64encode(b"\xff\xfe").decode(), "YQ", "x" * 2000, "a\x00b"]
    with server.client() as client:
        for cursor in bad:
            answer = client.get("/v1/runs", params={"cursor": cursor})
            assert answer.status_code == 422, (cursor[:20], answer.status_code, answer.text)
            assert "cursor" in answer.text
        for name in ("q", "thread_id", "agent"):
            answer = client.get("/v1/runs", params={name: "a\x00b"})
            assert answer.status_code == 422 and "U+0000" in answer.text, (
                name,
                answer.text,
            )  # refused before the index
        assert client.get("/v1/dashboard", params={"agent": "a\x00b"}).status_code == 422


def test_pages_keep_their_place_when_a_run_is_updated(server: Server) -> None:
    """Invariant: keyset pages: a run updated between two pages moves to the front and is not
    shown again on the later pages; every other run is shown exactly once."""
    with server.client() as client:
        for n in range(4):
            client.post("/v1/agents/ticker/runs?wait=true", json={"input": "ticks=0", "thread_id": f"keep-{n}"})
        waiting = client.post("/v1/agents/payer/runs?wait=true", json={"input": "pay 1 to KEEP"}).json()["run_id"]
        first = client.get("/v1/runs", params={"limit": 1}).json()
        assert [r["run_id"] for r in first["runs"]] == [waiting]
        everything = [r["run_id"] for r in client.get("/v1/runs?limit=500").json()["runs"]]
        client.post(f"/v1/runs/{waiting}/approvals/wire_1", json={"approved": True})
        wait_until(
            lambda: client.get(f"/v1/runs/{waiting}").json()["status"] == "completed", "the approved run completes"
        )
        seen = [waiting]
        cursor = first["next_cursor"]
        while cursor is not None:
            page = client.get("/v1/runs", params={"limit": 2, "cursor": cursor}).json()
            seen += [r["run_id"] for r in page["runs"]]
            cursor = page["next_cursor"]
        assert seen == everything
        assert client.get("/v1/runs", params={"limit": 1}).json()["runs"][0]["run_id"] == waiting


def test_dashboard_rows_per_agent_and_day(server: Server) -> None:
    """Invariant: `/v1/dashboard` has one row per agent and UTC day with runs, whose counts by
    status add up to its runs, and `agent` narrows it to one agent."""
    with server.client() as client:
        client.post("/v1/agents/ticker/runs?wait=true", json={"input": "ticks=1"})
        client.post("/v1/agents/payer/runs?wait=true", json={"input": "pay 2 to DASH"})
        days = client.get("/v1/dashboard").json()["days"]
        today = datetime.now(UTC).date().isoformat()
        rows = {(d["agent"], d["day"]): d for d in days}
        ticker, payer = rows[("ticker", today)], rows[("payer", today)]
        assert sum(ticker["by_status"].values()) == ticker["runs"] >= 1
        assert ticker["by_status"].get("completed", 0) >= 1 and ticker["p50_duration_ms"] is not None
        assert ticker["p50_duration_ms"] <= ticker["p95_duration_ms"] and ticker["error_rate"] == 0.0
        assert payer["by_status"].get("awaiting_approval", 0) >= 1
        assert (
            ticker["input_tokens"] >= 0 and ticker["cost_usd"] is None
        )  # a FunctionModel has no price: unpriced, not $0
        only = client.get("/v1/dashboard", params={"agent": "payer", "days": 1}).json()["days"]
        assert only and {d["agent"] for d in only} == {"payer"}
        assert client.get("/v1/dashboard?days=0").status_code == 422
