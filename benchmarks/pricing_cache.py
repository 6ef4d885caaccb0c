"""What pricing one model call costs: prices cached per model, against walking genai-prices' data.

Before, every call's price walked genai-prices' data: `has_price` asked for today's prices twice
(input and output rate), then `calc_price` looked them up a third time (about 110 µs a call,
more than the rest of a step). Now `GenAIPricesCostModel` keeps each model's `ModelPrice` for
the day and prices a call from it.

- uncached: the old path, written out here with genai-prices' own calls;
- cached: `OpenAICostModel().price(model, usage)`, as the runtime calls it.

Each side runs in a thread of its own, repeats alternate between them so drift hits both
alike, and the figures are medians in µs per call. Both paths must give the same price.
(`tests/extensions/test_prices_cached_per_model.py` checks they agree for every model.)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import _harness as h

ROUNDS = 1
MODEL = "gpt-4o"


def uncached(model_id: str) -> Callable[[Any], float | None]:
    """The uncached path: three price lookups and a provider-level `calc_price` per call."""
    from genai_prices import Usage as PricesUsage

    from eudaimon.cost import OpenAICostModel

    cost_model = OpenAICostModel()

    def price(usage: Any) -> float | None:
        found = cost_model._lookup(model_id)
        if found is None:
            return None
        provider, info = found
        for _ in ("input_mtok", "output_mtok"):  # has_price: one get_prices per direction
            if info.get_prices(datetime.now(tz=UTC)) is None:
                return None
        prices_usage = PricesUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
        return float(info.calc_price(prices_usage, provider, genai_request_timestamp=datetime.now(tz=UTC)).total_price)

    return price


def cached(model_id: str) -> Callable[[Any], float | None]:
    from eudaimon.cost import OpenAICostModel

    cost_model = OpenAICostModel()
    return lambda usage: cost_model.price(model_id, usage)


def per_call_us(price: Callable[[Any], float | None], calls: int) -> float:
    """µs per call, measured on a thread of its own."""
    from eudaimon.core.messages import Usage

    usages = [Usage(1000 + i, 200 + i) for i in range(calls)]

    def body() -> float:
        start = time.perf_counter()
        for usage in usages:
            price(usage)
        return (time.perf_counter() - start) / calls * 1e6

    return h.on_thread(body)


def measure(quick: bool) -> dict[str, float]:
    h.requires("genai_prices")
    from eudaimon.core.messages import Usage

    sides = {"uncached": uncached(MODEL), "cached": cached(MODEL)}
    probe = Usage(1234, 567)
    assert sides["uncached"](probe) == sides["cached"](probe), "both paths must price alike"
    times: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(3 if quick else 9):
        for name in h.rotate(list(sides), r):
            times[name].append(per_call_us(sides[name], 200 if quick else 2000))
    return {f"{name} µs/call ({MODEL})": h.median(values) for name, values in times.items()}
