"""An A2A task is an eudaimon run: the official `a2a-sdk` client against a real `eudaimon serve --a2a`.

Task id = run id, `contextId` = thread id, states follow the journal (`working`,
`input-required` for a call waiting for approval, `completed`, `canceled`), the answer is an
artifact (typed output as a data part), a message id sent again finds the run it started, and
the server's keys and roles apply.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from _a2a_support import A2AServer, a2a_client, state_name, states_of
from _server_support import KEYS, OPERATOR, VIEWER
from a2a.client import A2AClientError
from a2a.helpers import get_data_parts, get_text_parts, new_data_part
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError

AGENTS = ("_server_agents:payer", "_server_agents:ticker", "_a2a_agents:typed", "_a2a_agents:failing")


@pytest.fixture(scope="module")
def a2a(tmp_path_factory: pytest.TempPathFactory) -> Iterator[A2AServer]:
    running = A2AServer(tmp_path_factory.mktemp("a2a") / "runs.db", agents=AGENTS).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def keyed_a2a(tmp_path_factory: pytest.TempPathFactory) -> Iterator[A2AServer]:
    running = A2AServer(
        tmp_path_factory.mktemp("a2a-keyed") / "runs.db", agents=AGENTS, env={"EUDAIMON_API_KEYS": KEYS}
    ).start()
    yield running
    running.stop()


def _message(text: str, **fields: str) -> Message:
    return Message(
        message_id=fields.pop("message_id", uuid.uuid4().hex), role=Role.ROLE_USER, parts=[Part(text=text)], **fields
    )


async def test_send_answers_a_completed_task_whose_id_is_the_run(a2a: A2AServer) -> None:
    """The blocking send answers when the run ends; the task is the run (same id, its thread as
    contextId, its answer as the artifact), as `GET /v1/runs/{id}` shows it."""
    async with httpx.AsyncClient(timeout=30) as http:
        client = await a2a_client(http, a2a.agent_url("ticker"), streaming=False)
        [response] = [r async for r in client.send_message(SendMessageRequest(message=_message("ticks=2")))]
        task = response.task
        assert state_name(task.status.state) == "completed"
        run = (await http.get(f"{a2a.url}/v1/runs/{task.id}")).json()
        assert run["status"] == "completed"
        assert task.context_id == run["thread_id"]
        [answer] = task.artifacts
        assert get_text_parts(answer.parts) == [run["output"]]
        assert get_text_parts(task.history[0].parts) == ["ticks=2"]


async def test_stream_shows_each_state_once_in_order_then_the_answer(a2a: A2AServer) -> None:
    """`SendStreamingMessage`: the task first, then `working` and `completed` once each, the
    answer artifact before the final status."""
    async with httpx.AsyncClient(timeout=30) as http:
        client = await a2a_client(http, a2a.agent_url("ticker"))
        responses = [r async for r in client.send_message(SendMessageRequest(message=_message("ticks=3")))]
    shown = states_of(responses)
    assert shown[-1] == "completed"
    assert shown[-2] == "working"
    assert len(shown) == len(set(shown)), shown
    assert set(shown) <= {"submitted", "working", "completed"}
    kinds = [r.WhichOneof("payload") for r in responses]
    assert kinds[0] == "task"
    assert kinds[-2:] == ["artifact_update", "status_update"]


async def test_typed_output_is_a_data_part(a2a: A2AServer) -> None:
    """An agent with an `output_type` answers with the text and the typed output as data."""
    async with httpx.AsyncClient(timeout=30) as http:
        client = await a2a_client(http, a2a.agent_url("typed"), streaming=False)
        [response] = [r async for r in client.send_message(SendMessageRequest(message=_message("judge")))]
    [answer] = response.task.artifacts
    assert get_data_parts(answer.parts) == [{"approved": True, "score": 7.0}]


async def test_a_failed_run_is_a_failed_task_saying_why(a2a: A2AServer) -> None:
    """`run_failed` is `failed`, its status message the run's error; no answer artifact."""
    async with httpx.AsyncClient(timeout=30) as http:
        client = await a2a_client(http, a2a.agent_url("failing"), streaming=False)
        [response] = [r async for r in client.send_message(SendMessageRequest(message=_message("go")))]
        run = (await http.get(f"{a2a.url}/v1/runs/{response.task.id}")).json()
    assert state_name(response.task.status.state) == "failed"
    assert run["status"] == "failed"
    assert get_text_parts(response.task.status.message.parts) == [run["error"]]
    assert list(response.task.artifacts) == []


async def test_the_same_message_id_sent_again_finds_its_run(a2a: A2AServer) -> None:
    """A resend (a client that crashed) answers with the task the message started: no second run."""
    message_id = uuid.uuid4().hex
    async with httpx.AsyncClient(timeout=30) as http:
        client = await a2a_client(http, a2a.agent_url("ticker"), streaming=False)
        first = [
            r async for r in client.send_message(SendMessageRequest(message=_message("ticks=1", message_id=message_id)))
        ]
        again = [
            r async for r in client.send_message(SendMessageRequest(message=_message("ticks=1", message_id=message_id)))
        ]
        assert again[0].task.id == first[0].task.id
        runs = (await http.get(f"{a2a.url}/v1/runs", params={"agent": "ticker", "limit": 500})).json()["runs"]
    assert [r["run_id"] for r in runs].count(first[0].task.id) == 1


async def test_an_approval_is_input_required_and_an_operator_answers_it(a2a: A2AServer) -> None:
    """A call waiting for approval is `input-required`, its status message naming the call; an
    A2A message on the task with `{"approved": true}` decides it and the task completes."""
    async with httpx.AsyncClient(timeout=30) as http:
        client = await a2a_client(http, a2a.agent_url("payer"), streaming=False)
        [waiting] = [r async for r in client.send_message(SendMessageRequest(message=_message("pay 12 to BOB")))]
        task = waiting.task
        assert state_name(task.status.state) == "input-required"
        assert "wire_1: send_wire" in get_text_parts(task.status.message.parts)[0]
        answer = Message(
            message_id=uuid.uuid4().hex,
            role=Role.ROLE_USER,
            task_id=task.id,
            parts=[new_data_part({"approved": True, "call_id": "wire_1", "note": "ok by A2A"})],
        )
        [done] = [r async for r in client.send_message(SendMessageRequest(message=answer))]
        assert state_name(done.task.status.state) == "completed"
        assert "sent $12.00 to BOB" in get_text_parts(done.task.artifacts[0].parts)[0]
        run = (await http.get(f"{a2a.url}/v1/runs/{task.id}")).json()
    assert run["status"] == "completed"


async def test_cancel_ends_a_working_task_as_canceled(a2a: A2AServer) -> None:
    """`CancelTask` on a working task: `canceled`, journaled as `run_cancelled`; again: not cancelable."""
    async with httpx.AsyncClient(timeout=30) as http:
        client = await a2a_client(http, a2a.agent_url("ticker"), streaming=False)
        config = SendMessageConfiguration(return_immediately=True)
        [started] = [
            r
            async for r in client.send_message(
                SendMessageRequest(message=_message("ticks=100000"), configuration=config)
            )
        ]
        assert state_name(started.task.status.state) in ("submitted", "working")
        cancelled = await client.cancel_task(CancelTaskRequest(id=started.task.id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        again = await client.get_task(GetTaskRequest(id=started.task.id))
        assert again.status.state == TaskState.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError, match="has ended"):
            await client.cancel_task(CancelTaskRequest(id=started.task.id))
        events = (await http.get(f"{a2a.url}/v1/runs/{started.task.id}/events")).json()["events"]
    assert events[-1]["type"] == "run_cancelled"


async def test_get_of_an_unknown_task_is_task_not_found(a2a: A2AServer) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        client = await a2a_client(http, a2a.agent_url("ticker"))
        with pytest.raises(TaskNotFoundError, match="no task"):
            await client.get_task(GetTaskRequest(id="run_nope"))


async def test_the_card_names_skills_streaming_and_the_keys_asked(keyed_a2a: A2AServer, tmp_path: Path) -> None:
    """The card: the agent, a skill per tool, streaming, the eudaimon dedupe extension, and the
    server's API keys as bearer and X-API-Key schemes."""
    async with httpx.AsyncClient(timeout=30) as http:
        card = (await http.get(keyed_a2a.agent_url("payer") + "/.well-known/agent-card.json")).json()
    assert card["name"] == "payer"
    assert [s["id"] for s in card["skills"]] == ["send_wire"]
    assert card["capabilities"]["streaming"] is True
    assert card["supportedInterfaces"][0]["url"] == keyed_a2a.agent_url("payer")
    assert set(card["securitySchemes"]) == {"bearer", "apiKey"}
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "bearer"


async def test_keys_and_roles_apply_to_a2a(keyed_a2a: A2AServer) -> None:
    """No key: 401. A viewer may read a task but not send or cancel (403). An operator sends."""
    url = keyed_a2a.agent_url("ticker")
    async with httpx.AsyncClient(timeout=30) as anonymous:
        client = await a2a_client(anonymous, url, streaming=False)
        with pytest.raises(A2AClientError, match="401"):
            [r async for r in client.send_message(SendMessageRequest(message=_message("ticks=1")))]
    async with httpx.AsyncClient(timeout=30, headers={"Authorization": f"Bearer {OPERATOR}"}) as op_http:
        operator = await a2a_client(op_http, url, streaming=False)
        [done] = [r async for r in operator.send_message(SendMessageRequest(message=_message("ticks=1")))]
    async with httpx.AsyncClient(timeout=30, headers={"X-API-Key": VIEWER}) as view_http:
        viewer = await a2a_client(view_http, url, streaming=False)
        assert (await viewer.get_task(GetTaskRequest(id=done.task.id))).id == done.task.id
        with pytest.raises(A2AClientError, match="403"):
            [r async for r in viewer.send_message(SendMessageRequest(message=_message("ticks=1")))]
        with pytest.raises(A2AClientError, match="403"):
            await viewer.cancel_task(CancelTaskRequest(id=done.task.id))


async def test_bad_messages_get_an_error_that_says_what_to_do_and_start_nothing(a2a: A2AServer) -> None:
    """No text: invalid params. A message on a task that waits for nothing: invalid params
    naming what a message on a task is for. Subscribing to an ended task: unsupported, read it
    with GetTask. None of them starts a run."""
    async with httpx.AsyncClient(timeout=30) as http:
        before = len((await http.get(f"{a2a.url}/v1/runs", params={"limit": 500})).json()["runs"])
        client = await a2a_client(http, a2a.agent_url("ticker"), streaming=False)
        empty = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[new_data_part({"x": 1})])
        with pytest.raises(InvalidParamsError, match="no text part"):
            [r async for r in client.send_message(SendMessageRequest(message=empty))]
        [done] = [r async for r in client.send_message(SendMessageRequest(message=_message("ticks=1")))]
        on_task = _message("more", task_id=done.task.id)
        with pytest.raises(InvalidParamsError, match="answers an approval only"):
            [r async for r in client.send_message(SendMessageRequest(message=on_task))]
        streaming = await a2a_client(http, a2a.agent_url("ticker"))
        with pytest.raises(UnsupportedOperationError, match="GetTask"):
            [r async for r in streaming.subscribe(SubscribeToTaskRequest(id=done.task.id))]
        after = len((await http.get(f"{a2a.url}/v1/runs", params={"limit": 500})).json()["runs"])
    assert after == before + 1


async def test_list_tasks_lists_the_agents_runs_by_context(a2a: A2AServer) -> None:
    """`ListTasks` with a `contextId`: the tasks of that thread, as the journal has them."""
    context = f"ctx-{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(timeout=30) as http:
        client = await a2a_client(http, a2a.agent_url("ticker"), streaming=False)
        sent = [
            (
                await anext(client.send_message(SendMessageRequest(message=_message("ticks=1", context_id=context))))
            ).task.id
            for _ in range(2)
        ]
        listed = await client.list_tasks(ListTasksRequest(context_id=context))
        first = await client.list_tasks(ListTasksRequest(context_id=context, page_size=1))
        second = await client.list_tasks(
            ListTasksRequest(context_id=context, page_size=1, page_token=first.next_page_token)
        )
        with pytest.raises(InvalidParamsError, match="pageToken"):
            await client.list_tasks(ListTasksRequest(context_id=context, page_token="bm9wZQ"))
    assert sorted(t.id for t in listed.tasks) == sorted(sent)
    assert {t.context_id for t in listed.tasks} == {context}
    assert [t.id for t in first.tasks] + [t.id for t in second.tasks] == [t.id for t in listed.tasks]
    assert first.next_page_token and not second.next_page_token
