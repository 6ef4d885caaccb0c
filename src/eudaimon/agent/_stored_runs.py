"""What any process may do with an agent's runs in its store without driving one: read a run's
state at any event, decide for its waiting calls, fork it, read a thread.

These are the journal's operations (`eudaimon.runtime.process.operations`) on the agent's store; a
decision is journaled here and acted on by whoever drives the run next (`Agent.resume`, the
server, a Temporal workflow).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eudaimon.core.errors import InvalidOperation
from eudaimon.core.messages import JsonObject
from eudaimon.core.state import RunState
from eudaimon.memory import ThreadState
from eudaimon.runtime.process import operations
from eudaimon.runtime.process.agent_change import AgentIdentity, note_change
from eudaimon.runtime.process.load_state import load_state
from eudaimon.runtime.process.threads import thread_state
from eudaimon.stores.base import EventStore
from eudaimon.tools import Tool

if TYPE_CHECKING:
    from eudaimon.runtime.loop.config import ApprovalPolicy


class StoredRuns:
    """The part of `Agent` that reads and decides runs already in `store`."""

    store: EventStore
    default_thread: str | None
    tools: dict[str, Tool]
    approval_policy: ApprovalPolicy | None

    def _identity(self) -> AgentIdentity:
        """Who this agent is (version, fingerprint, `on_change`): a decision by an agent other
        than the run's is refused, or journals the change first."""
        return AgentIdentity()

    async def thread(self, thread_id: str | None = None) -> ThreadState:
        """The thread's snapshot: turns, usage, consecutive guardrail rejections, cost.

        Raises:
            InvalidOperation: no `thread_id` for an agent without memory, which has no default thread.
        """
        thread = thread_id or self.default_thread
        if thread is None:
            raise InvalidOperation("this agent has no memory, so no default thread; name the thread: thread(thread_id)")
        return await thread_state(self.store, thread)

    async def state(self, run_id: str, at_seq: int | None = None) -> RunState:
        """The run's state after event `at_seq` (the latest when None). Raises `RunNotFound`."""
        return await load_state(self.store, run_id, at_seq)

    async def approve(
        self,
        run_id: str,
        call_id: str,
        approved: bool = True,
        *,
        by: str | None = None,
        note: str | None = None,
        arguments: JsonObject | None = None,
    ) -> RunState:
        """Record a human's decision on a call awaiting approval; `resume` then acts on it.

        `arguments` (with an approval) are the approver's edit: the call runs with them instead
        of those it was asked about. They are checked against the tool's schema first, then
        judged by the approval policy as a new call, and `approval_decided` journals them with
        the arguments they replace (`original_arguments`).

        Raises:
            InvalidOperation: the call is unknown, already decided, or not awaiting approval;
                or `approved` is not a bool (`"false"` is refused, not read as true).
            InvalidArguments: the edited arguments are not what the tool accepts, or the approval
                policy denies them (`EditDenied`); nothing is journaled, the call still waits.
        """
        await note_change(self.store, run_id, self._identity(), self.tools)
        tool = None
        if arguments is not None:
            state = await load_state(self.store, run_id)
            progress = state.calls.get(call_id)
            tool = self.tools.get(progress.call.name) if progress is not None else None
        return await operations.approve(
            self.store,
            run_id,
            call_id,
            approved,
            by=by,
            note=note,
            arguments=arguments,
            tool=tool,
            policy=self.approval_policy,
        )

    async def reconcile(
        self, run_id: str, call_id: str, *, output: str | None = None, retry: bool = False, by: str | None = None
    ) -> RunState:
        """Settle a call whose outcome is unknown: give the `output` it had, or `retry=True`.

        "No effect seen" is not proof while the process that started the call may still be
        alive (stopped, not dead): see `eudaimon.runtime.process.operations.reconcile`.

        Raises:
            InvalidOperation: the call has no unknown outcome, or the run has finished.
        """
        await note_change(self.store, run_id, self._identity(), self.tools)
        return await operations.reconcile(self.store, run_id, call_id, output=output, retry=retry, by=by)

    async def fork(self, run_id: str, at_seq: int) -> str:
        """A new run whose history is this run's up to `at_seq`; `resume` it to continue live."""
        return await operations.fork(self.store, run_id, at_seq)
