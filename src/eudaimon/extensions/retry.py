"""Tool retry policies: how many times a failing tool is tried, and how long to wait between tries.

A policy is a value; the runtime asks it two questions after attempt `n` of a call failed,
and journals each attempt (`tool_started` with `attempt=n + 1`), so a retried call is as
recoverable as a first one:

    policy = agent_policy.policy_for(call.name)
    if policy.should_retry(error, attempt):
        await asyncio.sleep(policy.delay_for(attempt))

Whether a call may run again at all is the runtime's decision, not the policy's, and it is
made from the tool's effect. The policy re-runs a failed call only when the tool is
re-runnable: `Effect.READ`, or `Effect.WRITE` declared `idempotent=True`. A plain `WRITE` or an
`IRREVERSIBLE` tool that raised is never retried, whatever the policy says: it may have acted
before it failed, and its partial effect is unknown, so its error goes to the model as it is.
A `ToolArgumentsError` (arguments the tool refused) is never retried either.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from eudaimon.core.errors import ConfigurationError

__all__ = ["Backoff", "ToolRetryPolicy"]

ExceptionTypes = tuple[type[BaseException], ...]


class Backoff(StrEnum):
    """How delays grow between attempts."""

    FIXED = "fixed"
    """The same delay every time."""
    EXPONENTIAL = "exponential"
    """Doubling from `initial_delay` up to `max_delay`, with ±20% jitter so callers spread out."""


_JITTER = 0.2


def _exception_types(retry_on: type[BaseException] | Sequence[type[BaseException]]) -> ExceptionTypes:
    types = (retry_on,) if isinstance(retry_on, type) else tuple(retry_on)
    for t in types:
        if not (isinstance(t, type) and issubclass(t, BaseException)):
            raise ConfigurationError(f"retry_on must hold exception classes, got {t!r}")
    return types


@dataclass(frozen=True, slots=True)
class ToolRetryPolicy:
    """How a failing tool call is retried; per-tool overrides via `for_tool`.

    Build one with `ToolRetryPolicy.exponential(...)` or `ToolRetryPolicy.fixed(...)`.
    `max_attempts` counts the first try: 1 means no retry.
    """

    max_attempts: int
    backoff: Backoff = Backoff.EXPONENTIAL
    initial_delay: float = 0.1
    """Seconds before the first retry (the fixed delay, for `Backoff.FIXED`)."""
    max_delay: float = 10.0
    """Ceiling of any delay, jitter included, in seconds."""
    retry_on: ExceptionTypes = (Exception,)
    """Errors worth another try; any other error is final at once."""
    overrides: tuple[tuple[str, ToolRetryPolicy], ...] = ()
    """(tool name, policy) pairs that `policy_for` prefers to this policy."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigurationError(f"max_attempts must be at least 1 (the first try), got {self.max_attempts}")
        if self.initial_delay < 0 or self.max_delay < 0:
            raise ConfigurationError(
                f"retry delays must not be negative (initial_delay={self.initial_delay}, max_delay={self.max_delay})"
            )
        object.__setattr__(self, "retry_on", _exception_types(self.retry_on))

    @classmethod
    def exponential(
        cls,
        max_attempts: int,
        initial_delay: float = 0.1,
        max_delay: float = 10.0,
        retry_on: type[BaseException] | Sequence[type[BaseException]] = (Exception,),
    ) -> ToolRetryPolicy:
        """Up to `max_attempts` tries, waiting `initial_delay * 2**(n-1)` (±20%, at most `max_delay`) after try n."""
        return cls(max_attempts, Backoff.EXPONENTIAL, initial_delay, max_delay, _exception_types(retry_on))

    @classmethod
    def fixed(
        cls,
        max_attempts: int,
        delay: float,
        retry_on: type[BaseException] | Sequence[type[BaseException]] = (Exception,),
    ) -> ToolRetryPolicy:
        """Up to `max_attempts` tries, waiting `delay` seconds between them."""
        return cls(max_attempts, Backoff.FIXED, delay, delay, _exception_types(retry_on))

    @classmethod
    def never(cls) -> ToolRetryPolicy:
        """One try, no retry: for a tool that must not run twice under a retrying default."""
        return cls(1, Backoff.FIXED, 0.0, 0.0)

    def for_tool(self, name: str, policy: ToolRetryPolicy) -> ToolRetryPolicy:
        """A copy of this policy that uses `policy` for the tool called `name` (replacing any earlier one)."""
        kept = tuple((n, p) for n, p in self.overrides if n != name)
        return replace(self, overrides=(*kept, (name, policy)))

    def policy_for(self, tool_name: str) -> ToolRetryPolicy:
        """The policy for `tool_name`: its override, else this policy."""
        for name, policy in self.overrides:
            if name == tool_name:
                return policy
        return self

    def should_retry(self, error: BaseException, attempt: int) -> bool:
        """Whether to try again after attempt number `attempt` (1-based) failed with `error`."""
        return attempt < self.max_attempts and isinstance(error, self.retry_on)

    def delay_for(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after attempt number `attempt` (1-based) failed, before the next one.

        Args:
            attempt: The attempt that just failed.
            rng: The source of jitter; pass a seeded `random.Random` for repeatable delays.
        """
        if self.backoff is Backoff.FIXED:
            return self.initial_delay
        # The exponent is capped so that a long retry budget cannot overflow a float.
        base = min(self.max_delay, self.initial_delay * 2.0 ** min(max(attempt - 1, 0), 64))
        jitter = (rng or random).uniform(1.0 - _JITTER, 1.0 + _JITTER)
        return min(self.max_delay, base * jitter)
