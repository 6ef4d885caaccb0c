"""People in the loop: `human_input` answers the model's questions, `approval_policy` decides calls."""

from __future__ import annotations

from typing import Any

from _in_loop_support import answer, call, payloads, types

from eudaimon import Agent, Message, ToolCall, ToolPolicy, tool
from eudaimon.hitl import HumanInputRequest
from eudaimon.models import ScriptedModel
from eudaimon.tools import Tool


class Console:
    """A handler answering from a script, recording what it was asked."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.asked: list[HumanInputRequest] = []

    async def request_input(self, request: HumanInputRequest) -> str:
        self.asked.append(request)
        return self.reply


async def test_human_input_registers_ask_human_and_the_answer_reaches_the_model() -> None:
    """Invariant: Agent(human_input=h) offers an `ask_human` tool; the model's prompt, choices and
    context reach the handler as a HumanInputRequest, and its answer is the tool result the model sees."""
    handler = Console("blue")
    model = ScriptedModel(
        [
            call("ask_human", {"prompt": "Which colour?", "choices": ["red", "blue"], "context": "for the logo"}),
            answer("Blue it is."),
        ]
    )
    agent = Agent(model, human_input=handler)
    assert "ask_human" in agent.tools
    response = await agent.prompt("design a logo")
    assert "ask_human" in [spec.name for spec in model.requests[0].tools]
    assert handler.asked == [HumanInputRequest("Which colour?", ("red", "blue"), "for the logo")]
    seen = model.requests[1].messages[-1]
    assert (seen.role, seen.content, seen.is_error) == ("tool", "blue", False)
    (completed,) = await payloads(agent, response.run_id, "tool_completed")
    assert (completed.tool, completed.output) == ("ask_human", "blue")
    assert response.final_text == "Blue it is."


async def test_sync_handler_and_a_question_without_choices() -> None:
    """Invariant: a sync request_input works too; choices and context are optional."""

    class Sync:
        def __init__(self) -> None:
            self.asked: list[HumanInputRequest] = []

        def request_input(self, request: HumanInputRequest) -> str:
            self.asked.append(request)
            return "42"

    handler = Sync()
    agent = Agent(ScriptedModel([call("ask_human", {"prompt": "How many?"}), answer("ok")]), human_input=handler)
    await agent.prompt("count")
    assert handler.asked == [HumanInputRequest("How many?", (), None)]


@tool(effect="write")
def delete_everything() -> str:
    """Deletes everything."""
    raise AssertionError("a denied tool must never run")


@tool(effect="read")
def look() -> str:
    """Looks."""
    return "looked"


@tool(effect="write")
def send(to: str) -> str:
    """Sends."""
    return f"sent to {to}"


def policy(call: ToolCall, tool: Tool) -> ToolPolicy:
    return {"delete_everything": ToolPolicy.DENY, "send": ToolPolicy.REQUIRE_APPROVAL}.get(call.name, ToolPolicy.ALLOW)


async def test_approval_policy_deny_journals_tool_denied_and_the_model_sees_an_error() -> None:
    """Invariant: a DENY from the approval policy journals tool_denied (no intent: the tool never runs)
    and the model receives an error result; ALLOW runs the call."""
    model = ScriptedModel(
        [
            Message.assistant(tool_calls=[ToolCall("d", "delete_everything", {}), ToolCall("l", "look", {})]),
            answer("fine"),
        ]
    )
    agent = Agent(model, tools=[delete_everything, look], approval_policy=policy)
    response = await agent.prompt("clean up")
    (denied,) = await payloads(agent, response.run_id, "tool_denied")
    assert (denied.call_id, denied.tool) == ("d", "delete_everything")
    assert [s.call_id for s in await payloads(agent, response.run_id, "tool_started")] == ["l"]
    results = {m.tool_call_id: m for m in model.requests[1].messages if m.role == "tool"}
    assert results["d"].is_error and "denied" in results["d"].content
    assert (results["l"].content, results["l"].is_error) == ("looked", False)


async def test_approval_policy_require_approval_pauses_until_a_human_decides() -> None:
    """Invariant: REQUIRE_APPROVAL journals approval_requested and pauses the run; approve + resume runs it."""
    agent = Agent(
        ScriptedModel([call("send", {"to": "ann"}, id="s"), answer("sent")]), tools=[send], approval_policy=policy
    )
    paused = await agent.prompt("mail ann")
    assert paused.status == "awaiting_approval" and [p.id for p in paused.pending_approvals] == ["s"]
    assert (await types(agent, paused.run_id))[-1] == "approval_requested"
    await agent.approve(paused.run_id, "s", True, by="ops")
    done = await agent.resume(paused.run_id)
    assert done.final_text == "sent"
    (completed,) = await payloads(agent, done.run_id, "tool_completed")
    assert completed.output == "sent to ann"


async def test_async_approval_policy_is_awaited() -> None:
    """Invariant: an async approval policy is awaited, and its string verdict accepted."""

    async def deny_all(call: ToolCall, tool: Tool) -> Any:
        return "deny"

    agent = Agent(ScriptedModel([call("look"), answer("ok")]), tools=[look], approval_policy=deny_all)
    response = await agent.prompt("go")
    assert len(await payloads(agent, response.run_id, "tool_denied")) == 1
