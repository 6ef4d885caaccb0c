"""Models: the `Model` protocol, requests and responses, test models and providers."""

from typing import TYPE_CHECKING

from eudaimon._lazy import lazy
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

if not TYPE_CHECKING:  # providers import their SDKs: load them only when asked for
    __getattr__, __dir__ = lazy(__name__, __file__)

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
