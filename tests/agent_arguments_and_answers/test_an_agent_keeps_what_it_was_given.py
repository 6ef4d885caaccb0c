"""`Agent(...)` turns its keyword arguments into its runtime in one step: what it was given is
what its runs use (there is no settings copy in between to fall out of step)."""

from __future__ import annotations

import inspect

from eudaimon import Agent
from eudaimon.agent.agent_runtime import runtime_of
from eudaimon.models import FunctionModel


def test_an_agent_keeps_what_its_arguments_say() -> None:
    agent = Agent(FunctionModel(lambda request: "ok"), name="clerk", max_iterations=3, temperature=0.5)
    assert agent.name == "clerk"
    assert agent.decide_config.max_iterations == 3
    assert agent.model_settings.temperature == 0.5
    assert runtime_of(agent).config.agent == "clerk"


def test_the_signature_shows_the_documented_keywords() -> None:
    """Invariant: `inspect.signature(Agent)` is `__init__`'s, read by IDEs and docs."""
    parameters = inspect.signature(Agent).parameters
    assert next(iter(parameters)) == "model"
    assert {"tools", "memory", "store", "output_type", "handoffs", "on_change"} <= set(parameters)
