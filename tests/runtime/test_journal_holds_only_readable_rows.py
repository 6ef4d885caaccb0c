"""The journal only holds what it can read back: what the runtime appends is checked first.

Bugs: a model (or a provider conversion) answering with a tool call with an int id, a `None`
name or list arguments, a message with `content=None`, or float usage made `prompt()` return
`completed` (pydantic only warned while writing), after the tool had run; from then on `state`,
`resume` and `runs show` raised `CorruptEvent`. Tool arguments nested 5,000 deep left the run
`running`, with no terminal event, and a `CorruptEvent` about a row that was never written.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.core.errors import InvalidEvent, RunFailedError
from eudaimon.core.events import ModelFailed, RunFailed, ToolStarted
from eudaimon.core.messages import Role, Usage
from eudaimon.middleware import Middleware, ToolCallRequest
from eudaimon.models import ChatRequest, ChatResponse, FunctionModel
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.sqlite import SqliteStore


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def _assistant(**fields: Any) -> Message:
    return Message(role=Role.ASSISTANT, **fields)


MALFORMED: dict[str, Callable[[], ChatResponse]] = {
    "int call id": lambda: ChatResponse(_assistant(tool_calls=(ToolCall(5, "look", {}),))),  # type: ignore[arg-type]
    "None tool name": lambda: ChatResponse(_assistant(tool_calls=(ToolCall("c", None, {}),))),  # type: ignore[arg-type]
    "list arguments": lambda: ChatResponse(_assistant(tool_calls=(ToolCall("c", "look", [1, 2]),))),  # type: ignore[arg-type]
    "content None": lambda: ChatResponse(_assistant(content=None)),
    "float usage": lambda: ChatResponse(_assistant(content="hi"), usage=Usage(1.5, 2)),  # type: ignore[arg-type]
    "arguments 5000 deep": lambda: ChatResponse(_assistant(tool_calls=(ToolCall("c", "look", _nested(5000)),))),
    "object in arguments": lambda: ChatResponse(_assistant(tool_calls=(ToolCall("c", "look", {"x": object()}),))),
    "usage is not a Usage": lambda: ChatResponse(_assistant(content="hi"), usage={"input_tokens": 1}),  # type: ignore[arg-type]
    "message not a Message": lambda: ChatResponse(42),  # type: ignore[arg-type]
}


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    built = SqliteStore(tmp_path / "runs.db")
    try:
        yield built
    finally:
        await built.close()


def _agent(store: SqliteStore, answer: Callable[[ChatRequest], Any], ran: list[str], **options: Any) -> Agent:
    @tool(effect="read")
    def look(x: Any = None) -> str:
        """Look."""
        ran.append("look")
        return "seen"

    @tool(effect="read")
    def peek() -> str:
        """Peek."""
        ran.append("peek")
        return "peeked"

    return Agent(FunctionModel(answer), tools=[look, peek], store=store, **options)


@pytest.mark.parametrize("case", sorted(MALFORMED))
async def test_a_malformed_model_response_fails_the_attempt_and_the_journal_reads_back(
    store: SqliteStore, case: str
) -> None:
    """Invariant: a model response that could not be journaled is a `ModelResponseInvalid`
    failure of that attempt — `model_failed` then `run_failed`, journaled — no tool runs, and
    every reader of the run (state, resume) reads the journal back."""
    ran: list[str] = []
    agent = _agent(store, lambda request: MALFORMED[case](), ran)
    with pytest.raises(RunFailedError, match="ModelResponseInvalid"):
        await agent.prompt("go", run_id="r")
    assert ran == []
    events = await store.load("r")
    failed = [e.data for e in events if isinstance(e.data, ModelFailed)]
    assert len(failed) == 1 and failed[0].error.startswith("ModelResponseInvalid")
    assert isinstance(events[-1].data, RunFailed) and events[-1].data.exception == "ModelResponseInvalid"
    state = await load_state(store, "r")
    assert state.status == "failed" and state.next_seq == len(events)
    with pytest.raises(RunFailedError):
        await agent.resume("r")  # reads back and reports how the run ended, no CorruptEvent


async def test_tool_calls_given_as_a_list_are_the_tuple_they_mean(store: SqliteStore) -> None:
    """Invariant: a loose but readable response (tool calls in a list) is not refused."""
    ran: list[str] = []

    def answer(request: ChatRequest) -> Any:
        if request.messages[-1].role == "tool":
            return "done"
        return _assistant(tool_calls=[ToolCall("c", "peek", {})])

    assert (await _agent(store, answer, ran).prompt("go")).final_text == "done"
    assert ran == ["peek"]


class Deepen(Middleware):
    """Rewrites a call's arguments into a value nested deeper than a journal row may hold."""

    async def on_tool_call(self, request: ToolCallRequest) -> Any:
        request.arguments = {"x": _nested(5000)}


async def test_arguments_that_cannot_be_journaled_are_an_error_result_and_the_state_stays_with_the_journal(
    store: SqliteStore,
) -> None:
    """Invariant: a call whose (rewritten) arguments cannot be journaled does not run; the model
    sees an error result; the run completes; the live state equals the fold of the journal."""
    ran: list[str] = []

    def answer(request: ChatRequest) -> Any:
        last = request.messages[-1]
        if last.role == "tool":
            return f"saw: {last.content}"
        return Message.assistant(tool_calls=[ToolCall("c", "look", {})])

    agent = _agent(store, answer, ran, middleware=[Deepen()])
    done = await agent.prompt("go", run_id="deep")
    assert ran == []
    assert done.status == "completed" and done.final_text.startswith("saw: ")
    assert "cannot be journaled" in done.final_text or "nested too deeply" in done.final_text
    events = await store.load("deep")
    assert not any(isinstance(e.data, ToolStarted) for e in events)
    assert (await load_state(store, "deep")).messages == done.messages


async def test_raw_arguments_nested_5000_deep_are_an_error_the_model_sees(store: SqliteStore) -> None:
    """Invariant: raw argument JSON too deep to read is invalid arguments (an error result),
    never a `RecursionError` that ends the run."""
    ran: list[str] = []
    deep = '{"x": ' + "[" * 5000 + "]" * 5000 + "}"

    def answer(request: ChatRequest) -> Any:
        last = request.messages[-1]
        if last.role == "tool":
            return f"saw: {last.content}"
        return Message.assistant(tool_calls=[ToolCall("c", "look", deep)])

    done = await _agent(store, answer, ran).prompt("go")
    assert ran == [] and done.status == "completed"
    assert "nested too deeply" in done.final_text or "recursion" in done.final_text


async def test_input_the_api_does_not_accept_is_refused_before_anything_is_written(store: SqliteStore) -> None:
    """Invariant: a prompt the journal could not hold (a message that is not text) raises
    `InvalidEvent` and writes nothing; a decision whose `by` is not text likewise."""
    agent = _agent(store, lambda request: "hi", [])
    with pytest.raises(InvalidEvent, match="run_started"):
        await agent.prompt_with_messages([Message(role=Role.USER, content=b"bytes")], run_id="bad")  # type: ignore[arg-type]
    assert await store.load("bad") == []
    with pytest.raises(TypeError, match="prompt input is a int"):
        await agent.prompt(123, run_id="bad2")  # type: ignore[arg-type]
    assert await store.load("bad2") == []
