"""Spans per run attempt, model call and tool call, with GenAI semantic-convention attributes,
cost and run id; content only when opted in; never an idempotency key."""

from __future__ import annotations

from _spans import Spans

from eudaimon import Agent, tool
from eudaimon.core.digest import idempotency_key
from eudaimon.core.messages import Message, ToolCall, Usage
from eudaimon.models import ChatResponse, ScriptedModel, StopReason


class FlatPrice:
    def cost_per_token(self, model_id: str, direction: object) -> float:
        return 0.001


@tool(effect="read")
def lookup(key: str) -> str:
    """Look a key up."""
    return f"secret-free value of {key}"


def _agent() -> Agent:
    model = ScriptedModel(
        [
            ChatResponse(
                Message.assistant(None, [ToolCall("c1", "lookup", {"key": "k"})]), StopReason.TOOL_USE, Usage(10, 2)
            ),
            ChatResponse(Message.assistant("the value"), StopReason.END_TURN, Usage(20, 3)),
        ],
        model_id="gpt-test",
    )
    return Agent(model, name="helper", tools=[lookup], cost_model=FlatPrice())


async def test_one_span_per_run_model_call_and_tool_call(spans: Spans) -> None:
    """Invariant: `invoke_agent {name}` holds two `chat {model}` spans and one `execute_tool {name}`,
    with the conventions' attributes, cost and run id."""
    response = await _agent().prompt("find k", thread_id="t1")
    [run] = spans.named("invoke_agent")
    chats = spans.named("chat")
    [execution] = spans.named("execute_tool")
    assert run.name == "invoke_agent helper" and [c.name for c in chats] == ["chat gpt-test"] * 2
    assert execution.name == "execute_tool lookup"
    assert all(s.parent is not None and s.parent.span_id == run.context.span_id for s in [*chats, execution])

    assert run.attributes is not None and chats[0].attributes is not None and execution.attributes is not None
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.agent.name"] == "helper"
    assert run.attributes["gen_ai.conversation.id"] == "t1"
    assert run.attributes["eudaimon.run_id"] == response.run_id
    assert run.attributes["gen_ai.usage.input_tokens"] == 30
    assert run.attributes["eudaimon.cost_usd"] == response.cost

    first = chats[0].attributes
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.provider.name"] == "scripted"
    assert (first["gen_ai.request.model"], first["gen_ai.response.model"]) == ("gpt-test", "gpt-test")
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (10, 2)
    assert tuple(first["gen_ai.response.finish_reasons"]) == ("tool_use",)  # type: ignore[arg-type]
    assert first["eudaimon.cost_usd"] == 0.012

    tool_attrs = execution.attributes
    assert tool_attrs["gen_ai.operation.name"] == "execute_tool"
    assert (tool_attrs["gen_ai.tool.name"], tool_attrs["gen_ai.tool.call.id"]) == ("lookup", "c1")
    assert tool_attrs["eudaimon.run_id"] == response.run_id


async def test_content_only_when_opted_in(spans: Spans) -> None:
    """Invariant: by default no message text, argument or result is an attribute."""
    await _agent().prompt("find k")
    values = [str(v) for s in spans.all() for v in (s.attributes or {}).values()]
    assert not any("find k" in v or "secret-free value" in v or '"key"' in v for v in values)


async def test_content_when_opted_in(content_spans: Spans) -> None:
    """Invariant: with capture_content=True, messages, arguments and results are recorded."""
    await _agent().prompt("find k")
    [execution] = content_spans.named("execute_tool")
    assert execution.attributes is not None
    assert "secret-free value of k" in str(execution.attributes["gen_ai.tool.call.result"])
    assert '"key"' in str(execution.attributes["gen_ai.tool.call.arguments"])
    chat = content_spans.named("chat")[0]
    assert chat.attributes is not None and "find k" in str(chat.attributes["gen_ai.input.messages"])


async def test_no_idempotency_key_in_any_attribute(content_spans: Spans) -> None:
    """Invariant: not even with content captured does a raw idempotency key reach a span."""
    response = await _agent().prompt("find k")
    key = idempotency_key(response.run_id, "c1")
    for span in content_spans.all():
        assert all(key not in str(v) for v in (span.attributes or {}).values()), span.name


async def test_a_child_run_nests_under_the_call_that_started_it(spans: Spans) -> None:
    """Invariant: an agent used as a tool traces its run under the parent's `execute_tool` span."""
    child = Agent(ScriptedModel(["42"]), name="researcher")
    parent = Agent(
        ScriptedModel([Message.assistant(None, [ToolCall("c1", "researcher", {"input": "q"})]), "done"]),
        name="boss",
        tools=[child.as_tool()],
    )
    await parent.prompt("ask")
    [call] = spans.named("execute_tool researcher")
    [child_run] = spans.named("invoke_agent researcher")
    assert child_run.parent is not None and child_run.parent.span_id == call.context.span_id
    assert call.attributes is not None and str(call.attributes["eudaimon.child_run_id"]).endswith(".c1")
