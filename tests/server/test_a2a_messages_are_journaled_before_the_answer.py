"""An A2A message is journaled before it is answered: its run's first event is `run_queued`
(the sender's principal in it), a message on a busy context is a `submitted` task that exists
in the journal (readable, cancelable) before its turn, and a context's messages run one at a
time, in the order they were sent, as HTTP starts on a thread do."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from _a2a_support import A2AServer, a2a_client, state_name
from _server_support import KEYS, OPERATOR
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)


@pytest.fixture(scope="module")
def a2a(tmp_path_factory: pytest.TempPathFactory) -> Iterator[A2AServer]:
    running = A2AServer(tmp_path_factory.mktemp("a2a-queued") / "runs.db", env={"EUDAIMON_API_KEYS": KEYS}).start()
    yield running
    running.stop()


def _message(text: str, context_id: str, message_id: str | None = None) -> Message:
    return Message(
        message_id=message_id or uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)], context_id=context_id
    )


async def _events(http: httpx.AsyncClient, url: str, run_id: str) -> list[dict[str, Any]]:
    response = await http.get(f"{url}/v1/runs/{run_id}/events")
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()["events"]
    return events


async def test_a_message_on_a_busy_context_is_a_journaled_submitted_task_that_runs_in_its_turn(a2a: A2AServer) -> None:
    context = f"ctx-{uuid.uuid4().hex[:8]}"
    now = SendMessageConfiguration(return_immediately=True)
    async with httpx.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {OPERATOR}"}) as http:
        client = await a2a_client(http, a2a.agent_url("ticker"), streaming=False)
        [first] = [
            r
            async for r in client.send_message(
                SendMessageRequest(message=_message("ticks=100000", context), configuration=now)
            )
        ]
        second_message = _message("ticks=1", context)
        [second] = [r async for r in client.send_message(SendMessageRequest(message=second_message, configuration=now))]
        # the first holds the context's turn (queued or working) until it ends: the second waits
        assert state_name(second.task.status.state) == "submitted"
        assert second.task.context_id == context
        waiting = await _events(http, a2a.url, second.task.id)
        assert [e["type"] for e in waiting] == ["run_queued"]
        assert (waiting[0]["seq"], waiting[0]["principal"], waiting[0]["thread_id"]) == (0, "alice", context)
        read = await client.get_task(GetTaskRequest(id=second.task.id))
        assert read.status.state == TaskState.TASK_STATE_SUBMITTED

        cancelled = await client.cancel_task(CancelTaskRequest(id=first.task.id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        # the same message again (a client that resends) finds its run, and waits for its end
        [resent] = [r async for r in client.send_message(SendMessageRequest(message=second_message))]
        assert resent.task.id == second.task.id
        assert state_name(resent.task.status.state) == "completed"

        first_events = await _events(http, a2a.url, first.task.id)
        second_events = await _events(http, a2a.url, second.task.id)
    assert first_events[0]["type"] == "run_queued" and first_events[0]["principal"] == "alice"
    assert first_events[-1]["type"] == "run_cancelled"
    assert [e["type"] for e in second_events[:2]] == ["run_queued", "run_started"]
    assert sum(e["type"] == "run_started" for e in second_events) == 1
    assert second_events[1]["at"] >= first_events[-1]["at"], "the second message began before the first ended"


async def test_a_queued_task_is_canceled_before_it_begins(a2a: A2AServer) -> None:
    """`CancelTask` on a `submitted` task: `canceled` at once, journaled as `run_cancelled`
    after `run_queued`; it never begins, and the context's next message is not held up by it."""
    context = f"ctx-{uuid.uuid4().hex[:8]}"
    now = SendMessageConfiguration(return_immediately=True)
    async with httpx.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {OPERATOR}"}) as http:
        client = await a2a_client(http, a2a.agent_url("ticker"), streaming=False)
        [busy] = [
            r
            async for r in client.send_message(
                SendMessageRequest(message=_message("ticks=100000", context), configuration=now)
            )
        ]
        [queued] = [
            r
            async for r in client.send_message(
                SendMessageRequest(message=_message("ticks=1", context), configuration=now)
            )
        ]
        assert state_name(queued.task.status.state) == "submitted"
        cancelled = await client.cancel_task(CancelTaskRequest(id=queued.task.id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        await client.cancel_task(CancelTaskRequest(id=busy.task.id))
        [after] = [r async for r in client.send_message(SendMessageRequest(message=_message("ticks=1", context)))]
        assert state_name(after.task.status.state) == "completed"
        events = await _events(http, a2a.url, queued.task.id)
    assert [e["type"] for e in events] == ["run_queued", "run_cancelled"]
