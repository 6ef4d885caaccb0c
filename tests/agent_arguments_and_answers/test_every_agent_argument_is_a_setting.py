"""`Agent(...)`'s arguments and `AgentSettings`' fields are the same names with the same defaults.

`Agent.__init__` gathers its arguments with `AgentSettings.of(locals())`, which reads one local
per field: a parameter without a field would be dropped silently, so this holds them equal.
"""

from __future__ import annotations

import dataclasses
import inspect

from eudaimon import Agent
from eudaimon.agent._settings import AgentSettings
from eudaimon.models import FunctionModel


def test_every_agent_argument_is_a_setting_with_the_same_default() -> None:
    parameters = inspect.signature(Agent).parameters
    fields = {f.name: f for f in dataclasses.fields(AgentSettings)}
    assert list(parameters) == list(fields)
    for name, parameter in parameters.items():
        field = fields[name]
        default = field.default if field.default is not dataclasses.MISSING else inspect.Parameter.empty
        assert default == parameter.default, name


def test_an_agent_keeps_what_its_settings_say() -> None:
    agent = Agent(FunctionModel(lambda request: "ok"), name="clerk", max_iterations=3, temperature=0.5)
    assert agent.name == "clerk"
    assert agent.decide_config.max_iterations == 3
    assert agent.model_settings.temperature == 0.5
