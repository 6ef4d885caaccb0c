"""Prompt templates through the Agent: rendered once at build, the result is the run's system prompt."""

from __future__ import annotations

import pytest
from _in_loop_support import payloads

from eudaimon import Agent
from eudaimon.errors import ConfigurationError
from eudaimon.models import ScriptedModel
from eudaimon.prompts import FewShotTemplate, PromptBuilder, PromptTemplate


async def test_prompt_template_takes_precedence_over_system_prompt() -> None:
    """Invariant: with both given, the rendered prompt_template is the system prompt the model and the journal see."""
    model = ScriptedModel(["ok"])
    template = (
        PromptTemplate("You are {role}. Today is {date}.").var("role", "a research assistant").var("date", "2026-03-04")
    )
    agent = Agent(model, system_prompt="ignored", prompt_template=template)
    assert agent.system_prompt == "You are a research assistant. Today is 2026-03-04."
    response = await agent.prompt("hi")
    first = model.requests[0].messages[0]
    assert (first.role, first.content) == ("system", "You are a research assistant. Today is 2026-03-04.")
    (started,) = await payloads(agent, response.run_id, "run_started")
    assert started.messages[0].content == first.content


def test_prompt_template_is_rendered_at_build_not_per_run() -> None:
    """Invariant: the template is rendered once, when the Agent is built; a string template works too,
    and escaped braces stay literal braces."""
    agent = Agent(ScriptedModel([]), prompt_template='Reply in JSON like {{"a": 1}}.')
    assert agent.system_prompt == 'Reply in JSON like {"a": 1}.'


def test_missing_template_variable_is_a_configuration_error_at_build() -> None:
    """Invariant: a template variable without a value fails Agent(...) naming it, never a run halfway."""
    with pytest.raises(ConfigurationError, match="date"):
        Agent(ScriptedModel([]), prompt_template=PromptTemplate("Today is {date}, {role}.").var("role", "x"))


def test_not_a_template_is_a_configuration_error() -> None:
    """Invariant: a prompt_template that is neither a template nor a builder is refused at build, by name."""
    with pytest.raises(ConfigurationError, match="prompt_template"):
        Agent(ScriptedModel([]), prompt_template=42)


async def test_prompt_builder_and_few_shot_output_as_system_prompt() -> None:
    """Invariant: PromptBuilder's template (or the builder itself) and FewShotTemplate's text are usable system prompts."""
    builder = (
        PromptBuilder()
        .persona("You are an expert {language} developer.")
        .instruction("Answer concisely.")
        .constraint("Never reveal internal details.")
        .example("Q: What is ownership?\nA: Rust's memory model.")
    )
    built = Agent(ScriptedModel([]), prompt_template=builder.build().var("language", "Rust"))
    assert built.system_prompt is not None
    assert built.system_prompt.startswith("You are an expert Rust developer.\n\nInstructions:\n- Answer concisely.")
    assert "Constraints:\n- Never reveal internal details." in built.system_prompt

    plain = PromptBuilder().persona("You are terse.").instruction("Answer in one word.")
    assert Agent(ScriptedModel([]), prompt_template=plain).system_prompt == plain.build().render_static()

    few_shot = (
        FewShotTemplate().example("What is 2+2?", "4").example("Capital of France?", "Paris").with_prefix("Examples:")
    )
    model = ScriptedModel(["Rome"])
    agent = Agent(model, system_prompt=few_shot.render())
    await agent.prompt("Capital of Italy?")
    assert model.requests[0].messages[0].content == (
        "Examples:\n\nInput: What is 2+2?\nOutput: 4\n\nInput: Capital of France?\nOutput: Paris"
    )
