"""Typed output on a real model: the tiny model that fails prompted JSON answers a schema
asked natively (`response_format` json_schema, which llama.cpp's server turns into a grammar).

Bug (issue 39): `output_type` only asked for JSON in the prompt, and SmolLM2-135M's answer
was rejected (`OutputRejected`); the provider's native structured output worked first time.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from eudaimon import Agent, NativeOutput
from eudaimon.models.registry import infer_model


class Answer(BaseModel):
    city: str
    sunny: bool


async def test_bare_output_type_is_native_on_the_real_model_and_validates(real_model):
    """A bare `output_type` on the openai-compatible server is asked with `response_format`
    json_schema; the answer validates into the type with no correction asked."""
    model = infer_model(real_model.model_string, base_url=real_model.base_url)
    agent = Agent(model, memory=None, output_type=Answer, max_tokens=64, temperature=0.0, max_output_retries=0)
    try:
        response = await agent.prompt("Is it sunny in Paris today? Answer about Paris.")
    finally:
        await model.aclose()
    assert response.status == "completed"
    assert isinstance(response.output, Answer)
    assert isinstance(response.output.city, str) and isinstance(response.output.sunny, bool)


async def test_native_output_forced_on_the_real_model(real_model):
    """`NativeOutput` of a top-level array (at most 3 items), constrained by the server's grammar."""
    model = infer_model(real_model.model_string, base_url=real_model.base_url)
    agent = Agent(
        model,
        memory=None,
        output_type=NativeOutput(Annotated[list[int], Field(max_length=3)]),
        max_tokens=64,
        temperature=0.0,
        max_output_retries=0,
    )
    try:
        response = await agent.prompt("List three small numbers.")
    finally:
        await model.aclose()
    assert response.status == "completed"
    assert isinstance(response.output, list) and all(isinstance(n, int) for n in response.output)
