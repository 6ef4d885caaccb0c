"""Dates a filter cannot hold, and ids the API refuses, are refused the same way wherever they
enter, on SQLite and PostgreSQL: `until=9999-12-31` (its end is past the calendar) and edges of
the calendar with an offset answer 422 naming the field; A2A's `contextId` and AG-UI's
`threadId` (which become thread ids) are held to the API's own id rules (no NUL, control, bidi
or format character; at most 256 characters), and nothing is started.

Before: those dates answered 500 and dropped the connection; a NUL in a `contextId` was a 500 on
PostgreSQL, and bidi, control characters and 100k-character ids were stored on SQLite.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
from _a2a_support import a2a_client
from _backends_support import BACKENDS
from _holes_support import HolesServer, holes_on
from a2a.types.a2a_pb2 import ListTasksRequest, Message, Part, Role, SendMessageRequest
from a2a.utils.errors import InvalidParamsError


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HolesServer]:
    with holes_on(request.param, tmp_path_factory.mktemp(f"ranges-{request.param}")) as server:
        yield server


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("until", "9999-12-31"),
        ("until", "9999-12-31T23:30:00-01:00"),
        ("since", "0001-01-01T00:00:00+01:00"),
        ("until", "0001-01-01T00:30:00+05:00"),
        ("since", "9999-12-31T23:59:59-23:59"),
    ],
)
def test_a_date_outside_the_calendar_answers_422_naming_the_field(served: HolesServer, field: str, value: str) -> None:
    """Bug: these answered 500 and dropped the connection. Now 422 says which field is out of range."""
    with served.client() as client:
        answer = client.get("/v1/runs", params={field: value})
        assert answer.status_code == 422, answer.text
        assert answer.json()["detail"].startswith(f"{field}=") and "out of range" in answer.text


def test_dates_at_the_edges_that_fit_still_filter(served: HolesServer) -> None:
    """Invariant: the last and first days a filter can hold still answer 200."""
    with served.client() as client:
        for params in ({"until": "9999-12-30"}, {"since": "0001-01-01"}, {"until": "9999-12-31T00:00:00Z"}):
            assert client.get("/v1/runs", params=params).status_code == 200, params


BAD_IDS = [
    pytest.param("thread\x00x", id="nul"),
    pytest.param("abc\u202edef", id="bidi"),
    pytest.param("a\x1bb", id="escape"),
    pytest.param("zero\u200bwidth", id="zero-width"),
    pytest.param("x" * 100_000, id="100k"),
]


@pytest.mark.parametrize("thread_id", BAD_IDS)
def test_ag_ui_refuses_a_thread_id_the_api_would_refuse(served: HolesServer, thread_id: str) -> None:
    """Invariant: AG-UI `threadId` follows the API's id rules: 422 naming `threadId`; no run."""
    run_id = f"ag{uuid.uuid4().hex[:12]}"
    body = {"threadId": thread_id, "runId": run_id, "messages": [{"id": "u", "role": "user", "content": "hi"}]}
    with httpx.Client(base_url=served.url, timeout=60) as http:
        answer = http.post("/v1/agents/prompted/ag-ui", json=body)
        assert answer.status_code == 422, answer.text[:300]
        assert "threadId" in answer.text
        assert http.get(f"/v1/runs/{run_id}").status_code == 404


@pytest.mark.parametrize("run_id", [pytest.param("run\x00x", id="nul"), pytest.param("r\u202e1", id="bidi"),
                                    pytest.param("r" * 129, id="long")])  # fmt: skip
def test_ag_ui_refuses_a_run_id_the_api_would_refuse(served: HolesServer, run_id: str) -> None:
    """Invariant: AG-UI `runId` (the run id) follows the API's run id rule: 422 naming `runId`."""
    body = {"threadId": "t-ok", "runId": run_id, "messages": [{"id": "u", "role": "user", "content": "hi"}]}
    with httpx.Client(base_url=served.url, timeout=60) as http:
        answer = http.post("/v1/agents/prompted/ag-ui", json=body)
        assert answer.status_code == 422 and "runId" in answer.text, answer.text[:300]


@pytest.mark.parametrize("context_id", BAD_IDS)
async def test_a2a_refuses_a_context_id_the_api_would_refuse(served: HolesServer, context_id: str) -> None:
    """Invariant: A2A `contextId` follows the API's id rules, in a message and in a listing:
    invalid params naming `contextId`; no run is started."""
    async with httpx.AsyncClient(timeout=60) as http:
        a2a = await a2a_client(http, served.agent_url("prompted"), streaming=False)
        message = Message(
            message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text="hi")], context_id=context_id
        )
        with pytest.raises(InvalidParamsError, match="contextId"):
            [r async for r in a2a.send_message(SendMessageRequest(message=message))]
        with pytest.raises(InvalidParamsError, match="contextId"):
            await a2a.list_tasks(ListTasksRequest(context_id=context_id))
    with served.client() as client:
        assert client.get("/v1/runs", params={"agent": "prompted"}).json()["runs"] == []
