"""The recovery sweep finds the runs that need a driver in the store's run index: it resumes the
abandoned `running` run among many waiting for approval without reading any run's journal to
choose, and leaves runs waiting for a human, ended runs and other agents' runs alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from eudaimon import Agent, Message, ToolCall
from eudaimon.core.events import (
    ApprovalRequested,
    Event,
    EventData,
    ModelAttemptStarted,
    ModelCalled,
    RunCompleted,
    RunStarted,
)
from eudaimon.models import ScriptedModel
from eudaimon.server.context import ServerContext
from eudaimon.server.driving import Runner
from eudaimon.server.hub import Hub
from eudaimon.server.recovery import runs_to_recover, sweep
from eudaimon.stores.sqlite import SqliteStore
from support.tools import lookup

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


class LoadCountingStore(SqliteStore):
    """A real SQLite store that counts the journals read (what a fold per run would cost)."""

    loads: int = 0

    async def load(self, run_id: str, after_seq: int = -1) -> list[Event]:
        self.loads += 1
        return await super().load(run_id, after_seq)


async def _write(store: SqliteStore, run_id: str, agent: str, payloads: Sequence[EventData], n: int) -> None:
    events = [Event.of(run_id, i, T0 + timedelta(seconds=n, milliseconds=i), p) for i, p in enumerate(payloads)]
    await store.append(run_id, 0, events)


async def test_the_sweep_resumes_the_abandoned_run_without_folding_the_waiting_ones(tmp_path: Path) -> None:
    """Invariant: with 40 runs awaiting approval, 5 completed, one abandoned mid-step and one
    abandoned run of an agent not served, the sweep resumes exactly the served abandoned run,
    reads no journal to find it, and the resumed run completes."""
    store = LoadCountingStore(tmp_path / "runs.db")
    call = ToolCall("c1", "transfer", {})
    for n in range(40):
        await _write(
            store,
            f"wait-{n:02}",
            "bot",
            [
                RunStarted(agent="bot", input="pay", messages=(Message.user("pay"),)),
                ModelCalled(step=0, request_id="r", message=Message.assistant("", tool_calls=[call])),
                ApprovalRequested(call_id="c1", tool="transfer"),
            ],
            n,
        )
    for n in range(5):
        done = [RunStarted(agent="bot", input="hi", messages=(Message.user("hi"),)), RunCompleted(output="ok")]
        await _write(store, f"done-{n}", "bot", done, 100 + n)
    abandoned = [
        RunStarted(agent="bot", input="hi", messages=(Message.user("hi"),)),
        ModelAttemptStarted(step=0, request_id="r0", request_digest=""),
    ]
    await _write(store, "abandoned", "bot", abandoned, 200)
    foreign = [RunStarted(agent="elsewhere", input="hi", messages=(Message.user("hi"),)), abandoned[1]]
    await _write(store, "foreign", "elsewhere", foreign, 201)
    agent = Agent(ScriptedModel(["resumed answer"]), tools=[lookup], name="bot", store=store, memory=None)
    hub = Hub(store)
    ctx = ServerContext(agents={"bot": agent}, store=store, auth=None, hub=hub, runner=Runner(hub))
    try:
        store.loads = 0
        assert [row.run_id for row in await runs_to_recover(ctx)] == ["abandoned"]
        assert await sweep(ctx) == ["abandoned"]
        assert store.loads == 0
        task = ctx.runner.task("abandoned")
        assert task is not None
        assert await task is None
        assert (await agent.state("abandoned")).output == "resumed answer"
        assert await sweep(ctx) == []  # ended now: nothing left to recover
    finally:
        await ctx.runner.aclose()
        await store.close()
