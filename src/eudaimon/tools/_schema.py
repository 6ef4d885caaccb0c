"""A function's signature and docstring, compiled once into a JSON Schema and a validator.

The `ToolContext` (or `ToolContext[T]`) parameter, found by its annotation, is kept out of the schema: the model
never sees it and cannot fill it.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, TypeAdapter, create_model

from eudaimon.core.errors import ConfigurationError
from eudaimon.tools.context import is_context_annotation


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    description: str
    parameters: dict[str, Any]
    args_model: type[BaseModel]
    context_param: str | None
    is_async: bool


_ARG_LINE = re.compile(r"^\s{2,}(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?)\s*:\s*$")


def _split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary and the Google-style `Args:` descriptions of a docstring."""
    lines = inspect.cleandoc(doc).splitlines() if doc else []
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        heading = _SECTION.match(line)
        if heading:
            section, current = heading.group(1), None
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters"):
            arg = _ARG_LINE.match("  " + line if not line.startswith("  ") else line)
            if arg and not line.startswith("      "):
                current = arg.group(1).lstrip("*")
                params[current] = arg.group(2).strip()
            elif current and line.strip():
                params[current] = f"{params[current]} {line.strip()}".strip()
    return "\n".join(summary).strip(), params


def function_schema(fn: Callable[..., Any]) -> FunctionSchema:
    """Compile `fn`'s parameters into a pydantic model and its JSON Schema."""
    signature = inspect.signature(fn)
    try:
        hints = get_type_hints(fn, include_extras=True)
    except (NameError, TypeError) as exc:
        raise ConfigurationError(f"cannot read the type hints of tool {fn.__name__!r}: {exc}") from exc
    summary, param_docs = _split_docstring(fn.__doc__ or "")
    fields: dict[str, Any] = {}
    context_param: str | None = None
    for name, param in signature.parameters.items():
        annotation = hints.get(name, Any)
        if is_context_annotation(annotation):
            context_param = name
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise ConfigurationError(f"tool {fn.__name__!r}: *args and **kwargs cannot be described to a model")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (annotation, Field(default, description=param_docs.get(name)))
    try:
        model = create_model(f"{fn.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields)
        schema = model.model_json_schema()
    except PydanticUserError as exc:
        raise _undescribable(fn.__name__, fields, exc) from exc
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema.setdefault("properties", {})
    return FunctionSchema(
        description=summary,
        parameters=schema,
        args_model=model,
        context_param=context_param,
        is_async=inspect.iscoroutinefunction(fn),
    )


def _undescribable(tool: str, fields: dict[str, Any], error: PydanticUserError) -> ConfigurationError:
    """The parameter whose type pydantic cannot turn into JSON Schema, named with the fix."""
    for name, (annotation, _) in fields.items():
        try:
            TypeAdapter(annotation).json_schema()
        except PydanticUserError as exc:
            reason = str(exc).splitlines()[0].split(". ")[0]  # not pydantic's advice, which is for models
            shown = repr(annotation)
            if isinstance(annotation, type):
                module = annotation.__module__
                shown = annotation.__qualname__ if module == "builtins" else f"{module}.{annotation.__qualname__}"
            return ConfigurationError(
                f"tool {tool!r}: parameter {name!r} has type {shown}, which cannot be described to a model as "
                f"JSON Schema ({reason}); use str, int, float, bool, a list or dict of them, a pydantic model, "
                "a dataclass or a TypedDict, and build the object inside the tool"
            )
    return ConfigurationError(f"tool {tool!r}: its parameters cannot be described as JSON Schema: {error}")
