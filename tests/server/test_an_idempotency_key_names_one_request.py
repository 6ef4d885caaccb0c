"""An `Idempotency-Key` (or a `run_id`) names one request: sent again with the same request it
answers the run it started; with a different one it is refused (422) naming the fields that
differ, never their values, and nothing changes.

Bug: `pay 5 to ALICE` then `pay 5000 to MALLORY` under one key answered 200 with the first
run, and nothing told the client that its second request was not carried out. The check reads
what the journal recorded, so it holds after a restart and on a second server of the journal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
from _queue_support import Backend, QueueServer, all_completed

KEYS = "k-alice:alice:operator,k-bob:bob:operator"
SECRETS = ("ALICE", "MALLORY", "5000", "pay 5")


def _post(client: httpx2.Client, body: dict[str, Any], key: str | None = None) -> httpx2.Response:
    headers = {"Idempotency-Key": key} if key is not None else {}
    return client.post("/v1/agents/quick/runs", json=body, headers=headers)


def _refused(answer: httpx2.Response, *fields: str) -> str:
    assert answer.status_code == 422, answer.text
    detail: str = answer.json()["detail"]
    for name in fields:
        assert f"`{name}`" in detail, detail
    assert not any(secret in detail for secret in SECRETS), detail
    return detail


def _checks(client: httpx2.Client, key: str, run_id: str) -> None:
    """The reuses of `key` (which started `run_id` with `pay 5 to ALICE`), each way."""
    detail = _refused(_post(client, {"input": "pay 5000 to MALLORY"}, key), "input")
    assert "Idempotency-Key" in detail and "new key" in detail
    _refused(_post(client, {"input": "pay 5 to ALICE", "thread_id": "elsewhere"}, key), "thread_id")
    same = _post(client, {"input": "pay 5 to ALICE"}, key)
    assert same.status_code == 200 and same.json()["run_id"] == run_id
    assert same.json()["input"] == "pay 5 to ALICE" and same.json()["status"] == "completed"
    detail = _refused(_post(client, {"input": "pay 5000 to MALLORY", "run_id": "run-named"}), "input")
    assert "run_id 'run-named'" in detail and "new run_id" in detail
    assert _post(client, {"input": "pay 5 to ALICE", "run_id": "run-named"}).status_code == 200


def test_a_reused_key_with_another_request_is_refused_after_a_restart_and_on_another_server(
    backend: Backend, tmp_path: Path
) -> None:
    server = QueueServer(tmp_path / "runs.db", backend=backend, env={"EUDAIMON_API_KEYS": KEYS}).start()
    other: QueueServer | None = None
    try:
        with server.client("k-alice") as client:
            first = _post(client, {"input": "pay 5 to ALICE"}, "order-1")
            assert first.status_code == 202
            run_id = first.json()["run_id"]
            assert _post(client, {"input": "pay 5 to ALICE", "run_id": "run-named"}).status_code == 202
            all_completed(client, [run_id, "run-named"])
            _checks(client, "order-1", run_id)
            with server.client("k-bob") as bob:  # the same run_id and body, from someone else
                _refused(_post(bob, {"input": "pay 5 to ALICE", "run_id": "run-named"}), "principal")
                mine = _post(bob, {"input": "pay 5 to ALICE"}, "order-1")  # a key is the principal's own
                assert mine.status_code == 202 and mine.json()["run_id"] != run_id
        other = server.again()  # a second server on the same journal, at the same time
        with other.client("k-alice") as client:
            _checks(client, "order-1", run_id)
        server.stop()
        with other.client("k-alice") as client:
            quick = client.get("/v1/runs?agent=quick&limit=500").json()["runs"]
            assert len(quick) == 3  # alice's two, bob's one: no reuse started anything
            events = client.get(f"/v1/runs/{run_id}/events").json()["events"]
            assert events[0]["type"] == "run_queued" and set(events[0]["request"]) == {
                "input",
                "thread_id",
                "principal",
            }
            assert "ALICE" not in str(events[0]["request"])  # digests, not the values again
    finally:
        server.stop()
        if other is not None:
            other.stop()
