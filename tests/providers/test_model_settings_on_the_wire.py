"""`ModelSettings` reach the provider as the real SDK client sends them, merged key by key
(the prompt's winning), and refused before anything is journaled where a provider lacks one."""

from __future__ import annotations

import pytest

from eudaimon import Agent, ModelSettings, tool
from eudaimon.core.events import ModelAttemptStarted, RunStarted
from eudaimon.errors import ConfigurationError
from eudaimon.models import ChatRequest, FunctionModel


@tool(effect="read")
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


AGENT_SETTINGS = ModelSettings(
    temperature=0.3,
    top_p=0.9,
    seed=7,
    stop_sequences=("END",),
    tool_choice="get_weather",
    parallel_tool_calls=False,
    extra_body={"user": "u-1", "metadata": {"a": "1"}},
)


async def test_openai_request_carries_every_setting_prompt_winning(openai_server, openai_model):
    """Invariant: agent and prompt settings merge key by key and all reach Chat Completions:
    temperature, max tokens, top_p, seed, stop, a named tool_choice, parallel_tool_calls,
    reasoning_effort, and extra_body fields at the top level of the body."""
    openai_server.reply(openai_server.completion("ok"))
    agent = Agent(openai_model, tools=[get_weather], model_settings=AGENT_SETTINGS, max_tokens=99)
    await agent.prompt(
        "weather?",
        model_settings=ModelSettings(temperature=0.0, reasoning_effort="low", extra_body={"user": "u-2"}),
    )
    [sent] = openai_server.requests
    body = sent.body
    assert body["temperature"] == 0.0
    assert body["max_completion_tokens"] == 99
    assert body["top_p"] == 0.9
    assert body["seed"] == 7
    assert body["stop"] == ["END"]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert body["parallel_tool_calls"] is False
    assert body["reasoning_effort"] == "low"
    assert body["user"] == "u-2" and body["metadata"] == {"a": "1"}


async def test_openai_tool_choice_modes(openai_server, openai_model):
    """`required` and `none` travel as the API's own strings."""
    openai_server.reply(openai_server.completion("a"), openai_server.completion("b"))
    agent = Agent(openai_model, tools=[get_weather])
    await agent.prompt("x", model_settings=ModelSettings(tool_choice="required"))
    await agent.prompt("y", model_settings=ModelSettings(tool_choice="none"))
    assert [r.body["tool_choice"] for r in openai_server.requests] == ["required", "none"]


async def test_anthropic_request_carries_its_settings(anthropic_server, anthropic_model):
    """Invariant: Anthropic gets top_p and temperature, stop_sequences, `any` for required with
    parallel calls disabled, a thinking budget, effort and extra_body fields."""
    anthropic_server.reply(anthropic_server.message([{"type": "text", "text": "ok"}]))
    agent = Agent(
        anthropic_model,
        tools=[get_weather],
        model_settings=ModelSettings(
            temperature=0.5,
            top_p=0.8,
            stop_sequences=("STOP", "HALT"),
            tool_choice="required",
            parallel_tool_calls=False,
            thinking_budget_tokens=1024,
            reasoning_effort="medium",
            extra_body={"metadata": {"user_id": "u-9"}},
        ),
    )
    await agent.prompt("weather?")
    [sent] = anthropic_server.requests
    body = sent.body
    assert body["temperature"] == 0.5 and body["top_p"] == 0.8
    assert body["stop_sequences"] == ["STOP", "HALT"]
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert body["output_config"] == {"effort": "medium"}
    assert body["metadata"] == {"user_id": "u-9"}


async def test_anthropic_named_tool_choice(anthropic_server, anthropic_model):
    anthropic_server.reply(anthropic_server.message([{"type": "text", "text": "ok"}]))
    agent = Agent(anthropic_model, tools=[get_weather], model_settings=ModelSettings(tool_choice="get_weather"))
    await agent.prompt("weather?")
    assert anthropic_server.requests[0].body["tool_choice"] == {"type": "tool", "name": "get_weather"}


async def test_settings_a_provider_lacks_are_refused_before_anything_runs(anthropic_model, openai_model):
    """Invariant: a setting the provider has no field for is a ConfigurationError at build (agent
    settings) or at the prompt (prompt settings), with nothing journaled; so is a tool_choice
    naming no tool."""
    with pytest.raises(ConfigurationError, match=r"no thinking budget.*reasoning_effort"):
        Agent(openai_model, model_settings=ModelSettings(thinking_budget_tokens=100))
    with pytest.raises(ConfigurationError, match="tool_choice='nope'"):
        Agent(openai_model, tools=[get_weather], model_settings=ModelSettings(tool_choice="nope"))
    agent = Agent(anthropic_model)
    with pytest.raises(ConfigurationError, match="no seed"):
        await agent.prompt("hi", model_settings=ModelSettings(seed=1))
    assert await agent.store.list_runs() == []


async def test_settings_are_journaled_and_in_the_request_digest():
    """Invariant: the prompt's settings are in `run_started`, the model sees them on resume as
    live, and two calls that differ only in settings have different request digests."""
    seen: list[ModelSettings] = []

    def answer(request: ChatRequest) -> str:
        seen.append(request.settings)
        return "ok"

    agent = Agent(FunctionModel(answer), temperature=0.2)
    one = await agent.prompt("hi", model_settings=ModelSettings(top_p=0.5))
    two = await agent.prompt("hi", model_settings=ModelSettings(top_p=0.6))
    assert seen[0] == ModelSettings(temperature=0.2, top_p=0.5)
    assert seen[1].top_p == 0.6 and seen[1].temperature == 0.2
    events = [await agent.store.load(r.run_id) for r in (one, two)]
    started = [e[0].data for e in events]
    assert all(isinstance(s, RunStarted) for s in started)
    assert [s.model_settings for s in started if isinstance(s, RunStarted)] == [
        ModelSettings(top_p=0.5),
        ModelSettings(top_p=0.6),
    ]
    digests = [e[1].data.request_digest for e in events if isinstance(e[1].data, ModelAttemptStarted)]
    assert len(digests) == 2 and digests[0] != digests[1]


async def test_a_resumed_run_calls_the_model_with_its_journaled_settings():
    """Invariant: settings given to `prompt` come back from the journal on `resume` (here in
    another Agent object, as in another process), so every call of the run uses them."""
    from eudaimon import Message, ToolCall
    from eudaimon.stores import MemoryStore

    @tool(effect="irreversible")
    def send(text: str) -> str:
        """Send a text."""
        return "sent"

    seen: list[ModelSettings] = []
    script = iter([Message.assistant(tool_calls=[ToolCall("c1", "send", {"text": "hi"})]), Message.assistant("done")])

    def answer(request: ChatRequest) -> Message:
        seen.append(request.settings)
        return next(script)

    store = MemoryStore()
    paused = await Agent(FunctionModel(answer), tools=[send], store=store).prompt(
        "go", model_settings=ModelSettings(seed=3, stop_sequences=("X",))
    )
    await Agent(FunctionModel(answer), tools=[send], store=store).approve(paused.run_id, "c1")
    done = await Agent(FunctionModel(answer), tools=[send], store=store).resume(paused.run_id)
    assert done.status == "completed"
    assert seen == [ModelSettings(seed=3, stop_sequences=("X",))] * 2
