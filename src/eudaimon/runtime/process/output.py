"""The finish schema (`output_type`) and the output validators that run after it.

A final answer must be JSON of the schema's shape; then each validator (`fn(output)` or
`fn(ctx, output)`, sync or async) may return the output to keep (possibly changed) or raise
`ModelRetry` to ask the model for another answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from eudaimon.core.errors import ConfigurationError
from eudaimon.tools.context import ToolContext, call_with_context

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """Validates final answers against `output_type` and restores typed values from the journal."""

    output_type: Any
    schema: dict[str, Any]

    @classmethod
    def of(cls, output_type: Any) -> OutputSchema:
        if isinstance(output_type, dict):
            import jsonschema  # only an output_type given as a bare JSON Schema needs it

            try:
                jsonschema.validators.validator_for(output_type).check_schema(output_type)
            except jsonschema.SchemaError as exc:
                raise ConfigurationError(f"output_type is not a valid JSON Schema: {exc.message}") from exc
            return cls(output_type, output_type)
        try:
            schema = TypeAdapter(output_type).json_schema()
        except Exception as exc:
            raise ConfigurationError(f"output_type {output_type!r} cannot be described as JSON Schema: {exc}") from exc
        return cls(output_type, schema)

    @property
    def instruction(self) -> str:
        return "Your final answer must be only a JSON value that matches this JSON Schema:\n" + json.dumps(self.schema)

    def validate(self, text: str) -> Any:
        """The JSON value of a valid answer; `ValueError` saying what is wrong otherwise."""
        fenced = _FENCE.match(text)
        try:
            value = json.loads(fenced.group(1) if fenced else text)
        except ValueError as exc:
            raise ValueError(f"the answer is not valid JSON ({exc})") from None
        if isinstance(self.output_type, dict):
            import jsonschema

            error = jsonschema.exceptions.best_match(
                jsonschema.validators.validator_for(self.schema)(self.schema).iter_errors(value)
            )
            if error is not None:
                where = ".".join(map(str, error.absolute_path)) or "(root)"
                raise ValueError(f"{where}: {error.message}")
            return value
        try:
            typed = TypeAdapter(self.output_type).validate_python(value)
        except ValidationError as exc:
            detail = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:5])
            raise ValueError(detail) from None
        return TypeAdapter(self.output_type).dump_python(typed, mode="json")

    def restore(self, value: Any) -> Any:
        """The typed value of a journaled structured output."""
        if value is None or isinstance(self.output_type, dict):
            return value
        return TypeAdapter(self.output_type).validate_python(value)

    def dump(self, value: Any) -> Any:
        """A typed value as the JSON value the journal keeps."""
        if isinstance(self.output_type, dict):
            return value
        return TypeAdapter(self.output_type).dump_python(value, mode="json")


OutputValidatorFn = Callable[..., Any]
"""`fn(output)` or `fn(ctx, output)`, sync or async: returns the output, or raises `ModelRetry`."""


@dataclass(frozen=True, slots=True)
class OutputCheck:
    """The schema, then the validators, as one `RuntimeConfig.output_validator`."""

    schema: OutputSchema | None
    validators: tuple[OutputValidatorFn, ...] = ()

    @classmethod
    def of(cls, schema: OutputSchema | None, validators: Sequence[OutputValidatorFn]) -> OutputCheck | None:
        for fn in validators:
            if not callable(fn):
                raise ConfigurationError(f"output_validators must be functions, got {type(fn).__name__}")
        if schema is None and not validators:
            return None
        return cls(schema, tuple(validators))

    async def __call__(self, text: str, ctx: ToolContext[Any]) -> tuple[str, Any]:
        """The text and structured value to complete with.

        Raises:
            ValueError: the answer does not match the schema.
            ModelRetry: a validator asked for a correction.
        """
        if self.schema is None:
            output: Any = text
            for fn in self.validators:
                output = await _validate(fn, ctx, output)
            if not isinstance(output, str):
                raise ConfigurationError(f"an output validator returned {type(output).__name__}; return the text")
            return output, None
        structured = self.schema.validate(text)
        if not self.validators:
            return text, structured
        value = self.schema.restore(structured)
        for fn in self.validators:
            value = await _validate(fn, ctx, value)
        return text, self.schema.dump(value)


async def _validate(fn: OutputValidatorFn, ctx: ToolContext[Any], value: Any) -> Any:
    result = await call_with_context(fn, ctx, value)
    # A validator that only checks (returns None) keeps the value as it was.
    return value if result is None else result
