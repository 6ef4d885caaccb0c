"""Turning a provider's HTTP failure into one `ModelError`, the same way for every provider.

Providers are classified once, by type, so that the runtime decides retries from the class
alone: a 429 is `ModelRateLimited` (with the `Retry-After` the provider asked for), a 5xx, a
timeout or a dropped connection is `ModelUnavailable`, a context-length refusal is
`ContextTooLong` (with the limits the provider stated), any other 4xx is
`ModelRequestRejected`, and a body that cannot be understood is `ModelResponseInvalid`.

Messages name the provider, the model and what to check. They never carry credentials: the
provider's own text is dropped for 401/403 (OpenAI echoes a masked key there) and every other
text goes through `redact`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from eudaimon.core.errors import (
    ContextTooLong,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelResponseInvalid,
    ModelUnavailable,
)
from eudaimon.core.redact import redact as redact_credentials

_NUMBER = r"(\d[\d,]*)"
# "This model's maximum context length is 128000 tokens. However, your messages resulted in
# 130000 tokens" (OpenAI, vLLM); "prompt is too long: 210000 tokens > 200000 maximum" and
# "input length and `max_tokens` exceed context limit: 190000 + 20000 > 200000" (Anthropic).
_OPENAI_LIMIT = re.compile(r"maximum context length is " + _NUMBER + r" tokens", re.IGNORECASE)
_OPENAI_REQUESTED = re.compile(r"(?:resulted in|requested|you requested) " + _NUMBER + r" tokens", re.IGNORECASE)
_ANTHROPIC_PROMPT = re.compile(r"prompt is too long:\s*" + _NUMBER + r" tokens\s*>\s*" + _NUMBER, re.IGNORECASE)
_ANTHROPIC_SUM = re.compile(
    r"exceed context limit:\s*" + _NUMBER + r"\s*\+\s*" + _NUMBER + r"\s*>\s*" + _NUMBER, re.IGNORECASE
)
_CONTEXT_WORDS = re.compile(
    r"context length|context window|context limit|prompt is too long|too many tokens", re.IGNORECASE
)
MAX_DETAIL_CHARS = 300


@dataclass(frozen=True, slots=True)
class ErrorContext:
    """Who failed, for messages: `provider` is a label ("OpenAI", "Ollama at http://…")."""

    provider: str
    model: str
    key_hint: str
    """What to check when credentials are refused, e.g. "check OPENAI_API_KEY"."""
    secrets: tuple[str, ...] = ()

    def clean(self, text: str) -> str:
        """`text`, shortened and with every credential removed."""
        text = redact(text, self.secrets)
        return text if len(text) <= MAX_DETAIL_CHARS else text[: MAX_DETAIL_CHARS - 1] + "…"


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove `secrets` and every credential-shaped part from `text` (`eudaimon.core.redact`)."""
    return redact_credentials(text, secrets)


def retry_after_seconds(headers: Mapping[str, str] | None, *, now: datetime | None = None) -> float | None:
    """The delay a provider asked for: `retry-after-ms`, else `Retry-After` in seconds or as an HTTP date."""
    if headers is None:
        return None
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = headers.get("retry-after")
    if not value:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _number(value: str | None) -> float | None:
    if not value:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def context_limits(message: str) -> tuple[int | None, int | None]:
    """`(limit_tokens, requested_tokens)` as stated in a context-length refusal, where stated."""
    found = _ANTHROPIC_PROMPT.search(message)
    if found:
        return _int(found.group(2)), _int(found.group(1))
    found = _ANTHROPIC_SUM.search(message)
    if found:
        return _int(found.group(3)), _int(found.group(1)) + _int(found.group(2))
    limit = _OPENAI_LIMIT.search(message)
    requested = _OPENAI_REQUESTED.search(message)
    return (_int(limit.group(1)) if limit else None, _int(requested.group(1)) if requested else None)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def mentions_context_length(message: str) -> bool:
    """Whether a 400's message is about the context window (for providers without an error code)."""
    return bool(_CONTEXT_WORDS.search(message))


def from_status(
    ctx: ErrorContext,
    status: int,
    detail: str,
    headers: Mapping[str, str] | None,
    *,
    is_context: bool = False,
    is_quota: bool = False,
) -> ModelError:
    """The `ModelError` for an HTTP error status; `detail` is the provider's message (it is cleaned)."""
    text = ctx.clean(detail)
    who = f"{ctx.provider} model {ctx.model!r}"
    if is_context:
        limit, requested = context_limits(detail)
        return ContextTooLong(
            f"{who}: the request does not fit the context window ({status}): {text}",
            limit_tokens=limit,
            requested_tokens=requested,
            model=ctx.model,
            status_code=status,
        )
    if status == 429 and not is_quota:
        delay = retry_after_seconds(headers)
        after = f", retry after {delay:g}s" if delay is not None else ""
        return ModelRateLimited(
            f"{who}: rate limited (429{after}): {text}", retry_after_s=delay, model=ctx.model, status_code=status
        )
    if status >= 500 or status in (408, 409):
        return ModelUnavailable(f"{who}: the provider failed ({status}): {text}", model=ctx.model, status_code=status)
    if status == 401:
        message = f"{who}: the credentials were refused (401): {ctx.key_hint}"
    elif status == 403:
        message = f"{who}: permission denied (403): check that the credentials may use this model; {ctx.key_hint}"
    elif status == 404:
        message = f"{who}: not found (404): check the model name and the base URL: {text}"
    elif is_quota:
        message = f"{who}: the account's quota is exhausted ({status}): check the plan and billing: {text}"
    else:
        message = f"{who}: the request was rejected ({status}): {text}"
    return ModelRequestRejected(message, model=ctx.model, status_code=status)


def unavailable(ctx: ErrorContext, what: str) -> ModelUnavailable:
    """A timeout or a connection failure before any content arrived."""
    return ModelUnavailable(f"{ctx.provider} model {ctx.model!r}: {ctx.clean(what)}", model=ctx.model)


def invalid(ctx: ErrorContext, what: str, *, status_code: int | None = None) -> ModelResponseInvalid:
    """A body or a stream that could not be understood, or that ended too soon."""
    return ModelResponseInvalid(
        f"{ctx.provider} model {ctx.model!r}: {ctx.clean(what)}", model=ctx.model, status_code=status_code
    )
