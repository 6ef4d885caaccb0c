"""The loop's control-flow signals share one base, and `drive` lets one through untouched.

A signal (`runtime/loop/signals.py`) steers the loop, or the shell that drives it: a Temporal run
continues as new at a step's end by raising one from a hook. Were `drive` to take it for a
failure, the journal would say `run_failed` of a run that goes on elsewhere.
"""

from __future__ import annotations

import pytest

from eudaimon import Agent, Message, ToolCall
from eudaimon.core.errors import JournalError
from eudaimon.hooks import LoopState
from eudaimon.models import ChatResponse, ScriptedModel, StopReason
from eudaimon.runtime.loop.call_watch import CallCancelled
from eudaimon.runtime.loop.model_calls import ContextRejected
from eudaimon.runtime.loop.signals import LoopSignal
from eudaimon.runtime.loop.tool_calls import OutcomeLost
from support.tools import lookup


class _GoOnElsewhere(LoopSignal):
    """A shell's signal, as `temporal._workflow._ContinueAsNew` is."""


class _LeaveAtFirstStepEnd:
    def __init__(self) -> None:
        self.left = False

    async def on_iteration_end(self, state: LoopState) -> None:
        if not self.left:
            self.left = True
            raise _GoOnElsewhere("the run goes on in another execution")


def test_the_loops_signals_share_one_base_outside_the_error_tree() -> None:
    """Invariant: every control-flow signal is a `LoopSignal`, and none is a `JournalError` any more."""
    pytest.importorskip("temporalio")
    from eudaimon.temporal._workflow import _ContinueAsNew

    for signal in (ContextRejected, CallCancelled, OutcomeLost, _ContinueAsNew):
        assert issubclass(signal, LoopSignal) and not issubclass(signal, JournalError), signal


async def test_a_signal_raised_in_a_step_leaves_drive_as_raised_and_nothing_is_recorded_for_it() -> None:
    """Invariant: `drive` re-raises a loop signal untouched: no `run_failed`, nothing written after it
    (a READ step's events ride with the next commit, which never came), the run left resumable."""
    answer = ChatResponse(Message.assistant(tool_calls=[ToolCall("c1", "lookup", {"key": "k"})]), StopReason.TOOL_USE)
    agent = Agent(ScriptedModel([answer, "done"]), tools=[lookup], hooks=_LeaveAtFirstStepEnd())

    with pytest.raises(_GoOnElsewhere):
        await agent.prompt("go")

    [row] = await agent.store.list_runs(limit=1)
    types = [event.type for event in await agent.store.load(row.run_id)]
    assert types == ["run_started", "model_attempt_started"]
    assert (await agent.resume(row.run_id)).status == "completed"
