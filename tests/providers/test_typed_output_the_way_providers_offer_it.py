"""Typed output is asked for the way each provider offers it: OpenAI (and the servers that
speak its API) through `response_format` json_schema, Anthropic through a tool whose input is
the schema, any other model in the prompt; `NativeOutput` / `ToolOutput` / `PromptedOutput`
force one. The fakes are real HTTP servers answered through the official SDKs."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from eudaimon import Agent, NativeOutput, PromptedOutput, ToolOutput, tool
from eudaimon.core.messages import Message
from eudaimon.errors import ConfigurationError
from eudaimon.models import ChatRequest, ChatResponse, FunctionModel
from eudaimon.streaming import Done


class City(BaseModel):
    name: str
    population: int


CITY = {"name": "Lyon", "population": 522000}


@tool(effect="read")
def lookup(name: str) -> str:
    """Facts about a city."""
    return f"{name}: 522000 people"


def _system(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")


async def test_bare_type_on_openai_is_asked_with_response_format_json_schema(openai_server, openai_model):
    """Invariant: a bare `output_type` on an OpenAI model sends `response_format` json_schema
    with the type's schema, and no JSON instruction in the system prompt."""
    openai_server.reply(openai_server.completion(json.dumps(CITY)))
    agent = Agent(openai_model, output_type=City, system_prompt="You know cities.")
    response = await agent.prompt("Lyon?")
    assert response.output == City(**CITY)
    [sent] = openai_server.requests
    fmt = sent.body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "City"
    assert fmt["json_schema"]["schema"] == City.model_json_schema()
    assert "strict" not in fmt["json_schema"]
    assert "JSON Schema" not in _system(sent.body)
    assert "tools" not in sent.body


async def test_native_output_strict_reaches_openai_and_streams(openai_server, openai_model):
    """`NativeOutput(strict=True, name=…)` travel as given, streamed requests included."""
    text = json.dumps(CITY)
    openai_server.reply(
        openai_server.stream(
            [
                openai_server.chunk({"role": "assistant", "content": text[:10]}),
                openai_server.chunk({"content": text[10:]}, finish_reason="stop"),
                openai_server.chunk(usage={"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}),
            ]
        )
    )
    agent = Agent(openai_model, output_type=NativeOutput(City, name="city", strict=True))
    events = [e async for e in agent.prompt_stream("Lyon?")]
    done = events[-1]
    assert isinstance(done, Done) and done.status == "completed"
    assert (await agent.state(done.run_id)).structured_output == CITY
    [sent] = openai_server.requests
    assert sent.body["response_format"]["json_schema"]["name"] == "city"
    assert sent.body["response_format"]["json_schema"]["strict"] is True


async def test_tool_output_on_openai_forces_the_output_tool_and_reads_its_arguments(openai_server, openai_model):
    """Invariant: `ToolOutput` offers a tool whose parameters are the schema, forced when it is
    the only tool, and the answer is its arguments."""
    call = openai_server.tool_call("c1", "final_result", json.dumps(CITY))
    openai_server.reply(openai_server.completion(None, tool_calls=[call], finish_reason="tool_calls"))
    agent = Agent(openai_model, output_type=ToolOutput(City))
    response = await agent.prompt("Lyon?")
    assert response.output == City(**CITY)
    [sent] = openai_server.requests
    [offered] = sent.body["tools"]
    assert offered["function"]["name"] == "final_result"
    assert offered["function"]["parameters"] == City.model_json_schema()
    assert sent.body["tool_choice"] == {"type": "function", "function": {"name": "final_result"}}
    assert "response_format" not in sent.body


async def test_tool_output_beside_other_tools_requires_a_tool_and_runs_them_first(openai_server, openai_model):
    """With other tools the model must call some tool (`required`): the agent's tools run, and
    the output tool's call ends the run."""
    openai_server.reply(
        openai_server.completion(
            None, tool_calls=[openai_server.tool_call("c1", "lookup", '{"name": "Lyon"}')], finish_reason="tool_calls"
        ),
        openai_server.completion(
            None,
            tool_calls=[openai_server.tool_call("c2", "answer", json.dumps(CITY))],
            finish_reason="tool_calls",
        ),
    )
    agent = Agent(openai_model, tools=[lookup], output_type=ToolOutput(City, name="answer"))
    response = await agent.prompt("Lyon?")
    assert response.output == City(**CITY)
    first, second = openai_server.requests
    assert [t["function"]["name"] for t in first.body["tools"]] == ["lookup", "answer"]
    assert first.body["tool_choice"] == "required"
    assert any(m.get("role") == "tool" for m in second.body["messages"])


async def test_bare_type_on_anthropic_is_a_tool_whose_input_is_the_schema(anthropic_server, anthropic_model):
    """Invariant: Anthropic is asked through a tool (`input_schema` = the schema, forced), and
    the answer is the tool's input."""
    anthropic_server.reply(
        anthropic_server.message(
            [{"type": "tool_use", "id": "tu_1", "name": "final_result", "input": CITY}], stop_reason="tool_use"
        )
    )
    agent = Agent(anthropic_model, output_type=City, system_prompt="You know cities.")
    response = await agent.prompt("Lyon?")
    assert response.output == City(**CITY)
    [sent] = anthropic_server.requests
    [offered] = sent.body["tools"]
    assert offered["name"] == "final_result" and offered["input_schema"] == City.model_json_schema()
    assert sent.body["tool_choice"] == {"type": "tool", "name": "final_result"}
    assert "JSON Schema" not in str(sent.body.get("system"))


async def test_anthropic_streamed_tool_output(anthropic_server, anthropic_model):
    """The output tool's input streamed in pieces is the answer too."""
    text = json.dumps(CITY)
    anthropic_server.reply(
        anthropic_server.stream(
            [
                anthropic_server.message_start(),
                *anthropic_server.tool_block(0, "tu_1", "final_result", [text[:8], text[8:]]),
                *anthropic_server.message_end("tool_use"),
            ]
        )
    )
    agent = Agent(anthropic_model, output_type=City)
    events = [e async for e in agent.prompt_stream("Lyon?")]
    done = events[-1]
    assert isinstance(done, Done) and done.status == "completed"
    assert (await agent.state(done.run_id)).structured_output == CITY
    [sent] = anthropic_server.requests
    assert sent.body["tools"][0]["name"] == "final_result"


async def test_native_output_on_anthropic_is_refused_at_build(anthropic_model):
    """A forced mode the provider does not have is a configuration error, naming the others."""
    with pytest.raises(ConfigurationError, match="no native structured output; use ToolOutput, PromptedOutput"):
        Agent(anthropic_model, output_type=NativeOutput(City))


async def test_prompted_output_asks_in_the_system_prompt_only(openai_server, openai_model):
    """Invariant: `PromptedOutput` sends the schema in the system prompt, no response_format."""
    openai_server.reply(openai_server.completion("```json\n" + json.dumps(CITY) + "\n```"))
    agent = Agent(openai_model, output_type=PromptedOutput(City))
    response = await agent.prompt("Lyon?")
    assert response.output == City(**CITY)
    [sent] = openai_server.requests
    assert "response_format" not in sent.body
    assert "JSON Schema" in _system(sent.body)


async def test_a_model_without_output_modes_is_prompted_and_a_forced_mode_reaches_it():
    """A model that declares nothing is asked in the prompt; a forced mode is passed to it in
    `ChatRequest.output`, for a model of your own to honour."""
    seen: list[ChatRequest] = []

    def answer(request: ChatRequest) -> ChatResponse:
        seen.append(request)
        return ChatResponse(Message.assistant(json.dumps(CITY)))

    bare = Agent(FunctionModel(answer), output_type=City)
    assert (await bare.prompt("x")).output == City(**CITY)
    assert seen[-1].output is None
    assert "JSON Schema" in seen[-1].messages[0].content
    native = Agent(FunctionModel(answer), output_type=NativeOutput(City))
    await native.prompt("x")
    assert seen[-1].output is not None and seen[-1].output.mode == "native"
    assert seen[-1].output.schema == City.model_json_schema()


async def test_fallback_model_asks_the_way_every_model_of_its_chain_can(openai_model, anthropic_model):
    """A FallbackModel of OpenAI then Anthropic asks through a tool (both have it)."""
    from eudaimon.models import FallbackModel

    assert FallbackModel([openai_model, anthropic_model]).output_modes == ("tool", "prompted")
    assert FallbackModel([openai_model]).output_modes == ("native", "tool", "prompted")
