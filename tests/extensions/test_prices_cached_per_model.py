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
