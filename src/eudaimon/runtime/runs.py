"""Starting, reopening and finishing runs around the one loop.

This is where a run meets the world outside its journal: memory is fed from committed
events (by message id, so a resumed run adds nothing twice), the final state becomes an
`AgentResponse` or the error that says how the run ended, and human decisions are appended
with the same compare-and-append fence as everything else.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

from eudaimon._output import OutputSchema
from eudaimon.core.errors import (
    BudgetExceeded,
    Cancelled,
    ConcurrencyConflict,
    GuardrailBlocked,
    MaxIterations,
    OutputRejected,
    RunError,
    RunFailedError,
    RunNotFound,
)
from eudaimon.core.events import EventData, RunStarted
from eudaimon.core.messages import Message, Role
from eudaimon.core.state import RunState, Status
from eudaimon.response import AgentResponse
from eudaimon.runtime.cancel import CancellationToken
from eudaimon.runtime.clock import new_message_id, new_run_id
from eudaimon.runtime.config import RuntimeConfig
from eudaimon.runtime.journal import RunJournal
from eudaimon.runtime.loop import drive
from eudaimon.stores.base import EventStore
from eudaimon.streaming import StreamEvent


async def load_state(store: EventStore, run_id: str, at_seq: int | None = None) -> RunState:
    """Fold a run's journal, up to and including `at_seq` when given."""
    if at_seq is not None and at_seq < 0:
        raise ValueError(f"at_seq must be 0 or more, got {at_seq}")
    events = await store.load(run_id)
    if at_seq is not None:
        events = events[: at_seq + 1]
    state = RunState.from_events(events)
    if state is None:
        raise RunNotFound(run_id)
    return state


class RunDriver:
    def __init__(
        self,
        config: RuntimeConfig,
        store: EventStore,
        memory: Any,
        output: OutputSchema | None,
        config_digest: str = "",
    ) -> None:
        self.config = config
        self.store = store
        self.memory = memory
        self.output = output
        self.config_digest = config_digest

    def start(
        self,
        messages: list[Message],
        *,
        input: str,
        thread_id: str | None,
        run_id: str | None,
        uses_memory: bool = True,
    ) -> RunJournal:
        """A new run's journal, its `run_started` recorded (committed with the first attempt)."""
        started = RunStarted(
            agent=self.config.agent,
            input=input,
            messages=tuple(m if m.id else replace(m, id=new_message_id()) for m in messages),
            thread_id=thread_id,
            config_digest=self.config_digest,
            model=self.config.model.model_id,
            uses_memory=uses_memory,
        )
        return RunJournal.start(self.store, run_id or new_run_id(), started)

    async def reopen(self, run_id: str) -> RunJournal:
        return RunJournal(self.store, await load_state(self.store, run_id))

    async def drive(
        self, journal: RunJournal, cancel: CancellationToken | None, *, stream_model: bool
    ) -> AsyncIterator[StreamEvent]:
        async for event in drive(journal, self.config, cancel=cancel, stream_model=stream_model):
            yield event
        await self.remember(journal.state)

    async def remember(self, state: RunState) -> None:
        """Feed memory this run's committed messages; memory ignores ids it already has."""
        if self.memory is None or not state.uses_memory:
            return
        for message in state.messages[state.input_index :]:
            if message.role is not Role.SYSTEM:
                await self.memory.add_message(message, state.thread_id)

    def respond(self, state: RunState) -> AgentResponse:
        """The response for a run that answered or is waiting; the error for one that ended badly."""
        if state.status in (Status.FAILED, Status.CANCELLED, Status.BUDGET_EXCEEDED):
            raise self.error_for(state)
        structured = self.output.restore(state.structured_output) if self.output is not None else None
        return AgentResponse.from_state(state, structured)

    def error_for(self, state: RunState) -> RunError:
        run_id, error = state.run_id, state.error or "the run failed"
        if state.status is Status.CANCELLED:
            return Cancelled(error, run_id=run_id)
        if state.status is Status.BUDGET_EXCEEDED:
            if error.startswith("token") and self.config.max_budget_tokens is not None:
                return BudgetExceeded(
                    state.usage.total_tokens, self.config.max_budget_tokens, unit="tokens", run_id=run_id
                )
            return BudgetExceeded(state.cost_usd, self.config.max_budget_usd or 0.0, run_id=run_id)
        if state.error_kind == "MaxIterations":
            return MaxIterations(self.config.decide.max_iterations, run_id=run_id)
        if state.error_kind == "GuardrailBlocked":
            return GuardrailBlocked(error, run_id=run_id)
        if state.error_kind == "OutputRejected":
            return OutputRejected(error, run_id=run_id)
        return RunFailedError(f"run {run_id} failed: {error}", run_id=run_id)

    async def append_decision(self, run_id: str, decide: Callable[[RunState], EventData]) -> RunState:
        """Append the event `decide` derives from the latest state; re-check after a race."""
        while True:
            state = await load_state(self.store, run_id)
            journal = RunJournal(self.store, state)
            journal.record(decide(state))
            try:
                await journal.flush()
            except ConcurrencyConflict:
                continue  # someone appended first: decide again on what they wrote
            return state
