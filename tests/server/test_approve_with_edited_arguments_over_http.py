"""`POST /v1/runs/{id}/approvals/{call}` with `"arguments": {…}`: the approver's edit is checked
against the tool's schema (422 naming the problem, nothing journaled), journaled on
`approval_decided`, and the call runs with it — against a real `eudaimon serve`.

This is the body the inspector sends: `{"approved": true, "note": "...", "arguments": {...}}`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from _server_support import HERE, Server, wait_until

from eudaimon.core.events import ApprovalDecided, ToolStarted
from eudaimon.stores import SqliteStore

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def payer_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A keyless server running this tree's code (its `src` first on the path)."""
    path = os.pathsep.join([str(HERE), str(SRC), os.environ.get("PYTHONPATH", "")])
    running = Server(tmp_path_factory.mktemp("edits") / "runs.db", env={"PYTHONPATH": path}).start()
    yield running
    running.stop()


def _paused(client: httpx2.Client, text: str) -> str:
    run = client.post("/v1/agents/payer/runs", params={"wait": "true"}, json={"input": text}).json()
    assert run["status"] == "awaiting_approval", run
    return str(run["run_id"])


def _events(server: Server, run_id: str) -> list[object]:
    async def read() -> list[object]:
        store = SqliteStore(str(server.db))
        try:
            return [e.data for e in await store.load(run_id)]
        finally:
            await store.close()

    return asyncio.run(read())


def test_an_edited_approval_runs_the_edit(payer_server: Server) -> None:
    """Invariant: the edit is journaled on `approval_decided` with the key's principal; the
    call runs with it and `tool_started` records it."""
    with payer_server.client() as client:
        run_id = _paused(client, "pay 120 to ACME")
        body = {"approved": True, "note": "half now", "arguments": {"amount_usd": 60.0, "to": "ACME"}}
        decided = client.post(f"/v1/runs/{run_id}/approvals/wire_1", json=body)
        assert decided.status_code == 200, decided.text

        def finished() -> dict[str, object] | None:
            run = client.get(f"/v1/runs/{run_id}").json()
            return run if run["status"] == "completed" else None

        done = wait_until(finished, f"run {run_id} to complete")
        assert done["output"] == "Done: sent $60.00 to ACME."
    events = _events(payer_server, run_id)
    [decision] = [e for e in events if isinstance(e, ApprovalDecided)]
    assert decision.arguments == {"amount_usd": 60.0, "to": "ACME"} and decision.by == "anonymous"
    [started] = [e for e in events if isinstance(e, ToolStarted)]
    assert started.arguments == {"amount_usd": 60.0, "to": "ACME"}


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"approved": True, "arguments": {"amount_usd": "sixty", "to": "ACME"}}, "amount_usd"),
        ({"approved": True, "arguments": {"amount_usd": 60.0}}, "to"),
        ({"approved": False, "arguments": {"amount_usd": 60.0, "to": "ACME"}}, "approval"),
        ({"approved": True, "arguments": ["ACME"]}, "arguments"),
    ],
)
def test_a_bad_edit_answers_422_and_changes_nothing(payer_server: Server, body: dict[str, object], named: str) -> None:
    """Invariant: an edit the schema refuses (or one sent with a denial) answers 422 naming the
    problem; no event is journaled and the call still waits."""
    with payer_server.client() as client:
        run_id = _paused(client, "pay 120 to ACME")
        before = len(_events(payer_server, run_id))
        answer = client.post(f"/v1/runs/{run_id}/approvals/wire_1", json=body)
        assert answer.status_code == 422, answer.text
        assert named in answer.text
        assert len(_events(payer_server, run_id)) == before
        assert client.get(f"/v1/runs/{run_id}").json()["status"] == "awaiting_approval"
