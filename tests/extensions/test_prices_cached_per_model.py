"""Prices are looked up once per model (and day), and a flat-priced call is priced from the
cached rates exactly as genai-prices prices it."""

from __future__ import annotations

import random

import pytest
from genai_prices import Usage as PricesUsage
from genai_prices import data_snapshot

from eudaimon.core.messages import Usage
from eudaimon.cost import AnthropicCostModel, GenAIPricesCostModel, OpenAICostModel


def test_a_second_call_of_a_model_does_not_look_its_prices_up_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: every call walked genai-prices' data three times (about 110 µs a call, more than the
    rest of a step; `benchmarks/pricing_cache.py`). After the first call of a model its prices
    come from the cache: no lookup, the same answer."""
    cost_model = OpenAICostModel()
    first = cost_model.price("gpt-4o", Usage(1000, 500))

    def no_lookup(model_id: str) -> None:
        raise AssertionError(f"prices of {model_id} were looked up again")

    monkeypatch.setattr(cost_model, "_lookup", no_lookup)
    assert cost_model.price("gpt-4o", Usage(1000, 500)) == first
    assert cost_model.price("gpt-4o", Usage(10, 5, 4)) is not None
    with pytest.raises(AssertionError, match="looked up again"):
        cost_model.price("gpt-4o-mini", Usage(1, 1))  # another model is looked up, once


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_cached_rates_price_every_model_as_genai_prices_does(provider: str) -> None:
    """Invariant: for each model of the provider, with and without cached input, the cached
    path's price equals genai-prices' own `calc_price` of the model's prices today."""
    cost_model: GenAIPricesCostModel = OpenAICostModel() if provider == "openai" else AnthropicCostModel()
    snapshot = data_snapshot.get_snapshot()
    (found,) = [p for p in snapshot.providers if p.id == provider]
    rng = random.Random(15)
    checked = 0
    for model in found.models:
        prices = cost_model._prices(model.id)
        if prices is None or prices.input_mtok is None or prices.output_mtok is None:
            continue
        for _ in range(3):
            tokens = rng.randint(1, 400_000)
            cached, output = rng.randint(0, tokens), rng.randint(0, 30_000)
            usage = PricesUsage(input_tokens=tokens, output_tokens=output, cache_read_tokens=cached or None)
            expected = float(prices.calc_price(usage)["total_price"])
            assert cost_model.price(model.id, Usage(tokens, output, cached)) == pytest.approx(expected, rel=1e-12)
            checked += 1
    assert checked > 20


def test_a_price_that_changes_with_the_time_of_day_is_not_served_from_the_morning() -> None:
    """Bug: prices were cached per day, but genai-prices prices DeepSeek by the time of day
    (off-peak hours). Through one cost model, a call at each hour of two days costs what
    genai-prices' own `calc_price` says at that instant, and the prices are looked up again
    only when they may have changed (a window's start or end, or midnight), not every call."""
    from datetime import UTC, datetime, timedelta

    cost_model = GenAIPricesCostModel("deepseek")
    clock = [datetime(2026, 3, 2, 0, 0, tzinfo=UTC)]
    cost_model._now = lambda: clock[0]
    lookups = 0
    real_lookup = cost_model._lookup

    def counted(model_id: str) -> object:
        nonlocal lookups
        lookups += 1
        return real_lookup(model_id)

    cost_model._lookup = counted  # type: ignore[method-assign]
    provider, info = GenAIPricesCostModel("deepseek")._lookup("deepseek-chat")  # type: ignore[misc]
    usage = Usage(100_000, 20_000, 30_000)
    seen: set[float] = set()
    for minutes in range(0, 48 * 60, 30):
        clock[0] = datetime(2026, 3, 2, 0, 0, tzinfo=UTC) + timedelta(minutes=minutes)
        prices_usage = PricesUsage(input_tokens=100_000, output_tokens=20_000, cache_read_tokens=30_000)
        expected = float(info.calc_price(prices_usage, provider, genai_request_timestamp=clock[0]).total_price)
        got = cost_model.price("deepseek-chat", usage)
        assert got == pytest.approx(expected, rel=1e-12), clock[0]
        seen.add(round(expected, 12))
    assert len(seen) >= 2, "the test must cross a change of price"
    assert lookups <= 3 * 2 + 2, f"prices looked up {lookups} times in two days"


def test_a_cost_model_remembers_a_bounded_number_of_models() -> None:
    """Bounded: model ids come from servers (`response.model`); however many pass, each cache
    of a cost model keeps at most `_MAX_MODELS`, and prices stay right for the ones it dropped."""
    from eudaimon.extensions import cost

    cost_model = OpenAICostModel()
    first = cost_model.price("gpt-4o", Usage(1000, 500))
    for i in range(cost._MAX_MODELS + 50):
        cost_model.price(f"no-such-model-{i}", Usage(1, 1))
    assert len(cost_model._found) <= cost._MAX_MODELS
    assert len(cost_model._rates) <= cost._MAX_MODELS
    assert cost_model.price("gpt-4o", Usage(1000, 500)) == first
