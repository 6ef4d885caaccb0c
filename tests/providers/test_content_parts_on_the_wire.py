"""Images and documents, in a prompt and in a tool's result, reach OpenAI and Anthropic in their
own wire formats through the real SDKs, and the CLI shows them as placeholders, never bytes."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

from typer.testing import CliRunner

from eudaimon import Agent, DocumentPart, ImagePart, TextPart, tool
from eudaimon.cli import app
from eudaimon.stores import SqliteStore

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PDF = b"%PDF-1.7\n" + b"0" * 600
PNG_B64 = base64.b64encode(PNG).decode()


@tool(effect="read")
def snapshot(city: str) -> list[object]:
    """A webcam image of a city."""
    return [f"webcam in {city}", ImagePart(data=PNG, media_type="image/png")]


def _show(db: Path, run_id: str) -> str:
    result = CliRunner().invoke(
        app, ["runs", "show", run_id, "--store", f"sqlite:///{db}"], env={"COLUMNS": "200", "NO_COLOR": "1"}
    )
    assert result.exit_code == 0, result.output
    return result.output


async def test_openai_image_round_trip_and_cli(openai_server, openai_model, tmp_path):
    """Invariant: a prompt's image and PDF travel as `image_url` and `file` data URLs; a tool's
    image follows its tool message as a user message naming the call; the journal reads back
    equal parts; `runs show` prints `[image image/png, …]` and no base64."""
    openai_server.reply(
        openai_server.completion(
            None,
            tool_calls=[openai_server.tool_call("call_1", "snapshot", '{"city": "Lisbon"}')],
            finish_reason="tool_calls",
        ),
        openai_server.completion("A sunny square."),
    )
    db = tmp_path / "runs.db"
    store = SqliteStore(db)
    agent = Agent(openai_model, tools=[snapshot], store=store)
    prompt = [
        TextPart(text="What is in these?"),
        ImagePart(data=PNG, media_type="image/png"),
        ImagePart(url="https://example.com/cat.jpg"),
        DocumentPart(data=PDF, media_type="application/pdf", name="report.pdf"),
    ]
    response = await agent.prompt(prompt)
    assert response.output == "A sunny square."

    first, second = (r.body for r in openai_server.requests)
    user = first["messages"][-1]
    assert user["content"] == [
        {"type": "text", "text": "What is in these?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
        {
            "type": "file",
            "file": {
                "file_data": f"data:application/pdf;base64,{base64.b64encode(PDF).decode()}",
                "filename": "report.pdf",
            },
        },
    ]
    tool_message, attached = second["messages"][-2:]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_1"
    assert "[image image/png, 1.0 KB]" in tool_message["content"]
    assert attached["role"] == "user"
    assert attached["content"][0] == {"type": "text", "text": "Returned by tool call call_1:"}
    assert attached["content"][1]["image_url"]["url"] == f"data:image/png;base64,{PNG_B64}"

    state = await agent.state(response.run_id)
    assert state.messages[0].parts == tuple(prompt)
    await store.close()
    shown = await asyncio.to_thread(_show, db, response.run_id)  # the CLI runs its own event loop
    assert "[image image/png, 1.0 KB]" in shown and "[document application/pdf, 609 B]" in shown
    assert PNG_B64[:40] not in shown


async def test_anthropic_image_round_trip(anthropic_server, anthropic_model):
    """Invariant: Anthropic gets `image` blocks with a base64 or URL source, a text document as
    a text source, and a tool's image inside its `tool_result` block."""
    anthropic_server.reply(
        anthropic_server.message(
            [{"type": "tool_use", "id": "tu_1", "name": "snapshot", "input": {"city": "Porto"}}], stop_reason="tool_use"
        ),
        anthropic_server.message([{"type": "text", "text": "A bridge."}]),
    )
    agent = Agent(anthropic_model, tools=[snapshot])
    await agent.prompt(
        [
            "Look:",
            ImagePart(data=PNG, media_type="image/png"),
            ImagePart(url="https://example.com/cat.jpg"),
            DocumentPart(data=b"plain notes", media_type="text/plain"),
        ]
    )
    first, second = (r.body for r in anthropic_server.requests)
    assert first["messages"][0]["content"] == [
        {"type": "text", "text": "Look:"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain notes"}},
    ]
    [result] = second["messages"][-1]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "tu_1"
    assert result["content"] == [
        {"type": "text", "text": "webcam in Porto"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
    ]
    assert json.dumps(second).count(PNG_B64) == 2  # the prompt's image and the tool's, once each
