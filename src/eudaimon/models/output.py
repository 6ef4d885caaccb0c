"""How a typed answer is asked of a model: natively, through a tool, or in the prompt.

Providers offer structured output in their own ways: OpenAI and the servers that speak its
API constrain the answer to a JSON Schema (`response_format`), Anthropic's models fill in a
tool whose input is the schema, and any model can be asked for JSON in the prompt. A bare
`output_type=T` picks the strongest way the model declares (`output_modes`); the wrappers
force one, as Pydantic AI's `NativeOutput` / `ToolOutput` / `PromptedOutput` do:

    Agent(model, output_type=ToolOutput(Invoice))

Whichever way it is asked, the answer reaches the run as JSON text and is validated against
the same schema; a tool-output answer is turned into that text here (`settle`), so the
journal, the fold and every reader see one shape of final answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from eudaimon.core.errors import ConfigurationError
from eudaimon.core.messages import Message
from eudaimon.models.base import DEFAULT_TOOL_NAME, ChatResponse, OutputMode, StopReason, StructuredOutput

T = TypeVar("T")

OUTPUT_MODES: tuple[OutputMode, ...] = ("native", "tool", "prompted")


@dataclass(frozen=True, slots=True)
class NativeOutput(Generic[T]):
    """Ask for `output_type` with the provider's own structured output (OpenAI's
    `response_format` json_schema). `strict=True` asks OpenAI for strict schema adherence
    (the schema must then follow its strict-mode rules)."""

    output_type: type[T] | Any
    name: str | None = None
    description: str | None = None
    strict: bool | None = None


@dataclass(frozen=True, slots=True)
class ToolOutput(Generic[T]):
    """Ask for `output_type` as the arguments of a tool (`name`) the model must call to answer."""

    output_type: type[T] | Any
    name: str = DEFAULT_TOOL_NAME
    description: str | None = None


@dataclass(frozen=True, slots=True)
class PromptedOutput(Generic[T]):
    """Ask for `output_type` in the system prompt: JSON of the schema, as plain text. Works
    with every model, and is the weakest: nothing but the model's obedience holds the shape."""

    output_type: type[T] | Any


OutputSpec = NativeOutput[Any] | ToolOutput[Any] | PromptedOutput[Any]


def unwrap(output_type: Any) -> tuple[Any, OutputMode | None, OutputSpec | None]:
    """The type inside a wrapper, the mode it forces (None for a bare type), and the wrapper."""
    if isinstance(output_type, NativeOutput):
        return output_type.output_type, "native", output_type
    if isinstance(output_type, ToolOutput):
        return output_type.output_type, "tool", output_type
    if isinstance(output_type, PromptedOutput):
        return output_type.output_type, "prompted", output_type
    return output_type, None, None


def model_output_modes(model: object) -> tuple[OutputMode, ...]:
    """The ways `model` can be asked for structured output, strongest first (its
    `output_modes` attribute; a model without one is asked in the prompt)."""
    declared = getattr(model, "output_modes", None)
    if declared is None:
        return ("prompted",)
    return tuple(m for m in OUTPUT_MODES if m in declared) or ("prompted",)


def choose(
    model: object, forced: OutputMode | None, spec: OutputSpec | None, schema: dict[str, Any]
) -> StructuredOutput:
    """The structured output a run of `model` asks for: the forced mode when the model has it,
    else the strongest it declares.

    Raises:
        ConfigurationError: a forced mode the model says it does not have.
    """
    modes = model_output_modes(model)
    if forced is not None and forced != "prompted" and hasattr(model, "output_modes") and forced not in modes:
        others = ", ".join(_WRAPPER[m] for m in modes)
        raise ConfigurationError(
            f"model {getattr(model, 'model_id', model)!r} has no {forced} structured output; use {others}"
        )
    mode = forced or modes[0]
    name = DEFAULT_TOOL_NAME
    description = None
    strict = None
    if isinstance(spec, ToolOutput):
        name, description = spec.name, spec.description
    elif isinstance(spec, NativeOutput):
        name = spec.name or _schema_name(schema)
        description, strict = spec.description, spec.strict
    elif mode == "native":
        name = _schema_name(schema)
    return StructuredOutput(mode, schema, name, description, strict)


_WRAPPER: dict[OutputMode, str] = {"native": "NativeOutput", "tool": "ToolOutput", "prompted": "PromptedOutput"}


def _schema_name(schema: dict[str, Any]) -> str:
    """A name OpenAI accepts for the schema (`^[a-zA-Z0-9_-]{1,64}$`): its title, or `output`."""
    title = str(schema.get("title") or "output")
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in title)[:64]
    return cleaned or "output"


def settle(response: ChatResponse, output: StructuredOutput | None) -> ChatResponse:
    """A tool-output answer as the final text it stands for: the output tool's arguments as
    JSON, without tool calls. Any other response is returned as it is."""
    if output is None or output.mode != "tool":
        return response
    calls = response.message.tool_calls
    found = next((c for c in calls if c.name == output.name), None)
    if found is None:
        return response
    args = found.arguments
    text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    message: Message = replace(response.message, content=text, tool_calls=())
    return replace(response, message=message, stop_reason=StopReason.END_TURN)
