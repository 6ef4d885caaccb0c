"""Cost: prices come from genai-prices, each call is priced at the model that served it."""

from __future__ import annotations

import math

import genai_prices
import pytest

from eudaimon.core.errors import ConfigurationError
from eudaimon.core.messages import Usage
from eudaimon.cost import (
    AnthropicCostModel,
    Budget,
    BudgetBreach,
    CostModel,
    GenAIPricesCostModel,
    OpenAICostModel,
    TokenDirection,
    as_cost_model,
    has_price,
    price_usage,
)

CLAUDE = "claude-sonnet-4-5"


def genai_price(model_id: str, provider: str, usage: Usage) -> float:
    """The reference: genai-prices' own calculation for one call."""
    prices_usage = genai_prices.Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cached_tokens or None,
    )
    return float(genai_prices.calc_price(prices_usage, model_id, provider_id=provider).total_price)


class FlatRates:
    """A cost model that is not a class of ours: any object with cost_per_token."""

    def cost_per_token(self, model_id: str, direction: TokenDirection) -> float | None:
        if model_id != "house-model":
            return None
        return {TokenDirection.INPUT: 1e-6, TokenDirection.OUTPUT: 2e-6}.get(direction)


def test_known_models_have_positive_prices_from_genai_prices() -> None:
    """gpt-4o and a Claude model are priced, per token, exactly as genai-prices lists them."""
    openai, anthropic = OpenAICostModel(), AnthropicCostModel()
    for cost_model, model_id in ((openai, "gpt-4o"), (anthropic, CLAUDE)):
        rate_in = cost_model.cost_per_token(model_id, TokenDirection.INPUT)
        rate_out = cost_model.cost_per_token(model_id, TokenDirection.OUTPUT)
        assert rate_in is not None
        assert rate_in > 0
        assert rate_out is not None
        assert rate_out > rate_in
        # 1000 tokens: below any tier, where the per-token rate is the base rate.
        assert math.isclose(rate_in * 1000, genai_price(model_id, cost_model.provider_id or "", Usage(1000)))
        assert has_price(cost_model, model_id)


def test_call_price_matches_genai_prices() -> None:
    """price_usage gives genai-prices' total for the call, input and output together."""
    usage = Usage(input_tokens=1200, output_tokens=300)
    assert math.isclose(price_usage(OpenAICostModel(), "gpt-4o", usage) or 0, genai_price("gpt-4o", "openai", usage))
    assert math.isclose(price_usage(AnthropicCostModel(), CLAUDE, usage) or 0, genai_price(CLAUDE, "anthropic", usage))


def test_unknown_model_has_no_price() -> None:
    """An unknown model is unpriced (None), never free; so is a model of another provider."""
    for cost_model, model_id in [
        (OpenAICostModel(), "no-such-model-xyz"),
        (OpenAICostModel(), CLAUDE),
        (AnthropicCostModel(), "gpt-4o"),
        (GenAIPricesCostModel(), "scripted"),
    ]:
        assert cost_model.cost_per_token(model_id, TokenDirection.INPUT) is None
        assert price_usage(cost_model, model_id, Usage(10, 10)) is None
        assert not has_price(cost_model, model_id)


def test_cached_tokens_are_priced_at_the_cached_rate() -> None:
    """Cached input (part of input_tokens) costs the cached rate: less than uncached input, more than nothing."""
    cost_model = OpenAICostModel()
    fresh = price_usage(cost_model, "gpt-4o", Usage(input_tokens=1000))
    cached = price_usage(cost_model, "gpt-4o", Usage(input_tokens=1000, cached_tokens=1000))
    half = price_usage(cost_model, "gpt-4o", Usage(input_tokens=1000, cached_tokens=500))
    assert fresh is not None
    assert cached is not None
    assert half is not None
    assert 0 < cached < half < fresh
    rate = cost_model.cost_per_token("gpt-4o", TokenDirection.CACHED_INPUT)
    assert rate is not None
    assert math.isclose(cached, 1000 * rate)
    assert math.isclose(half, genai_price("gpt-4o", "openai", Usage(1000, 0, 500)))


def test_a_run_switching_models_sums_each_call_at_its_model() -> None:
    """Two calls served by different models cost the sum of each priced at its own model."""
    calls = [("gpt-4o", Usage(2000, 500)), ("gpt-4o-mini", Usage(2000, 500)), ("gpt-4o", Usage(100, 10, 50))]
    cost_model = OpenAICostModel()

    total = sum(price_usage(cost_model, model_id, usage) or 0 for model_id, usage in calls)

    expected = sum(genai_price(model_id, "openai", usage) for model_id, usage in calls)
    assert math.isclose(total, expected)
    all_usage = sum((u for _, u in calls), Usage())
    assert not math.isclose(total, price_usage(cost_model, "gpt-4o", all_usage) or 0)
    assert not math.isclose(total, price_usage(cost_model, "gpt-4o-mini", all_usage) or 0)


def test_cross_provider_switch_with_the_generic_cost_model() -> None:
    """GenAIPricesCostModel() finds the provider per model, so a fallback from OpenAI to Claude is priced right."""
    cost_model = GenAIPricesCostModel()
    usage = Usage(1000, 100)
    total = (price_usage(cost_model, "openai:gpt-4o", usage) or 0) + (price_usage(cost_model, CLAUDE, usage) or 0)
    assert math.isclose(total, genai_price("gpt-4o", "openai", usage) + genai_price(CLAUDE, "anthropic", usage))


def test_any_object_with_cost_per_token_is_a_cost_model() -> None:
    """A user's cost model is used through cost_per_token; cached input falls back to the input rate."""
    flat = as_cost_model(FlatRates())
    assert isinstance(flat, CostModel)
    assert price_usage(flat, "house-model", Usage(1000, 100)) == pytest.approx(1000 * 1e-6 + 100 * 2e-6)
    assert price_usage(flat, "house-model", Usage(1000, 100, 400)) == pytest.approx(1000 * 1e-6 + 100 * 2e-6)
    assert price_usage(flat, "other", Usage(1, 1)) is None
    with pytest.raises(ConfigurationError, match="cost_per_token"):
        as_cost_model(object())


def test_provider_prefix_is_understood() -> None:
    """`openai:gpt-4o` (the Agent's model string form) is priced like `gpt-4o`."""
    cost_model = OpenAICostModel()
    assert cost_model.cost_per_token("openai:gpt-4o", TokenDirection.OUTPUT) == cost_model.cost_per_token(
        "gpt-4o", TokenDirection.OUTPUT
    )
    assert AnthropicCostModel().cost_per_token("openai:gpt-4o", TokenDirection.OUTPUT) is None


def test_budget_is_reached_at_the_limit() -> None:
    """A budget is exceeded when spent >= limit (USD first, then tokens); None while within it."""
    budget = Budget(max_usd=0.5, max_tokens=1000)
    assert budget.check(0.49, 999) is None
    assert budget.check(0.5, 0) is not None
    assert "1000" in (budget.check(0.0, 1000) or "")
    assert budget.breach(0.6, 5000) == BudgetBreach(budget.check(0.6, 5000) or "", 0.6, 0.5, "usd")
    tokens = budget.breach(0.1, 1500)
    assert tokens is not None
    assert (tokens.unit, tokens.spent, tokens.limit) == ("tokens", 1500.0, 1000.0)
    assert Budget().check(1e9, 10**9) is None
    with pytest.raises(ConfigurationError):
        Budget(max_usd=-1)
