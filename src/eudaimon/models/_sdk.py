"""What the SDK-backed models (`OpenAIModel`, `AnthropicModel`) share around their SDKs.

Each provider knows how its SDK fails (a `Classify` function) and how its chunks or events fold
into deltas and a response (a `StreamState`); the rest is the same for both and lives here:
`classified` raises the `ModelError` its `Classify` names for a failure, `read` parses a whole
response, `relay` streams, and `check_options` and `display_url` serve the constructors.

A stream's failure before any delta is classified like a whole call's; a retryable failure
after content arrived, a chunk or event that cannot be read and a stream that ends early are
`ModelResponseInvalid`, which is not retried: the caller has already seen part of the answer.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any, Protocol, TypeVar

from eudaimon.core.errors import ConfigurationError, ModelError
from eudaimon.core.redact import redact
from eudaimon.models._provider_errors import ErrorContext, invalid
from eudaimon.models.base import ChatResponse, ModelStreamItem
from eudaimon.streaming import ModelDelta

_Item = TypeVar("_Item")
_Raw = TypeVar("_Raw")
_Item_co = TypeVar("_Item_co", covariant=True)
_Item_contra = TypeVar("_Item_contra", contravariant=True)

Classify = Callable[[Exception], ModelError | None]
"""A provider's classifier: the `ModelError` for an SDK or transport failure, `None` for a bug."""


class StreamIncomplete(ValueError):
    """A stream or a completion that ended, or went on, in a shape a complete answer cannot have."""


# What reading a response that lacks the shape the SDK promised raises.
_PARSE_ERRORS = (StreamIncomplete, AttributeError, TypeError, KeyError, IndexError)


class StreamState(Protocol[_Item_contra]):
    """Folds a provider's stream items (chunks, events) into deltas and the final response."""

    def feed(self, item: _Item_contra) -> list[ModelDelta]:
        """The deltas one item carries, in order."""
        ...

    def finish(self) -> ChatResponse:
        """The complete response; raises `StreamIncomplete` if the stream was cut before its end."""
        ...


class SDKStream(AsyncIterable[_Item_co], AbstractAsyncContextManager[Any], Protocol[_Item_co]):
    """An SDK's open stream: read with `async for`, closed by `async with`."""


@contextmanager
def classified(classify: Classify) -> Iterator[None]:
    """Raise what `classify` makes of a failure in the block; what it does not know passes as it is."""
    try:
        yield
    except Exception as exc:
        error = classify(exc)
        if error is None:
            raise
        raise error from None


def read(parse: Callable[[_Raw], ChatResponse], raw: _Raw, ctx: ErrorContext, what: str) -> ChatResponse:
    """`parse(raw)`; a body it cannot read is `ModelResponseInvalid` ("<what> could not be read")."""
    try:
        return parse(raw)
    except _PARSE_ERRORS as exc:
        raise invalid(ctx, f"{what} could not be read: {exc}") from None


async def relay(
    open_stream: Callable[[], Awaitable[SDKStream[_Item]]],
    state: StreamState[_Item],
    *,
    classify: Classify,
    ctx: ErrorContext,
    item: str,
) -> AsyncIterator[ModelStreamItem]:
    """Deltas as the stream's items arrive, then the complete `ChatResponse`.

    Args:
        open_stream: Sends the request; its failures are `classified`.
        state: Folds the items.
        classify: The provider's classifier.
        ctx: Names the provider and the model in errors.
        item: What one item is called in messages, e.g. "a chunk", "an event".
    """
    with classified(classify):
        items = await open_stream()
    content_seen = False
    async with items:
        try:
            async for raw in items:
                for delta in state.feed(raw):
                    content_seen = True
                    yield delta
        except Exception as exc:
            error = _broken(exc, content_seen, classify, ctx, item)
            if error is None:
                raise
            raise error from None
    try:
        response = state.finish()
    except StreamIncomplete as exc:
        raise invalid(ctx, str(exc)) from None
    yield response


def _broken(exc: Exception, content_seen: bool, classify: Classify, ctx: ErrorContext, item: str) -> ModelError | None:
    if isinstance(exc, _PARSE_ERRORS):
        return invalid(ctx, f"{item} could not be read: {exc}")
    error = classify(exc)
    if error is not None and content_seen and error.retryable:
        return invalid(ctx, f"the stream broke after content arrived: {error}")
    return error


def check_options(options: Mapping[str, object], known: frozenset[str], model: str) -> None:
    """Raise `ConfigurationError` naming the options a `"provider:NAME"` model does not take."""
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigurationError(
            f"unknown option(s) {', '.join(unknown)} for model '{model}'; known: {', '.join(sorted(known))}"
        )


def display_url(url: str) -> str:
    """The URL without any `user:password@` part or secret query parameter, fit for messages
    and reprs."""
    return redact(re.sub(r"//[^/@]*@", "//", url)).rstrip("/")
