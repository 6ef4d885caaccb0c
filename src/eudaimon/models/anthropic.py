"""`AnthropicModel`: Claude over the Anthropic Messages API (`anthropic:NAME`).

Built on the official `anthropic` SDK with its own retries switched off (`max_retries=0`): the
runtime retries, and journals each retry as `model_retry_scheduled`; this module only
classifies a failure, once, into the `ModelError` tree (see `_provider_errors`). Errors the
API reports inside a stream (an `error` event, e.g. `overloaded_error`) are classified by
their type as if they had been the status that type stands for.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, TypeVar, cast

import pydantic

from eudaimon._extras import needs

with needs("anthropic", "AnthropicModel"):
    import anthropic
    import httpx2
    from anthropic import AsyncAnthropic, AsyncStream
    from anthropic.types import RawMessageStreamEvent, ToolChoiceParam
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming, MessageCreateParamsStreaming

from eudaimon.core.errors import ConfigurationError, ModelError, ModelRequestRejected
from eudaimon.core.settings import ModelSettings
from eudaimon.models._anthropic_convert import (
    AnthropicStream,
    Converted,
    convert_message,
    from_message,
    to_anthropic,
    to_anthropic_tools,
)
from eudaimon.models._loop_clients import ClientSource
from eudaimon.models._provider_errors import (
    ErrorContext,
    from_status,
    invalid,
    mentions_context_length,
    redact,
    unavailable,
)
from eudaimon.models._sdk import check_options, classified, display_url, read, relay
from eudaimon.models._wire_cache import WireCache
from eudaimon.models.base import ChatRequest, ChatResponse, ModelStreamItem, OutputMode

DEFAULT_MAX_TOKENS = 4096
"""The Messages API requires `max_tokens`; this is sent when a request does not set one."""
DEFAULT_TIMEOUT_S = 600.0
_OPTIONS = frozenset({"api_key", "base_url", "timeout", "client", "default_max_tokens"})
# The status an error type stands for, for errors that arrive inside a 200 stream.
_STATUS_OF_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
_Params = TypeVar("_Params", MessageCreateParamsNonStreaming, MessageCreateParamsStreaming)


class AnthropicModel:
    """A Claude model served by the Messages API.

    Args:
        model: The model name, e.g. "claude-sonnet-4-6"; it is also this model's `model_id`.
        api_key: The key; `None` lets the SDK find one (`ANTHROPIC_API_KEY`, then its profiles).
        base_url: Another endpoint speaking the same API (a proxy, a gateway).
        timeout: Seconds the client waits for each read (default 600).
        client: A prebuilt `anthropic.AsyncAnthropic`; used with `max_retries=0`, not closed here.
            Its connections belong to the event loop that opened them, so the model refuses it
            on a second loop (`ConfigurationError`): leave it out and the model builds a client
            per loop, closed when that loop shuts down or the model is closed.
        default_max_tokens: `max_tokens` for requests that set none (the API requires one).

    Raises:
        ConfigurationError: No credentials were given or found.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        client: AsyncAnthropic | None = None,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self._model = model
        self._default_max_tokens = default_max_tokens
        if client is None:
            client = _build_client(model, api_key, base_url, timeout)
            # Later loops' clients get what this one resolved, not what the environment says then.
            resolved = {
                "api_key": client.api_key,
                "auth_token": client.auth_token,
                "credentials": client.credentials,
                "base_url": str(client.base_url),
            }
            self._clients = ClientSource.built(client, lambda: _rebuild(resolved, timeout), AsyncAnthropic.close)
        else:
            retries_off = {"max_retries": 0} if timeout is None else {"max_retries": 0, "timeout": timeout}
            client = client.with_options(**retries_off)
            self._clients = ClientSource.given(client, f"AnthropicModel({model!r}, client=...)")
        self._client = client
        """The client given, or the first one built (checked for credentials at once, then the first loop's)."""
        self._base_url = display_url(str(client.base_url))
        secrets = tuple(s for s in (api_key, client.api_key, client.auth_token) if s)
        self._ctx = ErrorContext(
            provider="Anthropic",
            model=model,
            key_hint="check ANTHROPIC_API_KEY or the api_key given to AnthropicModel",
            secrets=secrets,
        )
        self._messages: WireCache[Converted] = WireCache(convert_message, _size)
        """Each message's blocks, converted once (see `_wire_cache`): a step converts only new messages."""

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def provider(self) -> str:
        return "anthropic"

    @property
    def base_url(self) -> str:
        """The API's URL, without credentials (telemetry's `server.address` and `server.port`)."""
        return self._base_url

    async def generate(self, request: ChatRequest) -> ChatResponse:
        """One message. Failures raise `ModelError`s, classified once (see the module docstring)."""
        params: MessageCreateParamsNonStreaming = {
            "model": self._model,
            "max_tokens": self._max_tokens(request),
            "messages": [],
        }
        params = self._fill(request, params)
        client = await self._clients.get()
        with classified(self._classify):
            message = await client.messages.create(**params, extra_body=self._extra(request))
        return read(from_message, message, self._ctx, "the message")

    def stream(self, request: ChatRequest) -> AsyncIterator[ModelStreamItem]:
        """Deltas as the events arrive, then the complete `ChatResponse`.

        A failure before any delta is classified like `generate`'s; a stream that breaks or
        ends early after content arrived is `ModelResponseInvalid`, which is not retried.
        """

        async def open_stream() -> AsyncStream[RawMessageStreamEvent]:
            client = await self._clients.get()
            return await client.messages.create(**self._stream_params(request), extra_body=self._extra(request))

        return relay(
            open_stream,
            AnthropicStream(),
            classify=self._classify,
            ctx=self._ctx,
            item="an event",
        )

    async def aclose(self) -> None:
        """Close the HTTP clients this model built, one per event loop (a client passed in is
        left to its owner)."""
        await self._clients.aclose()

    def _stream_params(self, request: ChatRequest) -> MessageCreateParamsStreaming:
        params: MessageCreateParamsStreaming = {
            "model": self._model,
            "max_tokens": self._max_tokens(request),
            "messages": [],
            "stream": True,
        }
        return self._fill(request, params)

    def _max_tokens(self, request: ChatRequest) -> int:
        return request.max_tokens if request.max_tokens is not None else self._default_max_tokens

    def check_settings(self, settings: ModelSettings) -> None:
        """Refuse what the Messages API has no field for.

        Raises:
            ConfigurationError: `seed` is set, or a `reasoning_effort` it does not know.
        """
        where = f"Anthropic model {self._model!r}"
        if settings.seed is not None:
            raise ConfigurationError(f"{where} has no seed setting; leave seed unset for Anthropic")
        if settings.reasoning_effort is not None and settings.reasoning_effort not in _EFFORTS:
            raise ConfigurationError(
                f"{where} has no reasoning_effort={settings.reasoning_effort!r}; use 'low', 'medium' or 'high', "
                "or thinking_budget_tokens=..."
            )

    output_modes: tuple[OutputMode, ...] = ("tool", "prompted")
    """Structured output: a tool whose input is the schema, or the prompt (strongest first)."""

    def _fill(self, request: ChatRequest, params: _Params) -> _Params:
        settings = request.settings
        self.check_settings(settings)
        system, messages = to_anthropic(request.messages, self._messages.get)
        params["messages"] = messages
        if system is not None:
            params["system"] = system
        output = request.output if request.output is not None and request.output.mode == "tool" else None
        tools = to_anthropic_tools(request.tools)
        if output is not None:
            description = output.description or "Give the final answer: its input is the result."
            tools.append({"name": output.name, "description": description, "input_schema": output.schema})
        if tools:
            params["tools"] = tools
            choice = _tool_choice(settings.tool_choice, settings.parallel_tool_calls)
            if choice is None and output is not None and settings.thinking_budget_tokens is None:
                # The answer is the output tool's input: text alone would not end the run
                # (a forced tool is refused with extended thinking, which keeps `auto`).
                choice = _tool_choice(output.name if len(tools) == 1 else "required", None)
            if choice is not None:
                params["tool_choice"] = choice
        if settings.stop_sequences:
            params["stop_sequences"] = list(settings.stop_sequences)
        if settings.thinking_budget_tokens is not None:
            params["thinking"] = {"type": "enabled", "budget_tokens": settings.thinking_budget_tokens}
        if settings.reasoning_effort is not None:
            params["output_config"] = {"effort": cast(Any, settings.reasoning_effort)}
        return params

    def _extra(self, request: ChatRequest) -> dict[str, Any] | None:
        # This SDK has no `temperature` or `top_p` arguments any more; the API still reads them.
        extra: dict[str, Any] = {}
        if request.temperature is not None:
            extra["temperature"] = request.temperature
        if request.settings.top_p is not None:
            extra["top_p"] = request.settings.top_p
        if request.settings.extra_body:
            extra.update(request.settings.extra_body)
        return extra or None

    def _classify(self, exc: Exception) -> ModelError | None:
        """The `ModelError` for an SDK or transport failure; `None` for anything else (a bug)."""
        if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
            return unavailable(self._ctx, "the request timed out")
        if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
            cause = exc.__cause__ or exc
            return unavailable(self._ctx, f"the connection to {self._base_url} failed: {type(cause).__name__}: {cause}")
        if isinstance(exc, anthropic.APIResponseValidationError):
            return invalid(self._ctx, f"the response did not match the API: {exc.message}", status_code=exc.status_code)
        if isinstance(exc, anthropic.APIStatusError):
            detail = exc.api_message or exc.message
            status, headers = exc.status_code, exc.response.headers
            if status < 400:  # an `error` event inside a stream that had started with 200
                status, headers = _STATUS_OF_TYPE.get(exc.type or "", 500), httpx2.Headers()
            context = status in (400, 413) and mentions_context_length(detail)
            return from_status(self._ctx, status, detail, headers, is_context=context)
        if isinstance(exc, anthropic.CredentialsError):
            return ModelRequestRejected(
                f"Anthropic model {self._model!r}: no usable credentials: {self._ctx.key_hint}", model=self._model
            )
        if isinstance(exc, json.JSONDecodeError | pydantic.ValidationError):
            return invalid(self._ctx, f"the response is not valid JSON: {exc}")
        return None

    def __repr__(self) -> str:
        return f"AnthropicModel(model={self._model!r}, base_url={self._base_url!r})"


_EFFORTS = frozenset({"low", "medium", "high"})


def _build_client(model: str, api_key: str | None, base_url: str | None, timeout: float | None) -> AsyncAnthropic:
    try:
        client = AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout if timeout is not None else DEFAULT_TIMEOUT_S,
            max_retries=0,
        )
    except anthropic.CredentialsError as exc:
        raise ConfigurationError(
            f"AnthropicModel({model!r}): the SDK's credentials could not be loaded ({redact(str(exc))}); "
            "pass `api_key` or set ANTHROPIC_API_KEY"
        ) from None
    if client.api_key is None and client.auth_token is None and client.credentials is None:
        raise ConfigurationError(
            f"AnthropicModel({model!r}) has no credentials: pass `api_key` or set ANTHROPIC_API_KEY"
        )
    return client


def _rebuild(resolved: dict[str, Any], timeout: float | None) -> AsyncAnthropic:
    return AsyncAnthropic(**resolved, timeout=timeout if timeout is not None else DEFAULT_TIMEOUT_S, max_retries=0)


def _size(converted: Converted) -> int:
    """About the bytes a message's blocks hold: their text and inline data."""
    _role, blocks, text = converted
    return 64 + len(text) + sum(len(repr(block)) for block in blocks)


def _tool_choice(choice: str | None, parallel: bool | None) -> ToolChoiceParam | None:
    """`tool_choice` in the Messages API's terms: "required" is `any`; no parallel calls is
    `disable_parallel_tool_use` on the choice (auto when no choice is set)."""
    if choice is None and parallel is None:
        return None
    result: dict[str, Any]
    if choice is None or choice == "auto":
        result = {"type": "auto"}
    elif choice == "none":
        return {"type": "none"}
    elif choice == "required":
        result = {"type": "any"}
    else:
        result = {"type": "tool", "name": choice}
    if parallel is False:
        result["disable_parallel_tool_use"] = True
    return cast(ToolChoiceParam, result)


def from_model_string(provider: str, name: str, **options: Any) -> AnthropicModel:
    """Build the model for `"anthropic:NAME"`; options are `AnthropicModel`'s keyword arguments."""
    if provider != "anthropic":
        raise ConfigurationError(f"AnthropicModel serves the 'anthropic' provider, not {provider!r}")
    check_options(options, _OPTIONS, f"anthropic:{name}")
    return AnthropicModel(name, **options)
