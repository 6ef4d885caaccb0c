"""`@tool` compiles a function's signature and docstring into what the model sees."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from eudaimon import Effect, ToolContext, tool
from eudaimon.errors import ConfigurationError


class Address(BaseModel):
    street: str
    city: str = Field(description="City name")


def test_schema_comes_from_hints_and_docstring() -> None:
    """Invariant: types, defaults, required names and Args descriptions reach the schema."""

    @tool
    def book(city: str, nights: int = 1, kind: Literal["hotel", "hostel"] = "hotel") -> str:
        """Book a room.

        Longer explanation that is still the description.

        Args:
            city: Where to stay.
            nights: How many nights,
                at least one.
        """
        return city

    assert book.name == "book"
    assert book.description.startswith("Book a room.") and "Longer explanation" in book.description
    props = book.parameters["properties"]
    assert props["city"] == {"type": "string", "description": "Where to stay."}
    assert props["nights"]["type"] == "integer" and props["nights"]["default"] == 1
    assert props["nights"]["description"] == "How many nights, at least one."
    assert props["kind"]["enum"] == ["hotel", "hostel"]
    assert book.parameters["required"] == ["city"]
    assert book.parameters["additionalProperties"] is False


def test_pydantic_parameters_and_context_are_handled() -> None:
    """Invariant: pydantic models become nested schemas; ToolContext stays out of the schema."""

    @tool(name="ship", description="Ship a parcel.", effect="irreversible")
    async def send(to: Address, ctx: ToolContext) -> str:
        return to.city

    assert send.name == "ship" and send.description == "Ship a parcel."
    assert send.effect is Effect.IRREVERSIBLE and send.needs_approval and send.is_async
    assert "ctx" not in send.parameters["properties"] and send.context_param == "ctx"
    assert "$defs" in send.parameters and "Address" in send.parameters["$defs"]


def test_effect_defaults_and_names() -> None:
    """Invariant: WRITE is the default effect; lower-case effect names are accepted."""

    @tool
    def plain() -> None:
        """x"""

    assert plain.effect is Effect.WRITE and not plain.idempotent and not plain.needs_approval
    assert Effect("read") is Effect.READ and Effect("IRREVERSIBLE") is Effect.IRREVERSIBLE
    assert tool(effect="write", idempotent=True)(plain.function).traits.rerunnable
    assert not plain.traits.rerunnable
    with pytest.raises(ConfigurationError, match="unknown effect"):
        tool(effect="dangerous")(plain.function)


def test_star_args_are_refused() -> None:
    """Invariant: a signature a model cannot fill is a build error."""

    def bad(*values: int) -> int:
        return sum(values)

    with pytest.raises(ConfigurationError, match=r"\*args"):
        tool(bad)


def test_a_tool_is_still_callable() -> None:
    """Invariant: decorating keeps the function usable directly."""

    @tool
    def double(x: int) -> int:
        """Double."""
        return 2 * x

    assert double(4) == 8
