"""`GET /v1/inbox` on each store: the calls waiting for a person across runs and agents, oldest
first, with deadlines and the role's actions; and the deadline on a run's pending approval."""

from __future__ import annotations

from _time_support import Opener, fetcher, payer
from fastapi.testclient import TestClient

from eudaimon.server.app import create_app
from eudaimon.server.auth import ApiKeys


def test_the_inbox_lists_waiting_calls_oldest_first_with_deadlines(open_store: Opener) -> None:
    """Invariant: two agents' runs awaiting approval (one with a deadline) are listed oldest
    first, with arguments as the tool gets them and `deadline`/`on_timeout`; a waiting
    (`RetryAfter`) run is not in the inbox (nobody must decide); a viewer gets no actions."""
    store = open_store()
    slow = payer(store, [], approval_timeout_s=600)
    nap = fetcher(store, [])
    keys = ApiKeys.parse("op:alice:operator,view:victor:viewer")
    app = create_app([slow, nap], store=store, auth=keys)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        op = {"Authorization": "Bearer op"}
        first = client.post("/v1/agents/payer/runs?wait=true", json={"input": "pay"}, headers=op).json()
        napping = client.post("/v1/agents/fetcher/runs?wait=true", json={"input": "get"}, headers=op).json()
        second = client.post("/v1/agents/payer/runs?wait=true", json={"input": "pay"}, headers=op).json()
        assert napping["status"] == "waiting" and napping["wake_at"]

        items = client.get("/v1/inbox", headers=op).json()["items"]
        seen = client.get("/v1/inbox", headers={"Authorization": "Bearer view"}).json()["items"]
        run = client.get(f"/v1/runs/{first['run_id']}", headers=op).json()

    assert [i["run_id"] for i in items] == [first["run_id"], second["run_id"]]
    assert all(i["kind"] == "approval" and i["arguments"] == {"amount": 900} for i in items)
    assert all(i["deadline"] and i["on_timeout"] == "deny" for i in items)
    assert items[0]["actions"] == ["approve", "deny"] and [i["actions"] for i in seen] == [[], []]
    assert run["pending_approvals"][0]["deadline"] == items[0]["deadline"]
