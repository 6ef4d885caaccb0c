"""`cost_model=` takes a cost model or, as the Daimon reference writes it, its class."""

from __future__ import annotations

import pytest
from _in_loop_support import answer, payloads

from eudaimon import Agent, Usage
from eudaimon.cost import AnthropicCostModel, OpenAICostModel, TokenDirection
from eudaimon.errors import ConfigurationError
from eudaimon.models import ScriptedModel


async def test_a_cost_model_class_is_instantiated_and_prices_every_call() -> None:
    """Bug: `cost_model=OpenAICostModel` (the class) was accepted at build and then failed every
    run with a TypeError. The class is instantiated at build; the run is priced as with an instance."""
    by_class = Agent(
        ScriptedModel([answer("hi", usage=Usage(1000, 500))], model_id="gpt-4o"), cost_model=OpenAICostModel
    )
    by_instance = Agent(
        ScriptedModel([answer("hi", usage=Usage(1000, 500))], model_id="gpt-4o"), cost_model=OpenAICostModel()
    )
    first, second = await by_class.prompt("x"), await by_instance.prompt("x")
    (called,) = await payloads(by_class, first.run_id, "model_called")
    assert called.cost_usd is not None and called.cost_usd > 0
    assert first.cost == second.cost == called.cost_usd
    budgeted = Agent(
        ScriptedModel([], model_id="claude-sonnet-4-5"), cost_model=AnthropicCostModel, max_budget=1.0
    )  # the budget check at build prices the model with the instance made from the class
    assert budgeted.model.model_id == "claude-sonnet-4-5"


class NeedsTable:
    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    def cost_per_token(self, model_id: str, direction: TokenDirection) -> float | None:
        return self.table.get(model_id)


def test_a_cost_model_class_that_needs_arguments_is_refused_at_build() -> None:
    """Invariant: a class that cannot be built without arguments is a ConfigurationError at
    build, saying to pass an instance, never a failure of every run."""
    with pytest.raises(ConfigurationError, match=r"NeedsTable is a class that needs arguments.*pass an instance"):
        Agent(ScriptedModel([]), cost_model=NeedsTable)
