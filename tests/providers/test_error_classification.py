"""The shared pieces of provider error classification: Retry-After, stated limits, redaction."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from eudaimon.core.errors import ContextTooLong, ModelRateLimited, ModelRequestRejected, ModelUnavailable
from eudaimon.models._provider_errors import ErrorContext, context_limits, from_status, redact, retry_after_seconds

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after": "Thu, 01 Jan 2026 12:00:30 GMT"}, 30.0),
        ({"retry-after": "Thu, 01 Jan 2026 11:59:00 GMT"}, 0.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
        ({}, None),
    ],
)
def test_retry_after_in_seconds_or_as_a_date(headers, expected):
    """Retry-After is read as seconds or as an HTTP date (a past date means now); retry-after-ms
    wins; nonsense is ignored rather than trusted."""
    assert retry_after_seconds(headers, now=NOW) == expected


@pytest.mark.parametrize(
    ("message", "limits"),
    [
        ("This model's maximum context length is 8192 tokens. However, you requested 9000 tokens", (8192, 9000)),
        ("This model's maximum context length is 128,000 tokens.", (128000, None)),
        ("prompt is too long: 210417 tokens > 200000 maximum", (200000, 210417)),
        ("input length and `max_tokens` exceed context limit: 190000 + 20000 > 200000", (200000, 210000)),
        ("something else entirely", (None, None)),
    ],
)
def test_context_limits_as_the_provider_states_them(message, limits):
    """The window and the requested size are parsed from each provider's wording, when stated."""
    assert context_limits(message) == limits


def test_redact_removes_keys_masked_or_not():
    """The exact key and anything shaped like one (OpenAI's masked echo) are removed."""
    text = "Incorrect API key provided: sk-proj-****abcd. Your key my-secret-token-123 was refused"
    cleaned = redact(text, ["my-secret-token-123"])
    assert "sk-proj" not in cleaned
    assert "my-secret-token-123" not in cleaned
    assert "Incorrect API key provided" in cleaned


def test_statuses_map_to_the_error_tree():
    """429 → rate limited, 5xx/408/409 → unavailable, context → ContextTooLong, other 4xx →
    rejected; a 401 names what to check and drops the provider's text."""
    ctx = ErrorContext(provider="P", model="m", key_hint="check P_KEY", secrets=("s3cret-value",))
    assert isinstance(from_status(ctx, 429, "slow", {"retry-after": "2"}), ModelRateLimited)
    for status in (500, 502, 503, 529, 408, 409):
        assert isinstance(from_status(ctx, status, "x", None), ModelUnavailable)
    assert isinstance(from_status(ctx, 400, "too long", None, is_context=True), ContextTooLong)
    rejected = from_status(ctx, 401, "bad key s3cret-value", None)
    assert isinstance(rejected, ModelRequestRejected)
    assert "check P_KEY" in str(rejected)
    assert "s3cret" not in str(rejected)
    assert "s3cret" not in str(from_status(ctx, 422, "echo s3cret-value", None))
