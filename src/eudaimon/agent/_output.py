"""The finish schema: a final answer that must be JSON of a given shape (`output_type`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import jsonschema
from pydantic import TypeAdapter, ValidationError

from eudaimon.core.errors import ConfigurationError

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """Validates final answers against `output_type` and restores typed values from the journal."""

    output_type: Any
    schema: dict[str, Any]

    @classmethod
    def of(cls, output_type: Any) -> OutputSchema:
        if isinstance(output_type, dict):
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
