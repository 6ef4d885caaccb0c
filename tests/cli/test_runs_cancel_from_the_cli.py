"""`eudaimon runs cancel RUN`: a run nobody drives is cancelled at once, with who and why.

(A run another process drives, waiting on its model, is in
`tests/providers/test_cancel_closes_the_model_call.py`: its request is closed.)
"""

from __future__ import annotations

import asyncio

from cli_support import Invoke

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.core.events import RunCancelled
from eudaimon.models import ScriptedModel
from eudaimon.stores import SqliteStore


@tool(effect="irreversible")
def pay(amount: int) -> str:
    """Pay."""
    return f"paid {amount}"


async def _waiting_run(path: str) -> None:
    store = SqliteStore(path)
    model = ScriptedModel([Message.assistant(tool_calls=[ToolCall("c1", "pay", {"amount": 5})])])
    agent = Agent(model, tools=[pay], store=store, memory=None)
    paused = await agent.prompt("pay", run_id="waits")
    assert paused.status == "awaiting_approval"
    await store.close()


async def _last(path: str) -> object:
    store = SqliteStore(path)
    try:
        return (await store.load("waits"))[-1].data
    finally:
        await store.close()


def test_runs_cancel_cancels_a_waiting_run_and_refuses_an_ended_one(cli: Invoke, db_path, store_url: str) -> None:
    """The journal names `--by` and `--reason`; a second cancel exits 1 saying the run ended."""
    asyncio.run(_waiting_run(str(db_path)))
    done = cli("runs", "cancel", "waits", "--store", store_url, "--reason", "wrong invoice", "--by", "grace")
    assert done.exit_code == 0, done.output
    assert "cancelled run waits (by grace)" in done.output
    assert asyncio.run(_last(str(db_path))) == RunCancelled(reason="wrong invoice", by="grace")
    again = cli("runs", "cancel", "waits", "--store", store_url)
    assert again.exit_code == 1
    assert "only a run that has not ended can be cancelled" in again.output
