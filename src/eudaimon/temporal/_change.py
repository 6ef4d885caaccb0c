"""A fleet run continued by a worker whose agent differs from the run's: journaled, fail closed.

The local runtime does this in `RunDriver.drive` (`runtime/agent_change.py`); a workflow drives
`loop.drive` directly, so it calls the same pure `record_change` itself, at the top of each pass
of its loop (a new execution, a decision received): `agent_replaced` is journaled, approvals of
changed tools are voided (the call waits for a human again), removed tools or arguments the new
schema refuses are told to the model. It is appended through the journal's store (the
`eudaimon.append` activity) before the loop runs anything.

Determinism: a worker with another agent also *replays* histories its predecessor wrote, where
no change was noted. So the change is noted only under a patch marker named after the journal's
position (`eudaimon.agent-change@<seq>`): a replay finds the marker exactly where an execution
noted a change and nowhere else, while new work (not replaying) always sets it. A run whose
agent did not change never calls `workflow.patched`, so its history is what it was.
"""

from __future__ import annotations

from collections.abc import Mapping

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from eudaimon.runtime.agent_change import AgentIdentity, changes_for, record_change
from eudaimon.runtime.journal import RunJournal
from eudaimon.tools import Tool

AGENT_CHANGE_PATCH = "eudaimon.agent-change"


async def note_agent_change(journal: RunJournal, identity: AgentIdentity, tools: Mapping[str, Tool]) -> bool:
    """Journal and commit that this worker's agent (`identity`) continues the run, when it
    differs from the one the run recorded; False when nothing was noted.

    Raises:
        ApplicationError: the agent differs and refuses to continue (`on_change="refuse"`):
            the workflow fails, nothing is recorded (callers are refused before, client side).
    """
    state = journal.state
    if state.status.is_terminal or not state.started:
        return False
    changes = changes_for(state, identity)
    if not changes:
        return False
    if not workflow.patched(f"{AGENT_CHANGE_PATCH}@{state.next_seq}"):
        return False  # replaying a history whose execution noted nothing here
    if identity.on_change == "refuse":
        raise ApplicationError(
            f"run {state.run_id} was started by agent version {state.version or '?'}; this worker's agent "
            f"({identity.version or '?'}) refuses to continue it: {'; '.join(changes)}",
            type="AgentChanged",
            non_retryable=True,
        )
    if not record_change(journal, identity, tools):
        return False
    await journal.flush()
    return True
