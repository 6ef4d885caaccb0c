"""Tool retry policies: attempts, error classes, delays with bounded, repeatable jitter, per-tool overrides."""

from __future__ import annotations

import random

import pytest

from eudaimon.core.errors import ConfigurationError
from eudaimon.retry import Backoff, ToolRetryPolicy


def test_max_attempts_counts_the_first_try() -> None:
    """With max_attempts=3, attempts 1 and 2 may be retried, attempt 3 is the last."""
    policy = ToolRetryPolicy.exponential(3)
    error = TimeoutError("slow")
    assert [policy.should_retry(error, n) for n in (1, 2, 3, 4)] == [True, True, False, False]
    assert not ToolRetryPolicy.never().should_retry(error, 1)


def test_only_listed_errors_are_retried() -> None:
    """An error outside retry_on is final at once; subclasses of listed errors are retried."""
    policy = ToolRetryPolicy.fixed(5, 0.0, retry_on=(ConnectionError, TimeoutError))
    assert policy.should_retry(ConnectionResetError(), 1)
    assert policy.should_retry(TimeoutError(), 1)
    assert not policy.should_retry(ValueError("bad input"), 1)
    single = ToolRetryPolicy.exponential(2, retry_on=KeyError)
    assert single.retry_on == (KeyError,)


def test_fixed_delay_is_constant() -> None:
    """A fixed policy waits the same delay after every attempt."""
    policy = ToolRetryPolicy.fixed(4, 0.25)
    assert policy.backoff is Backoff.FIXED
    assert [policy.delay_for(n) for n in (1, 2, 3)] == [0.25, 0.25, 0.25]


def test_exponential_delay_doubles_within_jitter_and_is_capped() -> None:
    """Exponential delays double from initial_delay within ±20%, and never exceed max_delay."""
    policy = ToolRetryPolicy.exponential(20, initial_delay=0.1, max_delay=1.0)
    rng = random.Random(7)
    for attempt in range(1, 20):
        base = min(1.0, 0.1 * 2 ** (attempt - 1))
        delay = policy.delay_for(attempt, rng)
        assert 0.8 * base <= delay <= min(1.0, 1.2 * base)
    assert policy.delay_for(10_000, rng) <= 1.0, "a huge attempt number neither overflows nor exceeds the cap"


def test_jitter_is_deterministic_with_a_seeded_rng() -> None:
    """The same seed gives the same delays, so a test or a replay can reproduce them."""
    policy = ToolRetryPolicy.exponential(5)
    first = [policy.delay_for(n, random.Random(42)) for n in (1, 2, 3)]
    second = [policy.delay_for(n, random.Random(42)) for n in (1, 2, 3)]
    assert first == second


def test_per_tool_overrides() -> None:
    """for_tool returns a new policy; policy_for gives a tool its override, else the default."""
    default = ToolRetryPolicy.exponential(3)
    flaky = ToolRetryPolicy.fixed(10, 0.5)
    policy = default.for_tool("flaky_api", flaky).for_tool("send_email", ToolRetryPolicy.never())

    assert policy.policy_for("flaky_api") == flaky
    assert policy.policy_for("send_email").max_attempts == 1
    assert policy.policy_for("other") is policy
    assert default.policy_for("flaky_api") is default, "the original policy is unchanged"
    replaced = policy.for_tool("flaky_api", ToolRetryPolicy.fixed(2, 0.0))
    assert replaced.policy_for("flaky_api").max_attempts == 2


def test_invalid_policies_are_refused_at_construction() -> None:
    """Zero attempts, negative delays and non-exception retry_on are configuration errors."""
    with pytest.raises(ConfigurationError):
        ToolRetryPolicy.exponential(0)
    with pytest.raises(ConfigurationError):
        ToolRetryPolicy.fixed(3, -1.0)
    with pytest.raises(ConfigurationError):
        ToolRetryPolicy.exponential(3, retry_on=(int,))  # type: ignore[arg-type]
