"""What pricing one model call costs, before and after prices were cached per model (issue 15).

Before, every call's price walked genai-prices' data: `has_price` asked for today's prices twice
(input and output rate), then `calc_price` looked them up a third time (about 110 µs a call,
more than the rest of a step). Now `GenAIPricesCostModel` keeps each model's `ModelPrice` for
the day and prices a call from it.

- uncached: the old path, written out here with genai-prices' own calls;
- cached: `OpenAICostModel().price(model, usage)`, as the runtime calls it.

Each side runs in a thread of its own, repeats alternate between them so drift hits both
alike, and the figures are medians in µs per call with their ratio.

    .venv/bin/python benchmarks/pricing_cache.py [--calls 2000] [--repeats 9] [--model gpt-4o]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from genai_prices import Usage as PricesUsage

from eudaimon.core.messages import Usage
from eudaimon.cost import OpenAICostModel


def uncached(model_id: str) -> Callable[[Usage], float | None]:
    """The pre-cache pricing path: three price lookups and a provider-level `calc_price` per call."""
    cost_model = OpenAICostModel()

    def price(usage: Usage) -> float | None:
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


def cached(model_id: str) -> Callable[[Usage], float | None]:
    cost_model = OpenAICostModel()
    return lambda usage: cost_model.price(model_id, usage)


def _time(price: Callable[[Usage], float | None], calls: int) -> float:
    """µs per call, measured in a thread of its own."""
    result: list[float] = []
    usages = [Usage(1000 + i, 200 + i) for i in range(calls)]

    def body() -> None:
        start = time.perf_counter()
        for usage in usages:
            price(usage)
        result.append((time.perf_counter() - start) / calls * 1e6)

    thread = threading.Thread(target=body, name="pricing-bench")
    thread.start()
    thread.join()
    return result[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--model", default="gpt-4o")
    args = parser.parse_args()
    sides = {"uncached": uncached(args.model), "cached": cached(args.model)}
    probe = Usage(1234, 567)
    assert sides["uncached"](probe) == sides["cached"](probe), "both paths must price alike"
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(args.repeats):
        for name, price in sides.items():
            times[name].append(_time(price, args.calls))
    before, after = statistics.median(times["uncached"]), statistics.median(times["cached"])
    print(
        f"Python {platform.python_version()}, {platform.machine()}; model {args.model}; {args.calls} calls x {args.repeats}"
    )
    print("| path | µs/call (median) | µs/call (best) |")
    print("|---|---:|---:|")
    for name in sides:
        print(f"| {name} | {statistics.median(times[name]):.1f} | {min(times[name]):.1f} |")
    print(f"cached is {before / after:.1f}x faster than uncached")


if __name__ == "__main__":
    main()
