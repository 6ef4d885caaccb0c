"""Models: the `Model` protocol, requests and responses, test models and providers."""

from typing import TYPE_CHECKING, Any

from eudaimon.core.settings import ModelSettings
from eudaimon.models.base import ChatRequest, ChatResponse, Model, ModelStreamItem, StopReason, ToolSpec
from eudaimon.models.function import FunctionModel
from eudaimon.models.output import NativeOutput, PromptedOutput, ToolOutput
from eudaimon.models.registry import infer_model
from eudaimon.models.scripted import ScriptedModel, ScriptExhausted

if TYPE_CHECKING:
    from eudaimon.models.anthropic import AnthropicModel
    from eudaimon.models.fallback import FallbackModel
    from eudaimon.models.openai import OpenAIModel

_LAZY = {
    "OpenAIModel": "eudaimon.models.openai",
    "AnthropicModel": "eudaimon.models.anthropic",
    "FallbackModel": "eudaimon.models.fallback",
}


def __getattr__(name: str) -> Any:
    # Providers import their SDKs; load them only when asked for.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'eudaimon.models' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AnthropicModel",
    "ChatRequest",
    "ChatResponse",
    "FallbackModel",
    "FunctionModel",
    "Model",
    "ModelSettings",
    "ModelStreamItem",
    "NativeOutput",
    "OpenAIModel",
    "PromptedOutput",
    "ScriptExhausted",
    "ScriptedModel",
    "StopReason",
    "ToolOutput",
    "ToolSpec",
    "infer_model",
]
