"""Starting, reopening and finishing runs around the one loop.

This is where a run meets the world outside its journal: memory is fed from committed
events (by message id, so a resumed run adds nothing twice), the final state becomes an
`AgentResponse` or the error that says how the run ended, and human decisions are appended
with the same compare-and-append fence as everything else.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from eudaimon.core.errors import (
    BudgetExceeded,
    Cancelled,
    ContextExhausted,
    GuardrailBlocked,
    InvalidOperation,
    MaxIterations,
    OutputRejected,
    RunError,
    RunFailedError,
)
from eudaimon.core.events import CallRef, FailureKind, RunStarted, ToolRecord
from eudaimon.core.messages import Message, Role
from eudaimon.core.settings import NO_SETTINGS, ModelSettings
from eudaimon.core.state import RunState, Status
from eudaimon.memory.base import feed
from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.runtime.loop.clock import new_message_id, new_run_id
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.journal import SNAPSHOT_EVERY, RunJournal, observers
from eudaimon.runtime.loop.loop import drive
from eudaimon.runtime.process import takeover
from eudaimon.runtime.process.admission import max_active_runs, run_slot
from eudaimon.runtime.process.agent_change import AgentIdentity, record_change, refuse_changed
from eudaimon.runtime.process.drivers import run_lease_name
from eudaimon.runtime.process.engines import Engine
from eudaimon.runtime.process.leases import NO_LEASES, HeldLeases, LeaseKeeper, lease_ttl_s
from eudaimon.runtime.process.load_state import load_state
from eudaimon.runtime.process.output import OutputSchema
from eudaimon.runtime.process.response import AgentResponse
from eudaimon.runtime.process.threads import snapshot_key
from eudaimon.stores.base import EventStore
from eudaimon.stores.memory import MemoryStore
from eudaimon.streaming import Done, StreamEvent


class RunDriver:
    def __init__(
        self,
        config: RuntimeConfig,
        store: EventStore,
        memory: Any,
        output: OutputSchema | None,
        config_digest: str = "",
        snapshot_every: int = SNAPSHOT_EVERY,
    ) -> None:
        self.config = config
        self.store = store
        self.memory = memory
        self.output = output
        self.config_digest = config_digest
        # In memory the events are already at hand: a snapshot would only cost time.
        self.snapshot_every = 0 if isinstance(store, MemoryStore) else snapshot_every
        self.lease_ttl_s = lease_ttl_s()
        """`EUDAIMON_LEASE_TTL_S` as it was when the agent was built, for its run and thread leases."""
        self.max_active_runs = max_active_runs()
        """`EUDAIMON_MAX_ACTIVE_RUNS` as it was when the agent was built: runs beyond it wait."""
        self.engine: Engine | None = None
        """What drives runs when it is not this process (a Temporal fleet); recorded in each run."""
        self.identity = AgentIdentity()
        """The agent's version and fingerprint, recorded in each run it starts and compared with
        a run's own before this driver continues it (`agent_change`)."""
        self.replay_of: str | None = None
        """Set on a replay's driver: the run each run it starts replays."""

    def start(
        self,
        messages: list[Message],
        *,
        input: str,
        thread_id: str | None,
        run_id: str | None,
        uses_memory: bool = True,
        memory_thread: str | None = None,
        guardrail_retries: int = 0,
        tools: tuple[ToolRecord, ...] = (),
        parent_call: CallRef | None = None,
        model_settings: ModelSettings | None = None,
        deps: Any = None,
        queued: RunState | None = None,
    ) -> RunJournal:
        """A new run's journal, its `run_started` recorded (committed with the first attempt);
        for a `queued` run, its journal after its `run_queued`."""
        started = RunStarted(
            agent=self.config.agent,
            input=input,
            messages=tuple(m if m.id else replace(m, id=new_message_id()) for m in messages),
            thread_id=thread_id,
            config_digest=self.config_digest,
            model=self.config.model.model_id,
            uses_memory=uses_memory,
            memory_thread=memory_thread,
            guardrail_retries=guardrail_retries,
            tools=tools,
            parent_call=parent_call,
            model_settings=model_settings if model_settings != NO_SETTINGS else None,
            engine=self.engine.url if self.engine is not None else "",
            version=self.identity.version,
            fingerprint=self.identity.parts,
            replay_of=self.replay_of,
        )
        state = queued if queued is not None else RunState(run_id=run_id or new_run_id())
        journal = RunJournal(self.store, state, snapshot_every=self.snapshot_every)
        journal.deps = deps
        journal.record(started)
        return journal

    async def drive(
        self,
        journal: RunJournal,
        cancel: CancellationToken | None,
        *,
        stream_model: bool,
        wait: bool = True,
        emit: bool = True,
        config: RuntimeConfig | None = None,
        leases: HeldLeases = NO_LEASES,
    ) -> AsyncIterator[StreamEvent]:
        """Drive a run under its lease, yielding its stream events (none with `emit=False`).

        `config` replaces the agent's for this run: the agent's with the run's toolset tools.
        `leases` are those the caller took for the run (`start_leases`): the run's own is
        taken here unless among them, and once the run stops and memory has been fed, all
        are given up together, in one round trip to the store (a SQLite store's worker gives
        them up in one transaction), where giving each up in turn cost every run of a thread a
        round trip more than a run of none."""
        if journal.state.status.is_terminal:
            if emit:
                yield Done(journal.run_id, journal.state.status.value)
            return
        if journal.state.status is Status.QUEUED:
            raise InvalidOperation(f"run {journal.run_id} is queued; `resume` starts it when its turn comes")
        refuse_changed(journal.state, self.identity)  # before the lease: a refusal records nothing
        if self.engine is not None:
            async for event in self.engine.drive(self, journal, cancel, emit=emit):
                yield event
            return
        async with run_slot(self.max_active_runs):
            held = await self._take_over(journal, wait, leases)
            cfg = config or self.config
            try:
                record_change(journal, self.identity, cfg.tools)
            except BaseException:
                await self._let_go(journal, held)
                raise
            watching = tuple(observers)
            for observer in watching:
                observer.attempt_started(journal, cfg)
            failure: BaseException | None = None
            try:
                async for event in drive(journal, cfg, cancel=cancel, stream_model=stream_model, emit=emit):
                    yield event
            except BaseException as exc:
                failure = exc
                raise
            finally:
                for observer in watching:
                    observer.attempt_ended(journal, failure)
                try:
                    if failure is None:  # fed before the thread is given up: its next run is sent this one
                        await self.remember(journal.state)
                finally:
                    await self._let_go(journal, held)

    async def run(
        self,
        journal: RunJournal,
        cancel: CancellationToken | None,
        *,
        wait: bool = True,
        config: RuntimeConfig | None = None,
        leases: HeldLeases = NO_LEASES,
    ) -> None:
        """`drive` for a caller that wants only the outcome (`prompt`, `resume`): no stream
        event is built."""
        async for _ in self.drive(
            journal, cancel, stream_model=False, wait=wait, emit=False, config=config, leases=leases
        ):
            pass

    def run_lease(self, run_id: str) -> LeaseKeeper:
        """The lease a driver of run `run_id` holds (not yet taken)."""
        return LeaseKeeper(self.store, run_lease_name(run_id), ttl_s=self.lease_ttl_s)

    def start_leases(self, run_id: str, thread_id: str | None) -> HeldLeases:
        """The leases (not yet taken) whoever starts run `run_id` of thread `thread_id` takes
        together before reading the thread's history: the thread's, and the run's own unless
        an engine's worker drives the run (it takes the run's lease there). A run of no thread
        takes nothing before it is driven: its driver takes its lease."""
        if thread_id is None:
            return NO_LEASES
        thread = LeaseKeeper(self.store, snapshot_key(thread_id), ttl_s=self.lease_ttl_s)
        return HeldLeases(run=self.run_lease(run_id) if self.engine is None else None, thread=thread)

    async def _take_over(self, journal: RunJournal, wait: bool, leases: HeldLeases) -> HeldLeases:
        """`leases` with the run's own, taken here unless the caller took it. A run that
        already has events catches up with the journal once the lease is ours, since its
        previous driver may have appended until the last moment."""
        keeper = leases.run
        if keeper is None:
            keeper = self.run_lease(journal.run_id)
            await keeper.acquire(wait=wait)
        held = replace(leases, run=keeper)
        try:
            # A queued run's journal holds its `run_started`, uncommitted: a driver that started
            # it meanwhile makes the commit conflict, as it must.
            if 0 < journal.committed_seq == journal.state.next_seq:
                await _catch_up(self.store, journal)
        except BaseException:
            await self._let_go(journal, held)
            raise
        journal.guard = keeper.ensure
        journal.fence = keeper.fence
        journal.effect_guard = keeper.check_effect
        # The journal as this driver found it once the lease was its own. Any driver that acts
        # commits an intent first; one that took over before that commit cannot commit after
        # it (the append fences), and one that took over after it holds a larger count.
        journal.fencing_token = journal.committed_seq
        try:
            await self._tell_takeover(journal, keeper)
        except BaseException:
            await self._let_go(journal, held)
            raise
        return held

    async def _tell_takeover(self, journal: RunJournal, keeper: LeaseKeeper) -> None:
        """Journal and log a takeover from a driver lost mid-run (`runtime.process.takeover`)."""
        if journal.committed_seq == 0 or journal.state.status is not Status.RUNNING:
            return
        tail = await self.store.load(journal.run_id, after_seq=journal.committed_seq - 2)
        last = tail[-1] if tail else None
        if last is None or not takeover.interrupted(journal.state, last):
            return
        taken = takeover.took_over(keeper.owner, keeper.previous_holder, last, journal.clock.now())
        journal.record(taken)
        await journal.flush()
        takeover.log_takeover(journal.run_id, taken)

    async def _let_go(self, journal: RunJournal, held: HeldLeases) -> None:
        # Given up whether the run finished or paused: a resumer that reopened the run while it
        # was live waits for its lease, and would otherwise wait for it to expire.
        journal.guard = journal.fence = None
        await held.release()

    async def reopen(self, run_id: str, deps: Any = None) -> RunJournal:
        journal = RunJournal(self.store, await load_state(self.store, run_id), snapshot_every=self.snapshot_every)
        journal.deps = deps
        return journal

    async def remember(self, state: RunState) -> None:
        """Feed memory this run's committed messages; memory ignores ids it already has.

        A turn still waiting for tool results (a human's approval) is held back: memory never
        holds a call without its results.
        """
        if self.memory is None or not state.uses_memory:
            return
        own = state.messages[state.input_index : len(state.messages) - 1 if state.pending else None]
        await feed(self.memory, [m for m in own if m.role is not Role.SYSTEM], state.memory_thread)

    def respond(self, journal: RunJournal) -> AgentResponse[Any]:
        """The response for a run that answered or is waiting; the error for one that ended badly.

        The error is built from the journal alone, so every process raises the same one; in the
        process where an exception ended the run, that exception is its `__cause__`.
        """
        state = journal.state
        if state.status in (Status.FAILED, Status.CANCELLED, Status.BUDGET_EXCEEDED):
            raise error_for(state) from journal.failure
        structured = self.output.restore(state.structured_output) if self.output is not None else None
        return AgentResponse.from_state(state, structured, typed=self.output is not None)


def error_for(state: RunState) -> RunError:
    """The error a run that ended badly raises, built from its journaled facts alone."""
    run_id, error = state.run_id, state.error or "the run failed"
    if state.status is Status.CANCELLED:
        return Cancelled(error, run_id=run_id)
    if state.status is Status.BUDGET_EXCEEDED and state.budget_limit is not None:
        reached = state.budget_limit
        return BudgetExceeded(reached.spent, reached.limit, unit=reached.unit, run_id=run_id)
    kind = state.error_kind
    if kind is FailureKind.MAX_ITERATIONS:
        return MaxIterations(state.error_limit or _limit_in(error), run_id=run_id)
    if kind is FailureKind.GUARDRAIL_BLOCKED:
        guardrail, reason = state.error_guardrail, error
        if not guardrail:  # older journals wrote "name: reason"
            guardrail, _, reason = error.partition(": ") if ": " in error else ("", "", error)
        return GuardrailBlocked(reason, guardrail=guardrail, run_id=run_id)
    if kind is FailureKind.OUTPUT_REJECTED:
        return OutputRejected(error, run_id=run_id)
    if kind is FailureKind.CONTEXT_TOO_LONG:
        return ContextExhausted(f"run {run_id} failed: {error}", run_id=run_id)
    return RunFailedError(f"run {run_id} failed: {error}", run_id=run_id)


def _limit_in(error: str) -> int:
    """The limit an older journal wrote only into its text (`max_iterations=N reached …`)."""
    found = re.search(r"max_iterations=(\d+)", error)
    return int(found.group(1)) if found else 0


async def _catch_up(store: EventStore, journal: RunJournal) -> None:
    """Apply the events appended since `journal` was loaded. The journal is append-only and the
    fold deterministic, so this equals a full reload, at the cost of the new events only."""
    state = journal.state
    for event in await store.load(journal.run_id, after_seq=journal.committed_seq - 1):
        state.apply(event)
    journal.replace_state(state)
