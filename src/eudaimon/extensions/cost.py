"""Cost: what a model call cost in USD, and the budget a run may spend.

A `CostModel` answers one question, the price of one token of a model in one direction, and
`None` when it does not know (an unknown price is not a free one). The built-in cost models
read the `genai-prices` package's data rather than a table kept here, so prices follow its
releases. That package (and its price table) is the `prices` extra, which `eudaimon[openai]` and
`eudaimon[anthropic]` include; it is imported when a cost model is first asked a price.

Each call is priced at the model that served it (`ChatResponse.model` when a fallback answered,
else the model asked), so a run that switches models sums true prices:

    cost_usd = price_usage(cost_model, response.model or model.model_id, usage)   # None: unpriced
    reason = budget.check(state.cost_usd, state.usage.total_tokens)              # None: go on

`Usage.input_tokens` includes `cached_tokens`: cached input is priced at the cached rate, the
rest of the input at the input rate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from eudaimon._extras import require
from eudaimon.core.errors import ConfigurationError
from eudaimon.core.messages import Usage

__all__ = [
    "AnthropicCostModel",
    "Budget",
    "BudgetBreach",
    "CostModel",
    "GenAIPricesCostModel",
    "OpenAICostModel",
    "TokenDirection",
    "UsagePricer",
    "as_cost_model",
    "has_price",
    "price_usage",
]

_PER_MTOK = Decimal(1_000_000)


class TokenDirection(StrEnum):
    """Which tokens a price is for."""

    INPUT = "input"
    OUTPUT = "output"
    CACHED_INPUT = "cached_input"
    """Input served from the provider's prompt cache; priced as INPUT when a model has no cached rate."""


@runtime_checkable
class CostModel(Protocol):
    """Prices tokens. Any object with this method is a cost model.

    `cost_per_token` returns USD per token, or None when the price of `model_id` is not known.
    """

    def cost_per_token(self, model_id: str, direction: TokenDirection) -> float | None: ...


@runtime_checkable
class UsagePricer(Protocol):
    """A cost model that can price a whole call exactly (tiered prices depend on the call's size).

    `price_usage` prefers this method when a cost model has it.
    """

    def price(self, model_id: str, usage: Usage) -> float | None: ...


def as_cost_model(value: object) -> CostModel:
    """Check that `value` can price tokens, for the Agent to refuse a wrong `cost_model` at build.

    A cost model class (`cost_model=OpenAICostModel`, as the Daimon reference writes it) is
    instantiated here, with no arguments.

    Raises:
        ConfigurationError: `value` has no `cost_per_token` method, or is a class that cannot
            be built without arguments.
    """
    if isinstance(value, type) and callable(getattr(value, "cost_per_token", None)):
        cls: type = value
        try:
            value = cls()
        except TypeError as exc:
            raise ConfigurationError(
                f"cost_model={cls.__name__} is a class that needs arguments ({exc}); pass an instance"
            ) from exc
    if not callable(getattr(value, "cost_per_token", None)):
        raise ConfigurationError(
            f"cost_model {value!r} has no cost_per_token(model_id, direction) method; "
            "use OpenAICostModel(), AnthropicCostModel(), GenAIPricesCostModel() or your own"
        )
    return value  # type: ignore[return-value]


class GenAIPricesCostModel:
    """Prices from the `genai-prices` package, for one provider or for whichever matches.

    Args:
        provider_id: A genai-prices provider id (`"openai"`, `"anthropic"`, …), or None to let
            genai-prices find the provider from the model id. A `provider:` prefix on a model
            id (`"openai:gpt-4o"`) is honoured either way.
    """

    provider_id: str | None = None

    def __init__(self, provider_id: str | None = None) -> None:
        require("prices", type(self).__name__, "genai_prices")
        if provider_id is not None:
            self.provider_id = provider_id
        self._found: dict[str, Any] = {}
        self._rates: dict[str, tuple[datetime, Any, _FlatRates | None]] = {}
        """model id -> (until when it holds, genai-prices' `ModelPrice` until then, its flat
        rates). Prices change by date or time of day (DeepSeek's off-peak hours), not by call,
        and genai-prices' `calc_price` costs hundreds of µs: a model with flat rates per token
        is priced from them with three products. Both maps hold at most `_MAX_MODELS` ids."""
        self._now: Callable[[], datetime] = _utc_now

    def _lookup(self, model_id: str) -> tuple[Any, Any] | None:
        """genai-prices' (provider, model info) for `model_id`, or None when it has none."""
        if model_id in self._found:
            found: tuple[Any, Any] | None = self._found[model_id]
            return found
        from genai_prices import data_snapshot  # the price table: loaded on the first lookup

        provider_id, ref = self.provider_id, model_id
        prefix, sep, rest = model_id.partition(":")
        snapshot = data_snapshot.get_snapshot()
        is_provider = sep and data_snapshot.find_provider_by_id(snapshot.providers, prefix) is not None
        if is_provider and (provider_id is None or prefix.lower() == provider_id):
            provider_id, ref = prefix, rest
        try:
            found = snapshot.find_provider_model(ref, None, provider_id, None)
        except LookupError:
            found = None
        _bounded(self._found)[model_id] = found
        return found

    def _rated(self, model_id: str) -> tuple[Any, _FlatRates | None]:
        """genai-prices' `ModelPrice` of `model_id` now (None when it has none) and its flat
        rates (None when tiered or priced by more than tokens); cached per model until the next
        UTC midnight or the next time of day at which the model's prices change."""
        now = self._now()
        cached = self._rates.get(model_id)
        if cached is not None and now < cached[0]:
            return cached[1], cached[2]
        found = self._lookup(model_id)
        prices = found[1].get_prices(now) if found is not None else None
        flat = _FlatRates.of(prices) if prices is not None else None
        _bounded(self._rates)[model_id] = (_prices_hold_until(found, now), prices, flat)
        return prices, flat

    def _prices(self, model_id: str) -> Any:
        return self._rated(model_id)[0]

    def cost_per_token(self, model_id: str, direction: TokenDirection) -> float | None:
        """USD per token of `model_id` in `direction`, at today's base rate; None if unpriced."""
        prices = self._prices(model_id)
        if prices is None:
            return None
        key = {
            TokenDirection.INPUT: "input_mtok",
            TokenDirection.OUTPUT: "output_mtok",
            TokenDirection.CACHED_INPUT: "cache_read_mtok",
        }[TokenDirection(direction)]
        per_mtok = getattr(prices, key, None)
        if per_mtok is None:
            return None
        per_mtok = getattr(per_mtok, "base", per_mtok)  # tiered prices: the rate below the first tier
        return float(Decimal(per_mtok) / _PER_MTOK)

    def price(self, model_id: str, usage: Usage) -> float | None:
        """USD for one call's `usage`, with genai-prices' own rules (tiers, cached input)."""
        prices, flat = self._rated(model_id)
        if prices is None or prices.input_mtok is None or prices.output_mtok is None:
            return None
        cached = min(usage.cached_tokens, usage.input_tokens)
        if flat is not None:
            return flat.price(usage.input_tokens - cached, cached, usage.output_tokens)
        from genai_prices import Usage as _PricesUsage

        prices_usage = _PricesUsage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=cached or None,
        )
        return float(prices.calc_price(prices_usage)["total_price"])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(provider_id={self.provider_id!r})"


_FLAT_KEYS = frozenset({"input_mtok", "output_mtok", "cache_read_mtok"})
_MAX_MODELS = 1024
"""Model ids a cost model remembers: `response.model` comes from the server, so ids are bounded here."""


def _utc_now() -> datetime:
    return datetime.now(tz=UTC)


def _bounded(cache: dict[str, Any]) -> dict[str, Any]:
    """`cache`, its oldest entry dropped when full."""
    if len(cache) >= _MAX_MODELS:
        del cache[next(iter(cache))]
    return cache


def _prices_hold_until(found: tuple[Any, Any] | None, now: datetime) -> datetime:
    """The first instant after `now` at which the model's prices may change: the next UTC
    midnight (a price's start date), or sooner the next start or end of a time-of-day price."""
    midnight = datetime.combine(now.date() + timedelta(days=1), time(0), tzinfo=UTC)
    conditional = found[1].prices if found is not None else None
    if not isinstance(conditional, list):
        return midnight
    from genai_prices.types import TimeOfDateConstraint  # loaded already: `found` is genai-prices'

    until = midnight
    for price in conditional:
        window = price.constraint
        if not isinstance(window, TimeOfDateConstraint):
            continue
        for moment in (window.start_time, window.end_time):
            day_before = now.date() - timedelta(days=1)
            at = datetime.combine(day_before, moment if moment.tzinfo else moment.replace(tzinfo=UTC))
            while at <= now:  # the first occurrence after now, whatever the time's own zone
                at += timedelta(days=1)
            until = min(until, at)
    return until


@dataclass(frozen=True, slots=True)
class _FlatRates:
    """A model's USD per million tokens when every price is one number: genai-prices' own
    arithmetic for such a model, without its per-call walk through units and tiers."""

    input_mtok: Decimal
    output_mtok: Decimal
    cache_read_mtok: Decimal | None

    @classmethod
    def of(cls, prices: Any) -> _FlatRates | None:
        # Searches are priced per search, which a token `Usage` never counts: they add nothing.
        values = {
            k: v
            for k, v in vars(prices).items()
            if v is not None and not k.startswith("_") and not k.endswith("_searches_kcount")
        }
        if not set(values) <= _FLAT_KEYS or not all(isinstance(v, Decimal) for v in values.values()):
            return None  # tiered, or priced per request, image, …: genai-prices prices it
        if "input_mtok" not in values or "output_mtok" not in values:
            return None
        return cls(values["input_mtok"], values["output_mtok"], values.get("cache_read_mtok"))

    def price(self, uncached: int, cached: int, output: int) -> float:
        cached_rate = self.input_mtok if self.cache_read_mtok is None else self.cache_read_mtok
        total = self.input_mtok * uncached + cached_rate * cached + self.output_mtok * output
        return float(total / _PER_MTOK)


class OpenAICostModel(GenAIPricesCostModel):
    """OpenAI's prices (GPT-4o, GPT-4.1, o-series, …), from genai-prices."""

    provider_id = "openai"

    def __init__(self) -> None:
        super().__init__()


class AnthropicCostModel(GenAIPricesCostModel):
    """Anthropic's prices (Claude Opus, Sonnet, Haiku), from genai-prices."""

    provider_id = "anthropic"

    def __init__(self) -> None:
        super().__init__()


def has_price(cost_model: CostModel, model_id: str) -> bool:
    """Whether `cost_model` knows both the input and the output price of `model_id`.

    The Agent uses it to refuse, at build, a USD budget it could not enforce.
    """
    return (
        cost_model.cost_per_token(model_id, TokenDirection.INPUT) is not None
        and cost_model.cost_per_token(model_id, TokenDirection.OUTPUT) is not None
    )


def price_usage(cost_model: CostModel, model_id: str, usage: Usage) -> float | None:
    """USD for one model call's `usage`, priced at `model_id`, the model that served it.

    Returns:
        The cost, or None when `cost_model` has no input or output price for `model_id`.
        Cached input falls back to the input price when the model has no cached rate.
    """
    if isinstance(cost_model, UsagePricer):
        return cost_model.price(model_id, usage)
    input_rate = cost_model.cost_per_token(model_id, TokenDirection.INPUT)
    output_rate = cost_model.cost_per_token(model_id, TokenDirection.OUTPUT)
    if input_rate is None or output_rate is None:
        return None
    cached = min(usage.cached_tokens, usage.input_tokens)
    cached_rate = cost_model.cost_per_token(model_id, TokenDirection.CACHED_INPUT) if cached else None
    if cached_rate is None:
        cached_rate = input_rate
    return (usage.input_tokens - cached) * input_rate + cached * cached_rate + usage.output_tokens * output_rate


@dataclass(frozen=True, slots=True)
class BudgetBreach:
    """A limit a run reached: what the `budget_exceeded` event and `BudgetExceeded` carry."""

    reason: str
    spent: float
    limit: float
    unit: str
    """`"usd"` or `"tokens"`."""


@dataclass(frozen=True, slots=True)
class Budget:
    """What a run may spend: USD (needs a cost model that prices the model), tokens, or both.

    Checked before each model call, against what the run has spent so far; a limit is reached
    when the spend is at or over it, as in Daimon (`cumulative_cost >= max_budget`).
    """

    max_usd: float | None = None
    max_tokens: int | None = None
    """Input plus output tokens."""

    def __post_init__(self) -> None:
        if self.max_usd is not None and self.max_usd < 0:
            raise ConfigurationError(f"Budget(max_usd={self.max_usd}) must not be negative")
        if self.max_tokens is not None and self.max_tokens < 0:
            raise ConfigurationError(f"Budget(max_tokens={self.max_tokens}) must not be negative")

    def breach(self, spent_usd: float, spent_tokens: int) -> BudgetBreach | None:
        """The first limit reached (USD before tokens), or None while within budget."""
        if self.max_usd is not None and spent_usd >= self.max_usd:
            reason = f"spent ${spent_usd:.6f} of a ${self.max_usd:.6f} budget"
            return BudgetBreach(reason, spent_usd, self.max_usd, "usd")
        if self.max_tokens is not None and spent_tokens >= self.max_tokens:
            reason = f"used {spent_tokens} tokens of a {self.max_tokens}-token budget"
            return BudgetBreach(reason, float(spent_tokens), float(self.max_tokens), "tokens")
        return None

    def check(self, spent_usd: float, spent_tokens: int) -> str | None:
        """Why the run must stop (a limit is reached), or None while within budget."""
        breach = self.breach(spent_usd, spent_tokens)
        return None if breach is None else breach.reason
