"""ThreadState: derived from the thread's runs, readable from older snapshots."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from eudaimon.core.events import Event, EventData, GuardrailRejected, ModelCalled, RunCompleted, RunFailed, RunStarted
from eudaimon.core.messages import Message, Usage
from eudaimon.core.state import RunState
from eudaimon.memory import ThreadState

AT = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def run(run_id: str, *payloads: EventData) -> RunState:
    """The folded state of a run made of these events."""
    state = RunState.from_events(Event(run_id, seq, AT, p.type, p) for seq, p in enumerate(payloads))
    assert state is not None
    return state


def started(carried: int = 0) -> RunStarted:
    return RunStarted(
        agent="a", input="hi", messages=(Message.user("hi", id="u"),), thread_id="t", guardrail_retries=carried
    )


def answered(step: int, cost: float | None, tokens: int = 10) -> ModelCalled:
    return ModelCalled(
        step=step, request_id=f"r{step}", message=Message.assistant("ok"), usage=Usage(tokens, tokens), cost_usd=cost
    )


def rejected(step: int, cost: float | None = None) -> GuardrailRejected:
    return GuardrailRejected(step=step, guardrail="g", feedback="again", usage=Usage(1, 1), cost_usd=cost)


def test_an_old_snapshot_loads_with_defaults() -> None:
    """Wire compatibility: a snapshot written before guardrail_retries, accumulated_cost_usd and
    metadata existed loads with 0, None and {}."""
    old = {
        "thread_id": "t",
        "turn_count": 3,
        "total_usage": {"input_tokens": 10, "output_tokens": 5},
        "created_at": "2026-03-04T12:00:00+00:00",
    }
    state = ThreadState.from_dict(old)
    assert state == ThreadState(thread_id="t", turn_count=3, total_usage=Usage(10, 5), created_at=AT)
    assert (state.guardrail_retries, state.accumulated_cost_usd, state.metadata) == (0, None, {})


def test_snapshots_round_trip() -> None:
    """Wire form: from_dict(to_dict(s)) == s, with every field set."""
    state = ThreadState(
        thread_id="t",
        turn_count=2,
        total_usage=Usage(1, 2, 3),
        metadata={"user": "ada", "tags": ["x"]},
        created_at=AT,
        guardrail_retries=1,
        accumulated_cost_usd=0.25,
    )
    assert ThreadState.from_dict(state.to_dict()) == state


def test_a_snapshot_missing_a_required_field_is_refused() -> None:
    """Honest errors: a snapshot without created_at is refused, naming the field."""
    with pytest.raises(ValueError, match="created_at"):
        ThreadState.from_dict({"thread_id": "t"})


def test_cost_is_unknown_until_the_first_priced_run() -> None:
    """Cost semantics: None until a run has a priced call; then the sum, which an unpriced run
    leaves as it is (never back to None)."""
    state = ThreadState(thread_id="t", created_at=AT)
    state = state.record_run(run("r1", started(), answered(1, None), RunCompleted(output="ok")))
    assert state.accumulated_cost_usd is None
    assert state.turn_count == 1 and state.total_usage == Usage(10, 10)
    state = state.record_run(run("r2", started(), answered(1, 0.5), RunCompleted(output="ok")))
    assert state.accumulated_cost_usd == pytest.approx(0.5)
    state = state.record_run(run("r3", started(), answered(1, None), RunCompleted(output="ok")))
    assert state.accumulated_cost_usd == pytest.approx(0.5)
    state = state.record_run(run("r4", started(), answered(1, 0.0), RunCompleted(output="ok")))
    assert state.accumulated_cost_usd == pytest.approx(0.5)
    assert state.turn_count == 4 and state.total_usage == Usage(40, 40)


def test_guardrail_rejections_carry_until_an_answer_is_accepted() -> None:
    """Consecutive rejections: a run that ends without an accepted answer adds its rejections to
    the thread's streak; an accepted answer resets it."""
    state = ThreadState(thread_id="t", created_at=AT)
    state = state.record(usage=Usage(1, 1), guardrail_rejections=2, answer_accepted=False)
    assert state.guardrail_retries == 2
    state = state.record(guardrail_rejections=1, answer_accepted=False)
    assert state.guardrail_retries == 3
    state = state.record(guardrail_rejections=1, answer_accepted=True)
    assert state.guardrail_retries == 1
    state = state.record()
    assert state.guardrail_retries == 0


def test_record_run_reads_the_streak_from_the_fold() -> None:
    """Derived, not kept: the streak after a run is the folded run's count, which starts from
    the thread's streak (run_started.guardrail_retries) and resets on an accepted answer."""
    failed = run("r1", started(), rejected(1, 0.1), rejected(2), RunFailed(error="a hook raised"))
    state = ThreadState(thread_id="t", created_at=AT).record_run(failed)
    assert state.guardrail_retries == 2
    assert state.accumulated_cost_usd == pytest.approx(0.1)
    failed_again = run("r2", started(carried=state.guardrail_retries), rejected(1), RunFailed(error="again"))
    state = state.record_run(failed_again)
    assert state.guardrail_retries == 3
    accepted = run(
        "r3", started(carried=state.guardrail_retries), rejected(1), answered(2, None), RunCompleted(output="ok")
    )
    state = state.record_run(accepted)
    assert state.guardrail_retries == 0
    assert state.turn_count == 3
    rebuilt = ThreadState.from_runs("t", [failed, failed_again, accepted], created_at=AT)
    assert rebuilt == state


def test_a_run_that_failed_on_the_rejection_cap_leaves_the_thread_a_fresh_count() -> None:
    """Bug: after 8 consecutive rejected answers every later prompt on the thread failed before
    its model call, for ever. The run that reaches the cap fails; the thread's count restarts
    from 0, so the next prompt gets a model call (agent-state.txt: a reset, not a lock)."""
    capped = run(
        "r1",
        started(carried=6),
        rejected(1),
        rejected(2),
        RunFailed(error="output guardrails rejected 8 answers in a row", kind="OutputRejected", limit=8),
    )
    assert capped.guardrail_rejections == 8
    assert ThreadState(thread_id="t", created_at=AT).record_run(capped).guardrail_retries == 0


def test_only_finished_runs_are_recorded() -> None:
    """No double counting: a run that has not finished is refused, since it would be counted
    again when it does."""
    with pytest.raises(ValueError, match="finished"):
        ThreadState(thread_id="t", created_at=AT).record_run(run("r", started(), answered(1, None)))
