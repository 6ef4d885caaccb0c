"""`OpenAIModel`: OpenAI Chat Completions, and the servers that speak it (Ollama, vLLM, …).

Built on the official `openai` SDK with its own retries switched off (`max_retries=0`): the
runtime retries, and journals each retry as `model_retry_scheduled`; this module only
classifies a failure, once, into the `ModelError` tree (see `_provider_errors`).

Model strings (`eudaimon.models.infer_model`):
    `openai:gpt-4o-mini`            api.openai.com, key from `api_key=` or `OPENAI_API_KEY`
    `ollama:llama3.2`               `OLLAMA_BASE_URL` or http://localhost:11434/v1, no key
    `openai-compatible:NAME`        `base_url=` (or `OPENAI_COMPATIBLE_BASE_URL`) required;
                                    key from `api_key=` or `OPENAI_COMPATIBLE_API_KEY`, else none
Keys meant for OpenAI are never sent to another server: the last two never read `OPENAI_API_KEY`.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any, Literal, TypeVar, cast

import pydantic

from eudaimon._extras import needs

with needs("openai", "OpenAIModel"):
    import httpx2
    import openai
    from openai import AsyncOpenAI, AsyncStream, RequestOptions
    from openai.types.chat import (
        ChatCompletion,
        ChatCompletionChunk,
        ChatCompletionFunctionToolParam,
        ChatCompletionToolChoiceOptionParam,
    )
    from openai.types.chat.completion_create_params import (
        CompletionCreateParamsNonStreaming,
        CompletionCreateParamsStreaming,
    )
    from openai.types.shared_params import ResponseFormatJSONSchema

from eudaimon.core.errors import ConfigurationError, ModelError
from eudaimon.core.settings import ModelSettings
from eudaimon.models._loop_clients import ClientSource
from eudaimon.models._openai_body import message_cache, request_body
from eudaimon.models._openai_convert import OpenAIStream, from_completion, to_openai_tools
from eudaimon.models._provider_errors import (
    ErrorContext,
    from_status,
    invalid,
    mentions_context_length,
    redact,
    unavailable,
)
from eudaimon.models._sdk import check_options, classified, display_url, read, relay
from eudaimon.models.base import ChatRequest, ChatResponse, ModelStreamItem, OutputMode, StructuredOutput

DEFAULT_TIMEOUT_S = 600.0
"""Per read, not per call: a streamed answer may take longer as long as chunks keep coming."""
OLLAMA_DEFAULT_BASE_URL = "http://localhost:11434/v1"
_NO_KEY = "not-needed"  # the SDK insists on some key; local servers ignore it
_OPTIONS = frozenset({"api_key", "base_url", "timeout", "client", "max_tokens_field"})
MaxTokensField = Literal["max_tokens", "max_completion_tokens"]
_Params = TypeVar("_Params", CompletionCreateParamsNonStreaming, CompletionCreateParamsStreaming)
_PATH = "/chat/completions"
_POST_OPTIONS: RequestOptions = {"security": {"bearer_auth": True}}  # what the SDK's create() sends


class OpenAIModel:
    """A model served over the Chat Completions API.

    Args:
        model: The provider's model name, e.g. "gpt-4o-mini"; it is also this model's `model_id`.
        api_key: The key; `None` reads `OPENAI_API_KEY` (for `provider="openai"`).
        base_url: Another server speaking the same API, e.g. "http://localhost:11434/v1".
        timeout: Seconds the client waits for each read (default 600).
        client: A prebuilt `openai.AsyncOpenAI`; it is used with `max_retries=0` and not closed here.
            Its connections belong to the event loop that opened them, so the model refuses it
            on a second loop (`ConfigurationError`): leave it out and the model builds a client
            per loop (each `asyncio.run`, each `prompt_sync`, each thread's loop), closed when
            that loop shuts down or the model is closed.
        provider: "openai", "ollama" or "openai-compatible"; names the server in error messages.
        max_tokens_field: Which request field carries `max_tokens`: OpenAI wants
            "max_completion_tokens" (its reasoning models refuse the other), most compatible
            servers only know "max_tokens".

    Raises:
        ConfigurationError: No key was given or found for OpenAI.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        client: AsyncOpenAI | None = None,
        provider: str = "openai",
        max_tokens_field: MaxTokensField | None = None,
    ) -> None:
        self._model = model
        self._provider = provider
        if client is None:
            client = _build_client(model, api_key, base_url, timeout)
            # Later loops' clients get the key and URL this one resolved, not the environment's.
            key, url = client.api_key, str(client.base_url)
            self._clients = ClientSource.built(
                client, lambda: _build_client(model, key, url, timeout), AsyncOpenAI.close
            )
        else:
            retries_off = {"max_retries": 0} if timeout is None else {"max_retries": 0, "timeout": timeout}
            client = client.with_options(**retries_off)
            self._clients = ClientSource.given(client, f"OpenAIModel({model!r}, client=...)")
        self._client = client
        """The client given, or the first one built (checked for a key at once, then the first loop's)."""
        self._base_url = display_url(str(client.base_url))
        self._max_tokens_field: MaxTokensField = max_tokens_field or (
            "max_completion_tokens" if provider == "openai" else "max_tokens"
        )
        secrets = tuple(s for s in (api_key, client.api_key) if isinstance(s, str) and s and s != _NO_KEY)
        if provider == "openai":
            label, hint = "OpenAI", "check OPENAI_API_KEY or the api_key given to OpenAIModel"
        else:
            kind = "Ollama" if provider == "ollama" else "OpenAI-compatible server"
            label, hint = f"{kind} at {self._base_url}", f"check the api_key given for {self._base_url}"
        self._ctx = ErrorContext(provider=label, model=model, key_hint=hint, secrets=secrets)
        self._messages = message_cache()
        """Each message's JSON, encoded once (see `_openai_body`): a step converts only new messages."""

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def base_url(self) -> str:
        """The API's URL, without credentials (telemetry's `server.address` and `server.port`)."""
        return self._base_url

    async def generate(self, request: ChatRequest) -> ChatResponse:
        """One completion. Failures raise `ModelError`s, classified once (see the module docstring)."""
        client = await self._clients.get()
        with classified(self._classify):
            completion = await client.post(
                _PATH, cast_to=ChatCompletion, content=self._body(request, self._params(request)), options=_POST_OPTIONS
            )
        return read(from_completion, completion, self._ctx, "the completion")

    def stream(self, request: ChatRequest) -> AsyncIterator[ModelStreamItem]:
        """Deltas as the chunks arrive, then the complete `ChatResponse`.

        A failure before any delta is classified like `generate`'s; a stream that breaks or
        ends early after content arrived is `ModelResponseInvalid`, which is not retried.
        """

        async def open_stream() -> AsyncStream[ChatCompletionChunk]:
            client = await self._clients.get()
            return await client.post(
                _PATH,
                cast_to=ChatCompletion,
                content=self._body(request, self._stream_params(request)),
                options=_POST_OPTIONS,
                stream=True,
                stream_cls=AsyncStream[ChatCompletionChunk],
            )

        return relay(
            open_stream,
            OpenAIStream(),
            classify=self._classify,
            ctx=self._ctx,
            item="a chunk",
        )

    async def aclose(self) -> None:
        """Close the HTTP clients this model built, one per event loop (a client passed in is
        left to its owner)."""
        await self._clients.aclose()

    def _stream_params(self, request: ChatRequest) -> CompletionCreateParamsStreaming:
        # include_usage: without it a streamed answer reports no tokens, and costs nothing.
        params: CompletionCreateParamsStreaming = {
            "model": self._model,
            "messages": [],  # encoded apart, from the cache: see `_body`
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        return self._options(request, params)

    def _params(self, request: ChatRequest) -> CompletionCreateParamsNonStreaming:
        params: CompletionCreateParamsNonStreaming = {
            "model": self._model,
            "messages": [],  # encoded apart, from the cache: see `_body`
        }
        return self._options(request, params)

    def _body(
        self, request: ChatRequest, params: CompletionCreateParamsNonStreaming | CompletionCreateParamsStreaming
    ) -> bytes:
        """The JSON body: `params` without their placeholder messages, `extra_body` merged over
        them as the SDK merges it, and the request's messages encoded from the cache."""
        head: dict[str, Any] = {k: v for k, v in params.items() if k != "messages"}
        extra = request.settings.extra_body
        if extra:
            head.update(extra)
        return request_body(head, request.messages, self._messages)

    def check_settings(self, settings: ModelSettings) -> None:
        """Refuse what Chat Completions has no field for.

        Raises:
            ConfigurationError: `thinking_budget_tokens` is set (use `reasoning_effort`), or
                more than four stop sequences for OpenAI itself.
        """
        where = f"{self._ctx.provider} model {self._model!r}"
        if settings.thinking_budget_tokens is not None:
            raise ConfigurationError(
                f"{where} has no thinking budget (thinking_budget_tokens is Anthropic's); "
                "set reasoning_effort='low' | 'medium' | 'high' instead"
            )
        if self._provider == "openai" and settings.stop_sequences and len(settings.stop_sequences) > 4:
            raise ConfigurationError(f"{where} takes at most 4 stop_sequences, got {len(settings.stop_sequences)}")

    output_modes: tuple[OutputMode, ...] = ("native", "tool", "prompted")
    """Structured output: `response_format` json_schema, a tool, or the prompt (strongest first)."""

    def _options(self, request: ChatRequest, params: _Params) -> _Params:
        settings = request.settings
        self.check_settings(settings)
        output = request.output
        tools = to_openai_tools(request.tools)
        if output is not None and output.mode == "tool":
            tools.append(_output_tool(output))
        if tools:
            params["tools"] = tools
            if settings.tool_choice is not None:
                params["tool_choice"] = _tool_choice(settings.tool_choice)
            elif output is not None and output.mode == "tool":
                # The answer is the output tool's call: text alone would not end the run.
                params["tool_choice"] = _tool_choice(output.name) if len(tools) == 1 else "required"
            if settings.parallel_tool_calls is not None:
                params["parallel_tool_calls"] = settings.parallel_tool_calls
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.max_tokens is not None:
            params[self._max_tokens_field] = request.max_tokens
        if settings.top_p is not None:
            params["top_p"] = settings.top_p
        if settings.seed is not None:
            params["seed"] = settings.seed
        if settings.stop_sequences:
            params["stop"] = list(settings.stop_sequences)
        if settings.reasoning_effort is not None:
            params["reasoning_effort"] = settings.reasoning_effort
        if output is not None and output.mode == "native":
            params["response_format"] = _response_format(output)
        return params

    def _classify(self, exc: Exception) -> ModelError | None:
        """The `ModelError` for an SDK or transport failure; `None` for anything else (a bug)."""
        if isinstance(exc, openai.APITimeoutError | httpx2.TimeoutException):
            return unavailable(self._ctx, "the request timed out")
        if isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
            cause = exc.__cause__ or exc
            where = f"the connection to {self._base_url} failed"
            return unavailable(self._ctx, f"{where} (is the server running?): {type(cause).__name__}: {cause}")
        if isinstance(exc, openai.APIResponseValidationError):
            return invalid(self._ctx, f"the response did not match the API: {exc.message}", status_code=exc.status_code)
        if isinstance(exc, openai.APIStatusError):
            detail = _detail(exc.body, exc.message)
            context = exc.code == "context_length_exceeded" or (
                exc.status_code in (400, 413) and mentions_context_length(detail)
            )
            quota = exc.code == "insufficient_quota"
            return from_status(
                self._ctx, exc.status_code, detail, exc.response.headers, is_context=context, is_quota=quota
            )
        if isinstance(exc, openai.APIError):
            # An error event inside a stream: classified by its type as the status it stands for.
            detail = _detail(exc.body, exc.message)
            if exc.code == "context_length_exceeded":
                return from_status(self._ctx, 400, detail, None, is_context=True)
            status = 400 if exc.type == "invalid_request_error" else 429 if exc.code == "rate_limit_exceeded" else 500
            return from_status(self._ctx, status, f"the provider reported an error in the stream: {detail}", None)
        if isinstance(exc, json.JSONDecodeError | pydantic.ValidationError):
            return invalid(self._ctx, f"the response is not valid JSON: {exc}")
        return None

    def __repr__(self) -> str:
        return f"OpenAIModel(model={self._model!r}, provider={self._provider!r}, base_url={self._base_url!r})"


def _build_client(model: str, api_key: str | None, base_url: str | None, timeout: float | None) -> AsyncOpenAI:
    try:
        return AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout if timeout is not None else DEFAULT_TIMEOUT_S,
            max_retries=0,
        )
    except openai.OpenAIError as exc:
        if api_key is None and not os.environ.get("OPENAI_API_KEY"):
            reason = "has no API key"
        else:
            reason = f"could not be built ({redact(str(exc), [api_key or ''])})"
        raise ConfigurationError(f"OpenAIModel({model!r}) {reason}: pass `api_key` or set OPENAI_API_KEY") from None


def _output_tool(output: StructuredOutput) -> ChatCompletionFunctionToolParam:
    """The tool whose arguments are the typed answer (`ToolOutput`)."""
    description = output.description or "Give the final answer: its arguments are the result."
    return {
        "type": "function",
        "function": {"name": output.name, "description": description, "parameters": output.schema},
    }


def _response_format(output: StructuredOutput) -> ResponseFormatJSONSchema:
    """`response_format` json_schema: the provider constrains the answer to the schema."""
    spec: dict[str, Any] = {"name": output.name, "schema": output.schema}
    if output.description is not None:
        spec["description"] = output.description
    if output.strict is not None:
        spec["strict"] = output.strict
    return cast(ResponseFormatJSONSchema, {"type": "json_schema", "json_schema": spec})


def _tool_choice(choice: str) -> ChatCompletionToolChoiceOptionParam:
    if choice == "auto":
        return "auto"
    if choice == "none":
        return "none"
    if choice == "required":
        return "required"
    return {"type": "function", "function": {"name": choice}}


def _detail(body: object, fallback: str) -> str:
    if isinstance(body, dict):
        message = body.get("message")
        if isinstance(message, str) and message:
            return message
    return fallback


def _with_v1(url: str) -> str:
    # Ollama's own settings name the server ("http://host:11434"); its OpenAI API lives under /v1.
    _scheme, sep, rest = url.partition("://")
    if sep and "/" not in rest.rstrip("/"):
        return url.rstrip("/") + "/v1"
    return url


def from_model_string(provider: str, name: str, **options: Any) -> OpenAIModel:
    """Build the model for `"openai:NAME"`, `"ollama:NAME"` or `"openai-compatible:NAME"`.

    Options are `OpenAIModel`'s keyword arguments: api_key, base_url, timeout, client,
    max_tokens_field.
    """
    check_options(options, _OPTIONS, f"{provider}:{name}")
    if provider == "openai":
        return OpenAIModel(name, provider="openai", **options)
    if provider == "ollama":
        base_url = options.pop("base_url", None) or os.environ.get("OLLAMA_BASE_URL") or OLLAMA_DEFAULT_BASE_URL
        api_key = options.pop("api_key", None) or _NO_KEY
        return OpenAIModel(name, provider="ollama", base_url=_with_v1(base_url), api_key=api_key, **options)
    if provider == "openai-compatible":
        base_url = options.pop("base_url", None) or os.environ.get("OPENAI_COMPATIBLE_BASE_URL")
        if not base_url and options.get("client") is None:
            raise ConfigurationError(
                f"model 'openai-compatible:{name}' needs the server's URL: pass base_url=... "
                "(e.g. 'http://localhost:8000/v1') or set OPENAI_COMPATIBLE_BASE_URL"
            )
        api_key = options.pop("api_key", None) or os.environ.get("OPENAI_COMPATIBLE_API_KEY") or _NO_KEY
        return OpenAIModel(name, provider="openai-compatible", base_url=base_url, api_key=api_key, **options)
    raise ConfigurationError(f"OpenAIModel serves 'openai', 'ollama' and 'openai-compatible', not {provider!r}")
