"""`eudaimon runs show` and `runs events` say where an answer was cut by the token limit (or
refused, or filtered): a truncated answer must not look like a finished one.

Before: a run whose answer `max_tokens` cut read `completed` with nothing to tell it apart.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from cli_support import Invoke

from eudaimon import Agent, Message
from eudaimon.models import ChatResponse, ScriptedModel, StopReason
from eudaimon.stores import SqliteStore


def _journal(db: Path, stop: StopReason) -> str:
    async def play() -> str:
        store = SqliteStore(str(db))
        model = ScriptedModel([ChatResponse(Message.assistant("Once upon a"), stop)])
        response = await Agent(model, store=store, name="teller").prompt("a long story")
        await store.close()
        return response.run_id

    return asyncio.run(play())


@pytest.mark.parametrize(
    ("stop", "said"),
    [
        (StopReason.MAX_TOKENS, "stopped: max_tokens (cut by the token limit)"),
        (StopReason.REFUSAL, "stopped: refusal"),
        (StopReason.CONTENT_FILTER, "stopped: content_filter"),
    ],
)
def test_runs_show_and_events_say_where_the_answer_stopped(
    cli: Invoke, store_url: str, db_path: Path, stop: StopReason, said: str
) -> None:
    """Invariant: both views name the step and its stop reason."""
    run_id = _journal(db_path, stop)

    shown = cli("runs", "show", run_id, "--store", store_url)
    assert shown.exit_code == 0, shown.output
    assert f"step 1: {said}" in " ".join(shown.output.split())

    events = cli("runs", "events", run_id, "--store", store_url)
    assert events.exit_code == 0, events.output
    row = next(line for line in events.output.splitlines() if "model_called" in line)
    assert said.split(" (")[0] in row


def test_a_finished_answer_says_nothing_about_stopping(cli: Invoke, store_url: str, db_path: Path) -> None:
    """Invariant: an answer that ended its turn is shown without a stop note."""
    run_id = _journal(db_path, StopReason.END_TURN)
    shown = cli("runs", "show", run_id, "--store", store_url)
    assert shown.exit_code == 0 and "stopped:" not in shown.output
