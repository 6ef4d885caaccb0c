"""The AG-UI stream of a run is its journal: a real `eudaimon serve --ag-ui`, read as any AG-UI
client reads it, every event parsed with `ag-ui-protocol`'s models, in the order the protocol
requires, with the journal's content; a client that reconnects with the same `runId` gets the
run again from the journal and follows it on; an approval is an interrupt a `resume` answers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _a2a_support import A2AServer
from _server_support import KEYS, OPERATOR, VIEWER
from ag_ui.core import BaseEvent, Event, EventType
from pydantic import TypeAdapter

EVENT = TypeAdapter(Event)
ENDS = {EventType.RUN_FINISHED, EventType.RUN_ERROR}


@pytest.fixture(scope="module")
def ag_ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[A2AServer]:
    running = A2AServer(
        tmp_path_factory.mktemp("ag-ui") / "runs.db",
        agents=("_server_agents:payer", "_server_agents:ticker", "_a2a_agents:failing"),
        args=("--ag-ui",),
        env={"EUDAIMON_TEST_STEP_S": "0.2"},
    ).start()
    yield running
    running.stop()


def _input(run_id: str, text: str = "", **more: Any) -> dict[str, Any]:
    messages = [{"id": "u1", "role": "user", "content": text}] if text else []
    return {"threadId": f"thread-{run_id}", "runId": run_id, "messages": messages, **more}


def _events(response: httpx.Response, *, stop_after: EventType | None = None) -> list[BaseEvent]:
    """Each `data:` line of the stream, validated as an AG-UI event (any invalid one fails here)."""
    parsed: list[BaseEvent] = []
    for line in response.iter_lines():
        if line.startswith("data: "):
            parsed.append(EVENT.validate_json(line.removeprefix("data: ")))
            if parsed[-1].type == stop_after:
                break
    return parsed


def _run(server: A2AServer, body: dict[str, Any], **kwargs: Any) -> list[BaseEvent]:
    with (
        httpx.Client(base_url=server.url, timeout=60) as http,
        http.stream("POST", "/v1/agents/" + body.pop("agent", "ticker") + "/ag-ui", json=body) as response,
    ):
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return _events(response, **kwargs)


def check_order(events: list[BaseEvent], *, ended_before: frozenset[str] = frozenset()) -> None:
    """The order AG-UI requires: one run, opened first and closed last; each text message and
    tool call started before its content and ended after it; a result only for an ended call
    (of this run, or of the interrupted run this one resumes: `ended_before`)."""
    assert events[0].type == EventType.RUN_STARTED
    assert events[-1].type in ENDS
    texts: set[str] = set()
    calls: set[str] = set()
    ended: set[str] = set(ended_before)
    for event in events[1:-1]:
        data = event.model_dump()
        assert event.type not in {EventType.RUN_STARTED, *ENDS}, f"a second run boundary inside the run: {data}"
        if event.type == EventType.TEXT_MESSAGE_START:
            assert data["message_id"] and data["message_id"] not in texts
            texts.add(data["message_id"])
        elif event.type == EventType.TEXT_MESSAGE_CONTENT:
            assert data["message_id"] in texts and data["delta"]
        elif event.type == EventType.TEXT_MESSAGE_END:
            texts.remove(data["message_id"])
        elif event.type == EventType.TOOL_CALL_START:
            assert data["tool_call_id"] and data["parent_message_id"]
            calls.add(data["tool_call_id"])
        elif event.type == EventType.TOOL_CALL_ARGS:
            assert data["tool_call_id"] in calls
        elif event.type == EventType.TOOL_CALL_END:
            calls.remove(data["tool_call_id"])
            ended.add(data["tool_call_id"])
        elif event.type == EventType.TOOL_CALL_RESULT:
            assert data["tool_call_id"] in ended
    assert not texts and not calls, "a text message or tool call was never ended"


def _journal(server: A2AServer, run_id: str) -> list[dict[str, Any]]:
    with server.client() as http:
        events: list[dict[str, Any]] = http.get(f"/v1/runs/{run_id}/events").json()["events"]
        return events


def _of(events: list[BaseEvent], kind: EventType) -> list[dict[str, Any]]:
    return [e.model_dump() for e in events if e.type == kind]


def test_every_event_is_valid_in_order_and_says_what_the_journal_says(ag_ui: A2AServer) -> None:
    run_id = f"agui-{uuid.uuid4().hex[:12]}"
    events = _run(ag_ui, _input(run_id, "ticks=2"))
    check_order(events)
    started = events[0].model_dump()
    assert (started["thread_id"], started["run_id"]) == (f"thread-{run_id}", run_id)
    assert events[1].type == EventType.STATE_SNAPSHOT
    journal = _journal(ag_ui, run_id)
    assert [e["type"] for e in journal[:2]] == ["run_queued", "run_started"]  # journaled before the answer
    assert events[1].model_dump()["snapshot"]["status"] == "queued"  # the stream opens on run_queued
    answers = [e["message"] for e in journal if e["type"] == "model_called"]
    assert [e["delta"] for e in _of(events, EventType.TEXT_MESSAGE_CONTENT)] == [
        m["content"] for m in answers if m["content"]
    ]
    assert [e["tool_call_id"] for e in _of(events, EventType.TOOL_CALL_START)] == [
        c["id"] for m in answers for c in m["tool_calls"]
    ]
    completed = [e for e in journal if e["type"] == "tool_completed"]
    assert [(e["tool_call_id"], e["content"]) for e in _of(events, EventType.TOOL_CALL_RESULT)] == [
        (e["call_id"], e["output"]) for e in completed
    ]
    [finished] = _of(events, EventType.RUN_FINISHED)
    assert finished["result"] == journal[-1]["output"]
    status = [op["value"] for d in _of(events, EventType.STATE_DELTA) for op in d["delta"] if op["path"] == "/status"]
    assert status == ["running", "completed"]
    with ag_ui.client() as http:
        run = http.get(f"/v1/runs/{run_id}").json()
    assert run["thread_id"] == f"thread-{run_id}"


def test_a_run_on_a_busy_thread_opens_queued_and_begins_when_the_run_before_it_ends(ag_ui: A2AServer) -> None:
    """A second `runId` on a thread whose run is working: journaled at once (`run_queued`), its
    stream opens with RUN_STARTED and a `queued` snapshot; it begins only after the first ends."""
    first, second = (f"agui-{uuid.uuid4().hex[:12]}" for _ in range(2))
    thread = f"thread-{first}"
    opened = _run(ag_ui, _input(first, "ticks=100000"), stop_after=EventType.STATE_SNAPSHOT)
    waiting = _run(ag_ui, {**_input(second, "ticks=1"), "threadId": thread}, stop_after=EventType.STATE_SNAPSHOT)
    assert [e.type for e in waiting] == [EventType.RUN_STARTED, EventType.STATE_SNAPSHOT]
    assert waiting[1].model_dump()["snapshot"]["status"] == "queued"
    assert [e["type"] for e in _journal(ag_ui, second)] == ["run_queued"]
    assert opened[0].model_dump()["run_id"] == first
    with ag_ui.client() as http:
        assert http.post(f"/v1/runs/{first}/cancel", json={}).status_code == 200
    events = _run(ag_ui, {**_input(second), "threadId": thread})
    check_order(events)
    assert events[-1].type == EventType.RUN_FINISHED and events[-1].model_dump()["result"]
    status = [op["value"] for d in _of(events, EventType.STATE_DELTA) for op in d["delta"] if op["path"] == "/status"]
    assert status == ["running", "completed"]
    began = next(e for e in _journal(ag_ui, second) if e["type"] == "run_started")
    assert began["at"] >= _journal(ag_ui, first)[-1]["at"], "the second run began before the first ended"


def test_a_client_that_reconnects_gets_the_run_from_the_journal_and_follows_it(ag_ui: A2AServer) -> None:
    """The first stream is dropped mid-run; the same `runId` again starts nothing, replays what
    the journal holds and follows the run to its end; a third time replays the same events."""
    run_id = f"agui-{uuid.uuid4().hex[:12]}"
    first = _run(ag_ui, _input(run_id, "ticks=4"), stop_after=EventType.TOOL_CALL_RESULT)
    assert first[-1].type == EventType.TOOL_CALL_RESULT
    again = _run(ag_ui, _input(run_id, "this input is not used: the run exists"))
    check_order(again)
    assert [e.model_dump() for e in again[: len(first)]] == [e.model_dump() for e in first]
    assert len(_of(again, EventType.TOOL_CALL_RESULT)) == 4
    replayed = _run(ag_ui, _input(run_id))
    assert [e.model_dump() for e in replayed] == [e.model_dump() for e in again]
    assert sum(e["type"] == "run_started" for e in _journal(ag_ui, run_id)) == 1


def test_an_approval_is_an_interrupt_that_a_resume_answers(ag_ui: A2AServer) -> None:
    """A call waiting for approval: a CUSTOM `eudaimon.approval_requested`, then RUN_FINISHED
    with an `interrupt` outcome naming the call; a resume entry approving it continues the run."""
    run_id = f"agui-{uuid.uuid4().hex[:12]}"
    paused = _run(ag_ui, {**_input(run_id, "pay 5 to ANN"), "agent": "payer"})
    check_order(paused)
    [asked] = _of(paused, EventType.CUSTOM)
    assert asked["name"] == "eudaimon.approval_requested" and asked["value"]["call_id"] == "wire_1"
    outcome = paused[-1].model_dump()["outcome"]
    assert outcome["type"] == "interrupt"
    assert [(i["id"], i["tool_call_id"]) for i in outcome["interrupts"]] == [("wire_1", "wire_1")]
    resume = [{"interruptId": "wire_1", "status": "resolved", "payload": {"approved": True, "note": "fine"}}]
    resumed = _run(ag_ui, {**_input(run_id, resume=resume), "agent": "payer"})
    check_order(resumed, ended_before=frozenset({"wire_1"}))
    [decided] = _of(resumed, EventType.CUSTOM)
    assert decided["value"] == {
        "seq": decided["value"]["seq"],
        "call_id": "wire_1",
        "approved": True,
        "by": "anonymous",
        "note": "fine",
    }
    [result] = _of(resumed, EventType.TOOL_CALL_RESULT)
    assert result["content"] == "sent $5.00 to ANN"
    assert resumed[-1].model_dump()["result"] == "Done: sent $5.00 to ANN."


def test_a_failed_run_ends_with_run_error(ag_ui: A2AServer) -> None:
    """`run_failed`: the stream ends with RUN_ERROR, its message the run's error, code `failed`."""
    run_id = f"agui-{uuid.uuid4().hex[:12]}"
    events = _run(ag_ui, {**_input(run_id, "go"), "agent": "failing"})
    check_order(events)
    error = events[-1].model_dump()
    assert events[-1].type == EventType.RUN_ERROR and error["code"] == "failed"
    with ag_ui.client() as http:
        assert error["message"] == http.get(f"/v1/runs/{run_id}").json()["error"]


def test_bad_input_is_refused_saying_why_and_starts_nothing(ag_ui: A2AServer) -> None:
    """A runId that cannot be a run id, a new run with no user message, a resume of a run that
    waits for nothing: 4xx naming the fix, and no run journaled."""
    done = f"agui-{uuid.uuid4().hex[:12]}"
    _run(ag_ui, _input(done, "ticks=1"))
    with httpx.Client(base_url=ag_ui.url, timeout=30) as http:
        bad_id = http.post("/v1/agents/ticker/ag-ui", json=_input("not a run id!", "hi"))
        assert bad_id.status_code == 422 and "runId must match" in bad_id.text
        silent = f"agui-{uuid.uuid4().hex[:12]}"
        no_user = http.post("/v1/agents/ticker/ag-ui", json=_input(silent))
        assert no_user.status_code == 422 and "no user message" in no_user.text
        resume = [{"interruptId": "x", "status": "resolved", "payload": {"approved": True}}]
        late = http.post("/v1/agents/ticker/ag-ui", json=_input(done, resume=resume))
        assert late.status_code == 409 and "nothing waits" in late.text
        elsewhere = http.post("/v1/agents/ticker/ag-ui", json={**_input(done), "threadId": "another"})
        assert elsewhere.status_code == 409 and f"thread-{done}" in elsewhere.text
        assert http.get(f"/v1/runs/{silent}").status_code == 404


def test_a_client_reconnecting_after_a_server_kill_gets_the_whole_run(tmp_path: Path) -> None:
    """The server is killed -9 mid-run and restarted on its store: the same `runId` posted again
    replays what the journal holds and follows the run, which recovery finishes, to RUN_FINISHED."""
    server = A2AServer(tmp_path / "runs.db", args=("--ag-ui",), env={"EUDAIMON_TEST_STEP_S": "0.3"})
    server.start()
    run_id = f"agui-{uuid.uuid4().hex[:12]}"
    try:
        first = _run(server, _input(run_id, "ticks=6"), stop_after=EventType.TOOL_CALL_RESULT)
        server.kill()
        server.start()
        again = _run(server, _input(run_id, "ticks=6"))
        check_order(again)
        assert [e.model_dump() for e in again[: len(first)]] == [e.model_dump() for e in first]
        assert again[-1].type == EventType.RUN_FINISHED
        assert len(_of(again, EventType.TOOL_CALL_RESULT)) == 6
        assert sum(e["type"] == "run_started" for e in _journal(server, run_id)) == 1
    finally:
        server.stop()


def test_keys_apply_a_viewer_may_replay_but_not_start_or_resume(tmp_path: Path) -> None:
    server = A2AServer(tmp_path / "runs.db", args=("--ag-ui",), env={"EUDAIMON_API_KEYS": KEYS})
    server.start()
    run_id = f"agui-{uuid.uuid4().hex[:12]}"
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            url = "/v1/agents/payer/ag-ui"
            assert http.post(url, json=_input(run_id, "pay 1 to X")).status_code == 401
            viewer = {"Authorization": f"Bearer {VIEWER}"}
            refused = http.post(url, json=_input(run_id, "pay 1 to X"), headers=viewer)
            assert refused.status_code == 403 and "operator" in refused.text
            operator = {"Authorization": f"Bearer {OPERATOR}"}
            with http.stream("POST", url, json=_input(run_id, "pay 1 to X"), headers=operator) as started:
                paused = _events(started)
            with http.stream("POST", url, json=_input(run_id), headers=viewer) as replayed:
                assert [e.model_dump() for e in _events(replayed)] == [e.model_dump() for e in paused]
            resume = [{"interruptId": "wire_1", "status": "resolved", "payload": {"approved": True}}]
            assert http.post(url, json=_input(run_id, resume=resume), headers=viewer).status_code == 403
            queued = http.get(f"/v1/runs/{run_id}/events", headers=viewer).json()["events"][0]
            assert (queued["type"], queued["principal"]) == ("run_queued", "alice")  # who started it
    finally:
        server.stop()
