"""State is a pure fold: replaying any prefix of a journal gives the state reached live.

Random runs are generated through the real agent (random tool calls that succeed, fail, are
malformed, unknown or need approval; approvals granted or denied; final answers), so the
journals are the ones the runtime really writes.
"""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eudaimon import Agent, Message, RunState, ToolCall
from eudaimon.core.state import Status
from eudaimon.models import ScriptedModel
from eudaimon.stores import MemoryStore
from support.agents import scripted_agent
from support.tools import lookup

CALLS = st.sampled_from(
    [
        ("lookup", {"key": "a"}),
        ("lookup", '{"key": "b"}'),
        ("lookup", '{"key": '),  # invalid JSON
        ("lookup", {"nope": 1}),  # schema violation
        ("explode", {"reason": "boom"}),
        ("missing_tool", {}),
        ("transfer", {"amount": 5}),
    ]
)
TURN = st.one_of(st.lists(CALLS, min_size=1, max_size=3), st.text(max_size=20))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(TURN, max_size=5), st.lists(st.booleans(), min_size=8, max_size=8))
async def test_any_prefix_replays_to_the_live_state(
    turns: list[list[tuple[str, object]] | str], decisions: list[bool]
) -> None:
    """Invariant: RunState.from_events(events[: n + 1]) equals the live state after event n,
    and the final fold equals what the agent reported."""
    store = MemoryStore()
    agent = scripted_agent(turns, store)
    try:
        response = await agent.prompt("go")
    except Exception:
        response = None
    runs = await store.list_runs()
    run_id = runs[0].run_id
    for decision in decisions:
        state = await agent.state(run_id)
        if state.status is not Status.AWAITING_APPROVAL:
            break
        for call in state.awaiting_approval():
            await agent.approve(run_id, call.id, decision, by="tester")
        try:
            response = await agent.resume(run_id)
        except Exception:
            response = None
    events = await store.load(run_id)
    live = RunState(run_id=run_id)
    for n, event in enumerate(events):
        live.apply(event)
        assert RunState.from_events(events[: n + 1]) == live, f"prefix {n} ({event.type}) diverges"
        assert copy.deepcopy(live) == live
    assert live.next_seq == len(events)
    if response is not None:
        assert (response.status, response.iterations, response.usage) == (live.status, live.steps, live.usage)
        assert response.messages == live.messages


async def test_replay_is_deterministic_across_fresh_folds() -> None:
    """Invariant: folding the same events twice gives equal, independent states."""
    store = MemoryStore()
    model = ScriptedModel([Message.assistant(tool_calls=[ToolCall("c1", "lookup", {"key": "k"})]), "done"])
    response = await Agent(model, tools=[lookup], store=store).prompt("hi")
    events = await store.load(response.run_id)
    first, second = RunState.from_events(events), RunState.from_events(events)
    assert first == second and first is not second
    assert first is not None and first.messages is not second.messages  # type: ignore[union-attr]
    assert RunState.from_events([]) is None
