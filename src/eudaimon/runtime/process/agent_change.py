"""A run continued by an agent other than the one that started it: named, journaled, fail closed.

A run waiting days for an approval outlives the code that started it. Before a process acts
on a run, it compares the fingerprint the run recorded with its own agent's. When they differ:

- `on_change="refuse"`: `AgentChanged` naming the differences; nothing is recorded.
- `on_change="continue"`: `agent_replaced` is journaled (versions, what differs, the approvals
  it voids), then every call of the batch whose tool changed is settled so that no call runs
  on a decision made about another tool: a removed tool, or arguments the new schema refuses,
  go back to the model as an error result; a call awaiting or holding an approval is asked
  about again (`approval_requested`, whose reason says what changed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from eudaimon.core.errors import AgentChanged, ConcurrencyConflict
from eudaimon.core.events import AgentReplaced, ApprovalRequested, ToolCompleted
from eudaimon.core.fingerprint import Parts, differences, tool_changes
from eudaimon.core.state import CallStatus, RunState
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore
from eudaimon.tools import Tool, ToolArgumentsError

OnChange = Literal["continue", "refuse"]

_SETTLED_BY_CHANGE = (CallStatus.REQUESTED, CallStatus.AWAITING_APPROVAL, CallStatus.APPROVED, CallStatus.RETRY)
"""Calls a change reaches: not yet run. A started call's outcome is recovery's business."""


@dataclass(frozen=True, slots=True)
class AgentIdentity:
    """Who an agent says it is: its `version`, the `parts` of its fingerprint, and what it does
    with a run another agent started (`on_change`)."""

    version: str = ""
    parts: Parts = ()
    on_change: OnChange = "continue"


def changes_for(state: RunState, identity: AgentIdentity) -> tuple[str, ...]:
    """What differs between the agent that last drove `state` and `identity`; () when nothing
    does, or when either side has no fingerprint (a run journaled before fingerprints)."""
    if not state.fingerprint or not identity.parts or state.fingerprint == identity.parts:
        return ()
    return differences(state.fingerprint, identity.parts) or ("the agent's fingerprint differs",)


def refuse_changed(state: RunState, identity: AgentIdentity) -> tuple[str, ...]:
    """The changes, after raising `AgentChanged` if the agent refuses to continue across them."""
    changes = changes_for(state, identity)
    if changes and identity.on_change == "refuse":
        raise AgentChanged(state.run_id, changes, version=identity.version, run_version=state.version)
    return changes


def record_change(journal: RunJournal, identity: AgentIdentity, tools: Mapping[str, Tool]) -> bool:
    """Journal (uncommitted) that `identity` continues the run, and settle the calls its change
    reaches; False when nothing differs.

    Raises:
        AgentChanged: the agent differs and refuses to continue (nothing recorded).
    """
    state = journal.state
    changes = refuse_changed(state, identity)
    if not changes or state.status.is_terminal or not state.started:
        return False
    by_tool = tool_changes(state.fingerprint, identity.parts)
    versions = f"{state.version or '?'} -> {identity.version or '?'}"
    asks: list[ApprovalRequested] = []
    told: list[ToolCompleted] = []
    for progress in state.calls.values():
        call = progress.call
        change = by_tool.get(call.name)
        if change is None or progress.status not in _SETTLED_BY_CHANGE or call.id in state.children:
            continue
        tool = tools.get(call.name)
        if change.removed or tool is None:
            known = ", ".join(sorted(tools)) or "none"
            output = (
                f"the call did not run: tool {call.name!r} was removed when the agent changed ({versions}); "
                f"available tools: {known}"
            )
            told.append(ToolCompleted(call_id=call.id, tool=call.name, output=output, is_error=True))
            continue
        arguments = progress.asked if progress.asked is not None else call.arguments
        try:
            tool.parse_arguments(tool.decode_arguments(arguments), validate=True)
        except ToolArgumentsError as exc:
            output = (
                f"the call did not run: the agent changed ({versions}: {change.describe()}) and its arguments "
                f"no longer validate: {exc}. Make the call again with arguments the tool takes now."
            )
            told.append(ToolCompleted(call_id=call.id, tool=call.name, output=output, is_error=True))
            continue
        if progress.status in (CallStatus.AWAITING_APPROVAL, CallStatus.APPROVED):
            reason = f"the agent changed ({versions}: {change.describe()}); a human decides again"
            asks.append(ApprovalRequested(call_id=call.id, tool=call.name, arguments=arguments, reason=reason))
    journal.record(
        AgentReplaced(
            version=identity.version,
            previous_version=state.version,
            fingerprint=identity.parts,
            changes=changes,
            voided=tuple(a.call_id for a in asks),
        )
    )
    for ask in asks:
        journal.record(ask)
    for result in told:
        journal.record(result)
    return True


async def note_change(store: EventStore, run_id: str, identity: AgentIdentity, tools: Mapping[str, Tool]) -> None:
    """For a process that decides a run without driving it (approve, reconcile): refuse, or
    journal the change first, so the decision is made about the calls as this agent sees them.

    Raises:
        AgentChanged: the agent differs and refuses to continue (nothing recorded).
    """
    while identity.parts:
        state = await load_state(store, run_id)
        if not refuse_changed(state, identity) or state.engine:
            return
        journal = RunJournal(store, state, snapshot_every=0)
        if not record_change(journal, identity, tools):
            return
        try:
            await journal.flush()
        except ConcurrencyConflict:
            continue
        return
