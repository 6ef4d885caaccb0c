"""`Agent(...)` given a keyword it does not take says where it belongs.

Before: `Agent("openai-compatible:…", base_url=…)` was Python's bare `TypeError: unexpected
keyword argument 'base_url'`, though `OpenAIModel` takes `base_url=` and the docs name it.
Connection options stay on the model (they differ per provider, and a built `Model` object
could only ignore them); the error names the class, the `infer_model` line and the variable.
"""

from __future__ import annotations

from typing import Any

import pytest

from eudaimon import Agent
from eudaimon.models import ScriptedModel


@pytest.mark.parametrize(
    ("model", "option", "says"),
    [
        (
            "openai-compatible:smollm2-135m",
            "base_url",
            ["infer_model('openai-compatible:smollm2-135m', base_url=", "OPENAI_COMPATIBLE_BASE_URL"],
        ),
        ("openai:gpt-4o-mini", "base_url", ["OpenAIModel('gpt-4o-mini', base_url=", "OPENAI_BASE_URL"]),
        ("ollama:llama3.2", "base_url", ["infer_model('ollama:llama3.2', base_url=", "OLLAMA_BASE_URL"]),
        ("anthropic:claude-x", "base_url", ["AnthropicModel('claude-x', base_url=", "ANTHROPIC_BASE_URL"]),
        ("openai:gpt-4o-mini", "timeout", ["OpenAIModel('gpt-4o-mini', timeout=30"]),
    ],
)
def test_a_model_option_given_to_agent_names_the_model_class(model: str, option: str, says: list[str]) -> None:
    """Invariant: the `TypeError` says the option is the model's and how to give it there."""
    value: Any = 30 if option == "timeout" else "http://127.0.0.1:8088/v1"
    with pytest.raises(TypeError, match=f"Agent\\(\\) takes no {option}=") as raised:
        Agent(model, **{option: value})
    for part in says:
        assert part in str(raised.value)


def test_secrets_in_a_misplaced_option_are_not_echoed() -> None:
    """Invariant: the error shows neither an API key nor a URL's password."""
    with pytest.raises(TypeError) as key:
        Agent("openai:gpt-4o-mini", api_key="sk-live-0123456789abcdef")
    assert "sk-live" not in str(key.value) and "OPENAI_API_KEY" in str(key.value)
    with pytest.raises(TypeError) as url:
        Agent("openai-compatible:m", base_url="http://user:hunter22@10.0.0.1/v1")
    assert "hunter22" not in str(url.value) and "10.0.0.1" in str(url.value)


def test_a_built_model_with_a_model_option_says_to_give_it_to_the_class() -> None:
    """Invariant: with a `Model` object, the option goes to its class when it is built."""
    with pytest.raises(TypeError, match="built already"):
        Agent(ScriptedModel(["hi"]), base_url="http://127.0.0.1:1/v1")


def test_a_misspelt_agent_option_suggests_the_right_one() -> None:
    """Invariant: an unknown agent option is still a `TypeError`, naming the closest option."""
    with pytest.raises(TypeError, match="did you mean max_iterations="):
        Agent(ScriptedModel(["hi"]), max_iteration=3)  # type: ignore[call-arg]


def test_a_subclass_taking_keywords_of_its_own_is_left_alone() -> None:
    """Invariant: the check reads the class's own `__init__`: a subclass's extra keywords, or
    its `**kwargs`, are its business."""

    class Named(Agent):
        def __init__(self, *, label: str, **options: Any) -> None:
            super().__init__(ScriptedModel(["hi"]), **options)
            self.label = label

    assert Named(label="x", max_iterations=3).label == "x"
