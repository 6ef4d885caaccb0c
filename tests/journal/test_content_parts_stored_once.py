"""An image or document is journaled once per distinct content, however many later runs carry
it in their history: by digest in SQLite and PostgreSQL, as one shared object in MemoryStore.
Deleting the runs frees it."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from test_stored_once import _count, _sql

from eudaimon import Agent, ImagePart, Message, TextPart, ToolCall, tool
from eudaimon.core.events import RunStarted, ToolCompleted
from eudaimon.memory import SqliteMemory
from eudaimon.models import ScriptedModel
from eudaimon.stores import EventStore, MemoryStore

PROMPT_IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3
TOOL_IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(reversed(range(256))) * 3
PACKED = pytest.mark.parametrize(
    "store",
    [pytest.param("sqlite", id="sqlite"), pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)],
    indirect=True,
)


@tool(effect="read")
def camera() -> ImagePart:
    """The camera's picture."""
    return ImagePart(data=TOOL_IMAGE, media_type="image/png")


async def _thread_of_three(store: EventStore) -> tuple[Agent, list[str]]:
    """Three turns of one thread; the first sends an image and gets one from a tool, and the
    next two carry both in the history memory resends."""
    memory = await SqliteMemory.in_memory()  # decodes fresh copies: nothing is shared by accident
    script = [Message.assistant(tool_calls=[ToolCall("c1", "camera", {})]), "a dog", "still a dog", "yes"]
    agent = Agent(ScriptedModel(script), tools=[camera], memory=memory, store=store)
    runs = [
        (
            await agent.prompt(
                [TextPart(text="what is this?"), ImagePart(data=PROMPT_IMAGE, media_type="image/png")], thread_id="t"
            )
        ).run_id
    ]
    for question in ("sure?", "really?"):
        runs.append((await agent.prompt(question, thread_id="t")).run_id)
    return agent, runs


def _occurrences(store: EventStore, data: bytes) -> int:
    head = base64.b64encode(data).decode()[:120]
    return sum(
        _count(store, f"SELECT COUNT(*) FROM {table} WHERE {column} LIKE '%{head}%'")
        for table, column in (("events", "payload"), ("messages", "body"), ("texts", "body"))
    )


@PACKED
async def test_parts_are_stored_once_and_freed_with_their_runs(store: EventStore) -> None:
    """Invariant: after three turns, each image's base64 is in the database once (a text row
    named by its digest), the runs read back with equal parts, and deleting the runs leaves no
    text behind (the references a message's parts make are counted)."""
    agent, runs = await _thread_of_three(store)
    assert _occurrences(store, PROMPT_IMAGE) == 1
    assert _occurrences(store, TOOL_IMAGE) == 1
    last = (await store.load(runs[-1]))[0].data
    assert isinstance(last, RunStarted)
    carried = [p for m in last.messages for p in m.parts if isinstance(p, ImagePart)]
    assert [p.data for p in carried] == [PROMPT_IMAGE, TOOL_IMAGE]
    for run_id in runs:
        await store.delete_run(run_id)
    assert _count(store, "SELECT COUNT(*) FROM texts") == 0
    assert _sql(store, "SELECT COUNT(*) FROM messages") == [(0,)]
    del agent


async def test_memory_store_keeps_one_copy_of_each_part() -> None:
    """Invariant: in MemoryStore, every run_started and tool_completed carrying equal data
    shares one bytes object, though memory handed each run its own decoded copy."""
    store = MemoryStore()
    _, runs = await _thread_of_three(store)
    blobs: list[Any] = []
    for run_id in runs:
        for event in await store.load(run_id):
            data = event.data
            parts = (
                [p for m in data.messages for p in m.parts]
                if isinstance(data, RunStarted)
                else list(data.parts)
                if isinstance(data, ToolCompleted)
                else []
            )
            blobs.extend(p.data for p in parts if isinstance(p, ImagePart))
    prompt_copies = [b for b in blobs if b == PROMPT_IMAGE]
    tool_copies = [b for b in blobs if b == TOOL_IMAGE]
    assert len(prompt_copies) == 3 and len(tool_copies) == 3  # run 1's own, then two histories
    assert all(b is prompt_copies[0] for b in prompt_copies)
    assert all(b is tool_copies[0] for b in tool_copies)
