"""One rule on every approval surface: a decision is a real boolean (or the protocol's own
enumerated value). Anything else is refused with a 4xx saying what to send, and nothing is
recorded: the call still waits. Against a real `eudaimon serve --a2a --ag-ui`, on SQLite and on
PostgreSQL.

Before: AG-UI read `{"approved": "false"}` as an approval (the string is truthy) and an
IRREVERSIBLE call ran; HTTP read `"false"`, `0` or `"no"` as pydantic's lax booleans.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from _a2a_support import a2a_client
from _backends_support import BACKENDS
from _holes_support import HolesServer, holes_on, journal, paused_refund, still_waiting
from a2a.helpers import new_data_part
from a2a.types.a2a_pb2 import Message, Role, SendMessageRequest
from a2a.utils.errors import InvalidParamsError


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HolesServer]:
    with holes_on(request.param, tmp_path_factory.mktemp(f"booleans-{request.param}")) as server:
        yield server


@pytest.mark.parametrize("approved", ["false", "true", 0, 1, None, "yes", [True]])
def test_http_refuses_a_decision_that_is_not_a_boolean(served: HolesServer, approved: Any) -> None:
    """Invariant: `POST …/approvals/{call}` with `approved` other than true/false answers 422
    naming `approved`; nothing is journaled and the call still waits."""
    with served.client() as client:
        run_id = paused_refund(client)
        count = len(journal(client, run_id))
        answer = client.post(f"/v1/runs/{run_id}/approvals/refund_1", json={"approved": approved})
        assert answer.status_code == 422, answer.text
        assert "approved" in answer.text and "bool" in answer.text
        still_waiting(client, run_id, count)


def _ag_ui(served: HolesServer, run_id: str, payload: Any, status: str = "resolved") -> httpx.Response:
    thread = f"ag-{run_id}"
    body = {
        "threadId": thread,
        "runId": run_id,
        "messages": [],
        "resume": [{"interruptId": "refund_1", "status": status, "payload": payload}],
    }
    with httpx.Client(base_url=served.url, timeout=60) as http:
        answer = http.post("/v1/agents/refunder/ag-ui", json=body)
        answer.read()
        return answer


def _ag_ui_run(served: HolesServer) -> str:
    """A refunder run started over AG-UI, paused at its approval."""
    run_id = f"ag{uuid.uuid4().hex[:12]}"
    body = {
        "threadId": f"ag-{run_id}",
        "runId": run_id,
        "messages": [{"id": "u", "role": "user", "content": "refund 700"}],
    }
    with httpx.Client(base_url=served.url, timeout=60) as http:
        http.post("/v1/agents/refunder/ag-ui", json=body).read()
    with served.client() as client:
        for _ in range(400):
            if client.get(f"/v1/runs/{run_id}").json()["status"] == "awaiting_approval":
                return run_id
            asyncio.run(asyncio.sleep(0.05))
    raise AssertionError(f"run {run_id} never waited for approval")


@pytest.mark.parametrize("payload", [{"approved": "false"}, {"approved": "true"}, {"approved": 1}, {}, "yes", None])
def test_ag_ui_refuses_a_resume_whose_decision_is_not_a_boolean(served: HolesServer, payload: Any) -> None:
    """Bug: AG-UI approved a waiting call on `{"approved": "false"}`. Now a resume entry whose
    `payload.approved` is not a JSON boolean answers 422 saying what to send; nothing is
    recorded and the call still waits."""
    run_id = _ag_ui_run(served)
    with served.client() as client:
        count = len(journal(client, run_id))
        answer = _ag_ui(served, run_id, payload)
        assert answer.status_code == 422, answer.text
        assert '{\\"approved\\": true}' in answer.text or '{"approved": true}' in answer.text
        still_waiting(client, run_id, count)


def test_ag_ui_a_real_false_denies_and_cancelled_denies(served: HolesServer) -> None:
    """Invariant: `{"approved": false}` denies; so does the protocol's own `status: "cancelled"`."""
    with served.client() as client:
        for payload, status in (({"approved": False, "note": "no"}, "resolved"), (None, "cancelled")):
            run_id = _ag_ui_run(served)
            assert _ag_ui(served, run_id, payload, status).status_code == 200
            decided = [e for e in journal(client, run_id) if e["type"] == "approval_decided"]
            assert [d["approved"] for d in decided] == [False]
            assert not [e for e in journal(client, run_id) if e["type"] == "tool_started"]


async def test_a2a_refuses_a_decision_that_is_not_a_boolean(served: HolesServer) -> None:
    """Invariant: an A2A answer `{"approved": "false"}` on a waiting task is refused (invalid
    params saying what to send); nothing is recorded."""
    with served.client() as client:
        run_id = paused_refund(client)
        count = len(journal(client, run_id))
    async with httpx.AsyncClient(timeout=60) as http:
        a2a = await a2a_client(http, served.agent_url("refunder"), streaming=False)
        answer = Message(
            message_id=uuid.uuid4().hex,
            role=Role.ROLE_USER,
            task_id=run_id,
            parts=[new_data_part({"approved": "false", "call_id": "refund_1"})],
        )
        with pytest.raises(InvalidParamsError, match="a JSON boolean"):
            [r async for r in a2a.send_message(SendMessageRequest(message=answer))]
    with served.client() as client:
        still_waiting(client, run_id, count)
