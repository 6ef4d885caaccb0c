"""How runs end: iteration limits, cancellation, the finish schema, and the request the model gets."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from eudaimon import Agent, CancellationToken, Message, ToolCall, tool
from eudaimon.core.messages import Role
from eudaimon.errors import Cancelled, EudaimonError, MaxIterations, OutputRejected, RunFailedError
from eudaimon.models import ChatRequest, FunctionModel, ScriptedModel
from eudaimon.stores import MemoryStore


@tool(effect="read")
def ping() -> str:
    """Ping."""
    return "pong"


def _looping(n: int) -> list[Message]:
    return [Message.assistant(tool_calls=[ToolCall(f"c{i}", "ping", {})]) for i in range(n)]


async def test_max_iterations_fails_the_run_naming_the_limit() -> None:
    """Invariant: a model that never stops calling tools ends with MaxIterations(limit), journaled."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(_looping(10)), tools=[ping], max_iterations=3, store=store)
    with pytest.raises(MaxIterations) as info:
        await agent.prompt("loop")
    assert info.value.limit == 3 and "max_iterations=3" in str(info.value)
    state = await agent.state(info.value.run_id or "")
    assert state.status == "failed" and state.steps == 3
    assert (await store.load(state.run_id))[-1].type == "run_failed"


def test_default_max_iterations_is_25() -> None:
    """Invariant: the Daimon default of 25 iterations."""
    assert Agent(ScriptedModel([])).decide_config.max_iterations == 25


async def test_cancel_before_an_iteration() -> None:
    """Invariant: a token cancelled before the run starts stops it before any model call."""
    cancel = CancellationToken()
    cancel.cancel("user left")
    agent = Agent(ScriptedModel(["never"]))
    with pytest.raises(Cancelled, match="user left") as info:
        await agent.prompt_with_cancellation("hi", cancel)
    state = await agent.state(info.value.run_id or "")
    assert state.status == "cancelled" and state.steps == 0


async def test_cancel_while_tools_run() -> None:
    """Invariant: cancelling while a tool runs ends the run with run_cancelled; a cut-short
    write tool is recorded as outcome unknown, never as done."""
    cancel = CancellationToken()
    entered = asyncio.Event()

    @tool(effect="write")
    async def slow_write() -> str:
        """Takes forever."""
        entered.set()
        await asyncio.sleep(30)
        return "written"

    store = MemoryStore()
    agent = Agent(
        ScriptedModel([Message.assistant(tool_calls=[ToolCall("w", "slow_write", {})]), "x"]),
        tools=[slow_write],
        store=store,
    )

    async def cancel_soon() -> None:
        await entered.wait()
        cancel.cancel("stop")

    canceller = asyncio.create_task(cancel_soon())
    with pytest.raises(Cancelled) as info:
        await asyncio.wait_for(agent.prompt("go", cancel=cancel), timeout=10)
    await canceller
    types = [e.type for e in await store.load(info.value.run_id or "")]
    assert types[-2:] == ["tool_outcome_unknown", "run_cancelled"]


class Verdict(BaseModel):
    label: str
    score: float


async def test_output_type_validates_the_final_answer() -> None:
    """Invariant: a valid JSON answer becomes structured_output of the declared type."""
    agent = Agent(ScriptedModel(['```json\n{"label": "spam", "score": 0.9}\n```']), output_type=Verdict)
    response = await agent.prompt("classify")
    assert response.structured_output == Verdict(label="spam", score=0.9)
    assert "JSON Schema" in (agent.system_prompt or "")


async def test_rejected_answers_get_a_correction_then_fail_after_three() -> None:
    """Invariant: each invalid final answer appends finish_rejected and a corrective user
    message; the third rejection fails the run."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(["nope", '{"label": 1}', '{"label": "x"}', "never"]), output_type=Verdict, store=store)
    with pytest.raises(OutputRejected) as info:
        await agent.prompt("classify")
    state = await agent.state(info.value.run_id or "")
    assert state.finish_rejections == 3
    corrections = [m.content for m in state.messages if m.role is Role.USER][1:]
    assert len(corrections) == 3 and "not valid JSON" in corrections[0] and "score" in corrections[2]
    assert [e.type for e in await store.load(state.run_id)].count("finish_rejected") == 3


async def test_json_schema_output_type() -> None:
    """Invariant: a JSON Schema dict works as output_type; a second try can succeed."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    response = await Agent(ScriptedModel(['{"n": "x"}', '{"n": 4}']), output_type=schema).prompt("count")
    assert response.structured_output == {"n": 4} and response.iterations == 2


async def test_request_carries_settings_and_tools() -> None:
    """Invariant: temperature, max_tokens and tool specs reach the model in ChatRequest."""
    seen: list[ChatRequest] = []

    def model(request: ChatRequest) -> str:
        seen.append(request)
        return "ok"

    await Agent(FunctionModel(model), tools=[ping], temperature=0.2, max_tokens=99, system_prompt="S").prompt("hi")
    request = seen[0]
    assert (request.temperature, request.max_tokens) == (0.2, 99)
    assert [t.name for t in request.tools] == ["ping"] and request.tools[0].parameters["type"] == "object"
    assert [(m.role, m.content) for m in request.messages] == [(Role.SYSTEM, "S"), (Role.USER, "hi")]


async def test_prompt_with_messages_uses_the_given_conversation() -> None:
    """Invariant: prompt_with_messages sends exactly the messages given."""
    seen: list[int] = []

    def model(request: ChatRequest) -> str:
        seen.append(len(request.messages))
        return "ok"

    history = [Message.system("s"), Message.user("a"), Message.assistant("b"), Message.user("c")]
    response = await Agent(FunctionModel(model)).prompt_with_messages(history)
    assert seen == [4] and response.final_text == "ok"


def test_prompt_sync_runs_without_a_loop() -> None:
    """Invariant: prompt_sync works from plain code and refuses inside a running loop."""
    agent = Agent(ScriptedModel(["hello", "again"]))
    assert agent.prompt_sync("hi").text() == "hello"

    async def inside() -> None:
        with pytest.raises(EudaimonError, match=r"await agent\.prompt"):
            agent.prompt_sync("hi")

    asyncio.run(inside())


async def test_running_out_of_script_is_a_clear_failure() -> None:
    """Invariant: a ScriptedModel without a response left fails the run saying so."""
    with pytest.raises(RunFailedError, match="ran out of responses"):
        await Agent(ScriptedModel(_looping(1)), tools=[ping]).prompt("go")
