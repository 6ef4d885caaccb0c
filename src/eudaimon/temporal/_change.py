"""A fleet run continued by a worker whose agent differs from the run's: journaled, fail closed.

The local runtime does this in `RunDriver.drive` (`runtime/process/agent_change.py`); a workflow drives
`loop.drive` directly, so it calls the same pure `record_change` itself, at the top of each pass
of its loop (a new execution, a decision received): `agent_replaced` is journaled, approvals of
changed tools are voided (the call waits for a human again), removed tools or arguments the new
schema refuses are told to the model. It is appended through the journal's store (the
`eudaimon.append` activity) before the loop runs anything.

Determinism: a worker with another agent also *replays* the execution its predecessor wrote,
with its own tools: the loop would decide differently (a call the old schema took, the new one
refuses) and the replay would fail. So a run that waits for a human (days, across deploys) waits
on a fresh execution (`wait_on_a_fresh_execution`): it continues as new once it pauses, and the
execution that waits holds nothing but loading the run, which any agent replays alike; the
decision, and the change, come after it. And where no change was noted, none may be replayed:
the change is noted under a patch marker named after the journal's position
(`eudaimon.agent-change@<seq>`), which a replay finds exactly where an execution noted a change
and nowhere else, while new work (not replaying) always sets it. A run whose agent did not
change never calls `workflow.patched` for it, so its history is what it was.

What this does not cover: a worker with another agent taking over an execution in the middle
of a step (its predecessor died during a model or tool activity) replays that step with its own
tools; a changed tool there can still fail the replay (Temporal's worker versioning, which pins
an execution to the build that started it, is the way to deploy such a change).
"""

from __future__ import annotations

from collections.abc import Mapping

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from eudaimon.core.state import RunState
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.agent_change import AgentIdentity, changes_for, record_change
from eudaimon.tools import Tool

AGENT_CHANGE_PATCH = "eudaimon.agent-change"
FRESH_WAIT_PATCH = "eudaimon.humans-are-awaited-on-a-fresh-execution"
"""Histories recorded when a run waited for a human in the execution that paused it replay so."""


def wait_on_a_fresh_execution(state: RunState, loaded_seq: int, cancelled: bool, *, patched: bool = False) -> bool:
    """Whether the workflow, idle, continues as new before it waits for a human: when the run
    pauses for one (approval, reconciliation) and this execution recorded anything since it
    loaded the run (an execution that only loaded it is already fresh). `patched`: the run
    started with every patch (`RunInput.patched`)."""
    if cancelled or not state.status.is_paused or state.next_seq - 1 <= loaded_seq:
        return False
    return patched or workflow.patched(FRESH_WAIT_PATCH)


async def note_agent_change(journal: RunJournal, identity: AgentIdentity, tools: Mapping[str, Tool]) -> bool:
    """Journal and commit that this worker's agent (`identity`) continues the run, when it
    differs from the one the run recorded; False when nothing was noted.

    Raises:
        ApplicationError: the agent differs and refuses to continue (`on_change="refuse"`): the
            workflow fails (a failed workflow *task* would be retried forever and hold the
            decision's caller), the loop records nothing, and the run is then journaled as
            failed by whoever sees the workflow closed (`_gave_up`). Callers with a refusing
            agent are refused before anything is sent, client side.
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
