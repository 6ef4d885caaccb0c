"""What `prompt` accepts: a string or a list of content parts; anything else is a TypeError
naming what is accepted, raised before anything is journaled."""

from __future__ import annotations

import pytest

from eudaimon import Agent, DocumentPart, ImagePart, Message, TextPart
from eudaimon.models import ChatRequest, FunctionModel, ScriptedModel


@pytest.mark.parametrize("bad", [42, b"bytes", {"text": "hi"}, ["ok", {"type": "image"}], None])
async def test_other_input_types_are_refused_before_the_journal(bad: object) -> None:
    """Invariant: a wrong input type raises TypeError saying what prompt takes; no run exists."""
    agent = Agent(ScriptedModel(["never"]))
    with pytest.raises(TypeError, match="a string, or a list of TextPart, ImagePart and DocumentPart"):
        await agent.prompt(bad)  # type: ignore[arg-type]
    assert await agent.store.list_runs() == []


async def test_parts_reach_the_model_and_text_reaches_run_started() -> None:
    """Invariant: a list of parts (strings being text) becomes one user message with those parts;
    `run_started.input` is its text, so guardrails and the CLI read it as text."""
    seen: list[ChatRequest] = []

    def answer(request: ChatRequest) -> str:
        seen.append(request)
        return "seen"

    agent = Agent(FunctionModel(answer))
    image = ImagePart(data=b"\x89PNG", media_type="image/png")
    response = await agent.prompt(["look at", image, TextPart(text="this")])
    user = seen[0].messages[-1]
    assert user.parts == (TextPart(text="look at"), image, TextPart(text="this"))
    assert user.content == "look at\nthis"
    assert (await agent.store.load(response.run_id))[0].data.input == "look at\nthis"  # type: ignore[union-attr]
    text_only = await agent.prompt([TextPart(text="just"), "text"])
    [question, _] = text_only.new_messages()
    assert question.parts == () and question.content == "just\ntext"


def test_parts_check_their_own_shape() -> None:
    """Bug guard: an image needs exactly one of url and data (and an image media type with
    data); a document needs a media type; Message.user refuses foreign parts."""
    with pytest.raises(ValueError, match="exactly one of url"):
        ImagePart()
    with pytest.raises(ValueError, match="media_type='image/"):
        ImagePart(data=b"x", media_type="application/pdf")
    with pytest.raises(ValueError, match="media_type"):
        DocumentPart(data=b"x", media_type="")
    with pytest.raises(TypeError, match="TextPart, ImagePart or DocumentPart"):
        Message.user([TextPart(text="a"), 3])  # type: ignore[list-item]


async def test_prompt_stream_takes_the_same_input_and_options() -> None:
    """Invariant: `prompt_stream` checks and journals the same input as `prompt`, with deps and
    settings (one loop, one `_begin`)."""
    from eudaimon import ModelSettings, ToolContext
    from eudaimon.streaming import Done

    seen: list[ChatRequest] = []

    def answer(request: ChatRequest) -> str:
        seen.append(request)
        return "streamed"

    def instructions(ctx: ToolContext[str]) -> str:
        return f"for {ctx.deps}"

    agent = Agent(FunctionModel(answer), system_prompt=instructions)
    image = ImagePart(url="https://example.com/a.png")
    events = [e async for e in agent.prompt_stream(["see", image], deps="ada", model_settings=ModelSettings(seed=1))]
    assert isinstance(events[-1], Done) and events[-1].status == "completed"
    assert seen[0].messages[0].content == "for ada"
    assert seen[0].messages[-1].parts == (TextPart(text="see"), image)
    assert seen[0].settings.seed == 1
    with pytest.raises(TypeError):
        async for _ in agent.prompt_stream(3.5):  # type: ignore[arg-type]
            pass
