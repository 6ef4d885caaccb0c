"""`FallbackModel`: the next model answers when one is down.

Only a `ModelRetryableError` (rate limited, 5xx, timeout, dropped connection) moves on to the
next model: a rejected request, a context that is too long or an unreadable answer would fail
the same way elsewhere, or needs the runtime's own handling, so they are raised as they are.
The response names the model that served it (`ChatResponse.model`), so the run's journal and
its cost say which one answered.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from typing import Any

from eudaimon.core.errors import ConfigurationError, ModelRetryableError
from eudaimon.core.settings import ModelSettings
from eudaimon.models.base import ChatRequest, ChatResponse, Model, ModelStreamItem, OutputMode, check_model_settings
from eudaimon.models.output import OUTPUT_MODES, model_output_modes
from eudaimon.models.registry import infer_model


class FallbackModel:
    """Tries `models` in order; each retryable failure passes the request to the next one.

    Args:
        models: The primary first, then its replacements; `"provider:name"` strings allowed.

    When every model fails, the last failure is raised (a `ModelRetryableError`, so the
    runtime may retry the whole chain), with the others attached as notes. A stream falls
    back only while nothing has been yielded: text already shown cannot be taken back.
    """

    def __init__(self, models: Sequence[Model | str]) -> None:
        if not models:
            raise ConfigurationError("FallbackModel needs at least one model")
        self._models: tuple[Model, ...] = tuple(infer_model(m) for m in models)

    @property
    def model_id(self) -> str:
        """The primary's id: the model the agent is configured with."""
        return self._models[0].model_id

    @property
    def models(self) -> tuple[Model, ...]:
        return self._models

    @property
    def output_modes(self) -> tuple[OutputMode, ...]:
        """The structured output every model of the chain has (a fallback gets the same request)."""
        shared = set.intersection(*(set(model_output_modes(m)) for m in self._models))
        return tuple(m for m in OUTPUT_MODES if m in shared) or ("prompted",)

    def check_settings(self, settings: ModelSettings) -> None:
        """Every model of the chain must honour the settings, since any of them may serve."""
        for model in self._models:
            check_model_settings(model, settings)

    async def generate(self, request: ChatRequest) -> ChatResponse:
        """The first answer of the chain; raises the last retryable failure when none answers."""
        failures: list[ModelRetryableError] = []
        for model in self._models:
            try:
                response = await model.generate(request)
            except ModelRetryableError as exc:
                failures.append(exc)
                continue
            return _served_by(response, model)
        raise _exhausted(failures)

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelStreamItem]:
        """The first stream that starts; a failure after its first delta is raised as it is."""
        failures: list[ModelRetryableError] = []
        for model in self._models:
            items = model.stream(request)
            yielded = False
            try:
                while True:
                    try:
                        item = await anext(items)
                    except StopAsyncIteration:
                        return
                    except ModelRetryableError as exc:
                        if yielded:
                            raise
                        failures.append(exc)
                        break
                    if isinstance(item, ChatResponse):
                        item = _served_by(item, model)
                    else:
                        yielded = True
                    yield item
            finally:
                await _close(items)
        raise _exhausted(failures)

    async def aclose(self) -> None:
        """Close every model that holds a client."""
        for model in self._models:
            await _close(model)

    def __repr__(self) -> str:
        return f"FallbackModel([{', '.join(repr(m) for m in self._models)}])"


def _served_by(response: ChatResponse, model: Model) -> ChatResponse:
    # A provider names the exact model that served; a test model may not name any.
    if response.model:
        return response
    return dataclasses.replace(response, model=model.model_id)


def _exhausted(failures: list[ModelRetryableError]) -> ModelRetryableError:
    last = failures[-1]
    for earlier in failures[:-1]:
        last.add_note(f"fallback also failed: {type(earlier).__name__}: {earlier}")
    return last


async def _close(obj: Any) -> None:
    aclose = getattr(obj, "aclose", None)
    if aclose is not None:
        await aclose()
