"""Input a prompt does not accept is a `TypeError` naming what it accepts, raised before
anything is journaled: the journal never holds a `run_started` it cannot read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from eudaimon import Agent, Message
from eudaimon.models import ScriptedModel
from eudaimon.stores import SqliteStore

NOT_TEXT: list[object] = [["hello", {"not": "a part"}], {"text": "hi"}, b"bytes", 42, None]


@pytest.mark.parametrize("bad", NOT_TEXT, ids=lambda v: type(v).__name__)
async def test_prompt_refuses_non_text_input_and_journals_nothing(bad: object, tmp_path: Path) -> None:
    """Bug: `prompt([...])` returned `completed`, then `state()` and `runs show` failed with
    CorruptEvent on `run_started`. Now prompt and prompt_stream raise TypeError naming what
    they accept (a string or content parts; `prompt_with_messages` for conversations), and the
    store holds no run."""
    store = SqliteStore(str(tmp_path / "runs.db"))
    agent = Agent(ScriptedModel(["never"]), store=store)
    with pytest.raises(TypeError, match=r"must be a string, or a list of TextPart.*prompt_with_messages"):
        await agent.prompt(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a string"):
        async for _ in agent.prompt_stream(bad):  # type: ignore[arg-type]
            pass
    assert await store.list_runs() == []
    await store.close()


def test_prompt_sync_refuses_non_text_input_before_running(tmp_path: Path) -> None:
    """Invariant: the sync wrapper checks the same way, before it starts an event loop."""
    agent = Agent(ScriptedModel(["never"]))
    with pytest.raises(TypeError, match="must be a string"):
        agent.prompt_sync(["a", 42])  # type: ignore[arg-type]


async def test_prompt_with_messages_refuses_items_that_are_not_messages() -> None:
    """Invariant: a conversation of strings is refused naming the bad item, nothing journaled."""
    agent = Agent(ScriptedModel(["never"]))
    with pytest.raises(TypeError, match="item 1 is a str"):
        await agent.prompt_with_messages([Message.user("ok"), "not a message"])  # type: ignore[list-item]
    assert await agent.store.list_runs() == []
