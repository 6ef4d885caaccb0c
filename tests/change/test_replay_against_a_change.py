"""`agent.replay`: last week's runs, run again by a changed agent, without a single effect."""

from __future__ import annotations

from pathlib import Path

from _replay_agents import Counter, support

from eudaimon.core.events import RunStarted
from eudaimon.core.state import RunState
from eudaimon.runtime.process.replay import Replay
from eudaimon.stores.sqlite import SqliteStore


async def test_a_replay_by_the_same_agent_does_not_diverge_and_executes_nothing(tmp_path: Path) -> None:
    """Invariant: the same agent makes the same calls, each served its recorded result: no
    divergence, zero tool executions, the same answer; the replay is a run with `replay_of`."""
    store, counter = SqliteStore(tmp_path / "runs.db"), Counter()
    try:
        agent = support(store, counter)
        original = await agent.prompt("refund order 42")
        ran = dict(counter.executions)

        replay = await agent.replay(original.run_id)

        assert counter.executions == ran  # nothing executed again
        assert replay.status == "completed" and replay.diverged_at is None
        assert replay.of == original.run_id and replay.output == original.output
        assert replay.served == 2 and replay.live_reads == 0
        assert [s.same for s in replay.steps] == [True, True, True]
        started = (await store.load(replay.run_id))[0].data
        assert isinstance(started, RunStarted) and started.replay_of == original.run_id
    finally:
        await store.close()


async def test_a_new_prompt_that_changes_a_write_diverges_and_the_ledger_is_unchanged(tmp_path: Path) -> None:
    """Invariant: v2's prompt makes the model refund 10 where v1 refunded 5: the replay serves the
    recorded lookup, stops at the WRITE the original never made (`diverged` at step 2, the call
    it would have made named), and the ledger holds only the original's refund."""
    store, counter = SqliteStore(tmp_path / "runs.db"), Counter()
    try:
        v1 = support(store, counter)
        original = await v1.prompt("refund order 42")
        assert counter.ledger == [5]
        v2 = support(store, counter, prompt="Be generous.", version="v2")

        replay = await v2.replay(original.run_id)

        assert counter.ledger == [5] and counter.executions == {"lookup": 1, "refund": 1}
        assert replay.status == "diverged" and replay.diverged_at == 2
        assert [(c.name, c.arguments) for c in replay.would_call] == [("refund", {"order": 42, "amount": 10})]
        step = replay.steps[1]
        assert step.original is not None and step.original.calls == (("refund", {"order": 42, "amount": 5}),)
        assert step.replay is not None and step.replay.calls == (("refund", {"order": 42, "amount": 10}),)
        assert replay.version == "v2" and replay.original_version == "v1"
        assert (await v2.state(replay.run_id)).status == "cancelled"  # stopped, never waiting on anyone
    finally:
        await store.close()


async def test_a_read_the_original_did_not_make_runs_live_only_with_live_reads(tmp_path: Path) -> None:
    """Invariant: v2 audits (looks up another order first): that READ was never recorded, so
    without `live_reads` the replay stops there and nothing runs; with it, the READ runs live,
    the recorded refund is served, and the WRITE never runs again."""
    store, counter = SqliteStore(tmp_path / "runs.db"), Counter()
    try:
        original = await support(store, counter).prompt("refund order 42")
        v2 = support(store, counter, prompt="Be fair. audit first.", version="v2")

        stopped = await v2.replay(original.run_id)
        assert stopped.status == "diverged" and stopped.diverged_at == 1
        assert [c.name for c in stopped.would_call] == ["lookup"]
        assert counter.executions == {"lookup": 1, "refund": 1}

        def same_answer(orig: RunState, replay: Replay) -> bool:
            return replay.output == orig.output

        live = await v2.replay(original.run_id, live_reads=True, evaluators=[same_answer])
        assert live.status == "completed" and live.diverged_at == 1
        assert live.live_reads == 1 and live.served == 1
        assert counter.executions == {"lookup": 2, "refund": 1} and counter.ledger == [5]
        assert live.scores == {"same_answer": True}
    finally:
        await store.close()
