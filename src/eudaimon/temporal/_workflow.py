"""`RunWorkflow`: one eudaimon run as one Temporal workflow, driven by the one loop.

The workflow (id = the run id) loads the run's journal, then runs `eudaimon.runtime.loop.loop.drive`
with its effects plugged in as activities (`_seams`): the same `next_step` over the same
`RunState` fold decides every step, and every event it records is appended, in order and
gap-free, to the configured `EventStore` before the effect it announces. When the run waits
for a human, the workflow waits on a condition, holding no worker, for as long as it takes.

- Human decisions are the `decide` Update, validated against the run's state (deciding a
  call that is not waiting is rejected, with the reason, and nothing is recorded).
- Cancelling the workflow cancels the run: `run_cancelled` is journaled at the loop's next
  check, exactly as a `CancellationToken` does locally.
- The `state` Query answers the run's state after any seq; `settled` (an Update) returns
  once the run has finished or waits, which is how a caller of `prompt` knows it is done.
- A long run continues as new (Temporal's history would otherwise grow without bound) at a
  step's end, once Temporal suggests it or the history holds `continue_after_events` events:
  everything the step recorded is committed first, and the new execution loads the run from
  the store (its latest snapshot and the events after it), so the journal runs on across the
  boundary with no event missing or repeated. Only the run's input crosses it.
- When the run has finished, what it stashed in the store (`_payloads`) is deleted.
- When the workflow fails (an activity that can never succeed, such as a journal too big for
  any payload), `settled` answers with why before it ends: its callers are not left waiting.

Everything here runs in Temporal's workflow sandbox. On a default worker eudaimon is passed
through it and the workflow uses the worker's agent (`_served`); under the strict
restrictions (the replay of recorded histories, `create_worker(..., sandboxed=True)`)
eudaimon's modules are imported inside it, and the agent is built there from its module.
"""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import replace
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, FailureError

import eudaimon
from eudaimon.agent import Agent
from eudaimon.agent.agent_runtime import runtime_of
from eudaimon.core.codec import event_from_json, state_from_json, state_to_json
from eudaimon.core.errors import ConcurrencyConflict, ConfigurationError, DeadlinePassed, InvalidOperation
from eudaimon.core.events import Event, FailureKind, RunCancelled, RunFailed
from eudaimon.core.state import RunState
from eudaimon.extensions.hooks import HookSet
from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.loop.loop import drive
from eudaimon.runtime.loop.signals import LoopSignal
from eudaimon.runtime.process.agent_change import AgentIdentity
from eudaimon.runtime.process.operations import approval, reconciliation
from eudaimon.temporal._change import note_agent_change, wait_on_a_fresh_execution
from eudaimon.temporal._deps import missing_deps, received_deps
from eudaimon.temporal._payloads import (
    CONTINUED,
    CONTINUING,
    WORKFLOW_FAILED,
    CancelInput,
    DecisionInput,
    LoadInput,
    RunInput,
    UnstashInput,
    received,
    refs_in,
)
from eudaimon.temporal._seams import ActivityModel, JournalStore, activity_tools, workflow_clock
from eudaimon.temporal._timers import decision_time, wait_for_decision_or_due

_UNSTASH_PATCH = "eudaimon.unstash"
"""Histories recorded before runs unstashed replay without the activity."""
_CARRY_PATCH = "eudaimon.effects-carry-their-intents"
"""Histories recorded when every batch had an append activity of its own replay with one."""
_NO_MEMORY_PATCH = "eudaimon.no-memory-no-remember"
"""Histories recorded when every run called `eudaimon.remember`, memory or not, replay with it."""


class _ContinueAsNew(LoopSignal):
    """Raised at a step's end to leave the loop with everything committed: the run goes on
    in a new execution of its workflow. A loop signal, so the loop records nothing for it and
    lets it through to `run`, which continues as new."""


with workflow.unsafe.imports_passed_through():
    # The one module shared with the worker's process: which module builds each agent.
    import eudaimon.temporal._served as _served

# The served agent's module is imported when a run starts (`_runtime_config`), and the sandbox
# wants what it imports loaded with the workflow. `import eudaimon` loads its public names on
# first use, so load them all now: an agent module may use any of them.
for _public in dir(eudaimon):  # the public names (`eudaimon._lazy`)
    getattr(eudaimon, _public)


@workflow.defn(name="eudaimon.run")
class RunWorkflow:
    @workflow.init
    def __init__(self, start: dict[str, Any]) -> None:
        # The input arrives as its JSON object and is built here (`received`, its dataclass
        # hints resolved once): typed `RunInput`, Temporal's converter would resolve them on
        # every run's start. The payload is the same either way.
        self._start = received(RunInput, start)
        self._journal: RunJournal | None = None
        self._store = JournalStore(self._start.run_id, [])
        self._cancel = CancellationToken()
        self._decisions = 0
        """Decisions received; a pass of the loop has seen those counted when it began."""
        self._seen = -1
        self._idle = False
        self._deps: Any = None
        self._snapshot_every = 0
        self._stashed: set[str] = set()
        """Stash keys this execution has seen in activity results: deleted when the run ends."""
        self._deciding = 0
        self._settling = 0
        self._continuing = False
        self._failure: str | None = None
        """Why this execution fails, once it does (`_main`)."""
        self._snapshot: str | None = None
        """The state this execution was loaded from, when the store had a snapshot."""
        self._has_memory = True
        self._identity = AgentIdentity()
        self._loaded_seq = -1
        """This worker's agent (`_change`): a run another agent started is noted as changed."""
        self._carry = False
        """Whether a model activity appends the batch recording its attempt (`JournalStore.carry`)."""

    @workflow.run
    async def run(self, start: dict[str, Any]) -> str:
        body = asyncio.ensure_future(self._main())
        try:
            return await asyncio.shield(body)
        except asyncio.CancelledError:
            # The workflow was cancelled: the loop journals it at its next check and stops.
            self._cancel.cancel("the run's workflow was cancelled")
            self._decisions += 1
            return await body

    async def _main(self) -> str:
        try:
            return await self._drive()
        except FailureError as exc:  # fails the execution; other exceptions fail its task, retried
            cause = exc.cause if isinstance(exc, ActivityError) else exc
            self._failure = cause.message if isinstance(cause, FailureError) else exc.message
            await workflow.wait_condition(workflow.all_handlers_finished)
            raise

    async def _drive(self) -> str:
        config, problem = self._configure()
        # A run started with local appends postdates carrying: it needs no patch marker (and
        # the search-attribute upsert Temporal makes with it), two history events a run.
        self._carry = self._start.local_appends or self._patched(_CARRY_PATCH)
        await self._load()
        journal = self._ready()
        if problem is not None and not journal.state.status.is_terminal:
            journal.record(RunFailed(error=problem, kind=FailureKind.EXCEPTION, exception="ConfigurationError"))
            await journal.flush()
        while not journal.state.status.is_terminal:
            self._seen, self._idle = self._decisions, False
            try:
                await note_agent_change(journal, self._identity, config.tools)  # _change.py
                async for _ in drive(journal, config, cancel=self._cancel, emit=False):
                    pass
                await self._store.settle()
            except ConcurrencyConflict:
                # Something outside appended to the journal (an old client's decision): fold
                # it and go on, as a local driver would after reloading.
                await self._load()
                journal = self._ready()
                continue
            except _ContinueAsNew:
                await self._continue_as_new()
            if not journal.state.status.is_terminal and self._cancel.is_cancelled:
                journal.record(RunCancelled(reason=self._cancel.reason, by=self._cancel.by))
                await journal.flush()
            await self._remember(journal.state)
            if journal.state.status.is_terminal:
                break
            self._idle = True
            if self._history_is_long() or self._fresh_wait(journal.state):
                await self._continue_as_new()
            await wait_for_decision_or_due(
                journal.state, lambda: self._decisions != self._seen, patched=self._start.patched
            )
        self._idle = True
        await workflow.wait_condition(workflow.all_handlers_finished)
        await self._unstash()
        return journal.state.status.value

    def _configure(self) -> tuple[RuntimeConfig, str | None]:
        """The loop's configuration, and why the run cannot go on here if it cannot."""
        agent = _agent(self._start)
        self._snapshot_every = runtime_of(agent).snapshot_every
        self._identity = runtime_of(agent).identity
        self._has_memory = agent.memory is not None
        sent = self._start.deps
        problem = missing_deps(sent, _served.has_deps(self._start.agent))
        if sent is not None and not sent.kept:
            try:
                self._deps = received_deps(sent, agent.deps_type)
            except ConfigurationError as exc:
                problem = str(exc)
        return _runtime_config(agent, self, self._start), problem

    async def _load(self) -> None:
        loaded: Any = self._start.journal
        self._start = replace(self._start, journal=None)  # only the first load: a reload reads the store
        if loaded is None:
            loaded = await workflow.execute_activity(
                "eudaimon.load",
                LoadInput(self._start.run_id, self._start.inline_limit, from_snapshot=True),
                start_to_close_timeout=timedelta(seconds=120),
            )
        refs_in(loaded, self._stashed)
        texts: list[str] = loaded if isinstance(loaded, list) else loaded["events"]
        snapshot: str | None = None if isinstance(loaded, list) else loaded["state"]
        events: list[Event] = [event_from_json(t) for t in texts]
        self._snapshot = snapshot
        state = _fold(snapshot, events)
        if state is None:
            raise InvalidOperation(f"run {self._start.run_id} has no journal in the store")
        base = state.next_seq - len(events)
        self._loaded_seq = state.next_seq - 1
        self._store = JournalStore(self._start.run_id, events, base_seq=base, snapshot_every=self._snapshot_every)
        self._store.carry = self._carry
        self._store.local = self._start.local_appends
        self._journal = RunJournal(self._store, state, snapshot_every=0, clock=workflow_clock())
        self._journal.replayed = True
        self._journal.deps = self._deps

    async def _remember(self, state: RunState) -> None:
        """Feed the agent's memory: an activity only for an agent that has one."""
        if state.uses_memory and (self._has_memory or not self._patched(_NO_MEMORY_PATCH)):
            await workflow.execute_activity(
                "eudaimon.remember",
                state.run_id,
                start_to_close_timeout=timedelta(seconds=60),
                retry_policy=RetryPolicy(maximum_attempts=10),
            )

    def _patched(self, patch: str) -> bool:
        """`workflow.patched(patch)`, without asking for a run started with every patch
        (`RunInput.patched`): no marker and no search-attribute upsert in its history."""
        return self._start.patched or workflow.patched(patch)

    def _fresh_wait(self, state: RunState) -> bool:
        """Whether to wait for a human on a fresh execution (`_change`)."""
        return wait_on_a_fresh_execution(
            state, self._loaded_seq, self._cancel.is_cancelled, patched=self._start.patched
        )

    def _history_is_long(self) -> bool:
        """Whether to continue as new: never once cancelled, as a new execution would not be."""
        if self._cancel.is_cancelled:
            return False
        info = workflow.info()
        limit = self._start.continue_after_events
        return info.is_continue_as_new_suggested() or (limit > 0 and info.get_current_history_length() >= limit)

    async def at_step_end(self) -> None:
        """At a step's end (every call answered): commit, and go on in a new execution if
        the history is long."""
        if self._history_is_long():
            await self._ready().flush()
            await self._store.settle()
            raise _ContinueAsNew(f"run {self._start.run_id} continues as new")

    async def _continue_as_new(self) -> None:
        """Let decisions in flight land and tell callers waiting for the run where it went on."""
        self._continuing = True
        await self._store.settle()
        await workflow.wait_condition(lambda: self._deciding == 0 and self._settling == 0)
        workflow.continue_as_new(replace(self._start, generation=self._start.generation + 1))

    async def _unstash(self) -> None:
        if self._stashed and self._patched(_UNSTASH_PATCH):
            await workflow.execute_activity(
                "eudaimon.unstash",
                UnstashInput(self._start.run_id, sorted(self._stashed)),
                start_to_close_timeout=timedelta(seconds=120),
                retry_policy=RetryPolicy(maximum_attempts=20, maximum_interval=timedelta(seconds=30)),
            )

    def _finished(self) -> bool:
        return self._journal is not None and self._journal.state.status.is_terminal

    def _ready(self) -> RunJournal:
        if self._journal is None:
            raise InvalidOperation(f"run {self._start.run_id} is still loading; try again in a moment")
        return self._journal

    # -- decisions, state and progress -----------------------------------------------------

    @workflow.update(name="decide")
    async def decide(self, decision: DecisionInput) -> int:
        """Record a human's decision; the loop acts on it at once. Returns the next seq."""
        self._deciding += 1
        try:
            await workflow.wait_condition(lambda: self._journal is not None)  # a new execution loads first
            journal = self._ready()
            self._check(journal.state, decision)
            journal.record(_decision_event(journal.state, decision))
            await journal.flush()
            self._decisions += 1
            return journal.committed_seq
        finally:
            self._deciding -= 1

    @decide.validator
    def _validate(self, decision: DecisionInput) -> None:
        if self._continuing:
            raise ApplicationError(f"run {self._start.run_id} is continuing as new; send it again", type=CONTINUING)
        if self._journal is not None:
            self._check(self._journal.state, decision)

    def _check(self, state: RunState, decision: DecisionInput) -> None:
        """Refuse a decision the run cannot take, as an error the Update's caller receives."""
        if state.status.is_terminal:
            raise ApplicationError(
                f"run {state.run_id} is {state.status.value}; it takes no more decisions",
                type="InvalidOperation",
                non_retryable=True,
            )
        try:
            _decision_event(state, decision)
        except DeadlinePassed as exc:  # the late decision is refused as such (`_timers`)
            raise ApplicationError(str(exc), type="DeadlinePassed", non_retryable=True) from exc
        except InvalidOperation as exc:
            raise ApplicationError(str(exc), type="InvalidOperation", non_retryable=True) from exc

    @workflow.update(name="cancel")
    async def cancel(self, request: CancelInput) -> None:
        """Cancel the run, as a `CancellationToken` does: the loop journals `run_cancelled`,
        with who and why, at its next check (a call under way is cut short). Cancelling the
        workflow itself does the same, but carries neither."""
        if not self._cancel.is_cancelled:
            self._cancel.cancel(request.reason, by=request.by)
            self._decisions += 1

    @cancel.validator
    def _validate_cancel(self, request: CancelInput) -> None:
        if self._continuing:
            raise ApplicationError(f"run {self._start.run_id} is continuing as new; send it again", type=CONTINUING)
        if self._finished():
            state = self._ready().state
            raise ApplicationError(
                f"run {state.run_id} is {state.status.value}; only a run that has not ended can be cancelled",
                type="InvalidOperation",
                non_retryable=True,
            )

    @workflow.update(name="settled")
    async def settled(self) -> str:
        """Return the run's status once it has finished or waits for a human, or `continued`
        when it goes on in a new execution (the caller then asks that one)."""
        self._settling += 1
        try:
            await workflow.wait_condition(
                lambda: (
                    self._failure is not None
                    or self._continuing
                    or (self._idle and (self._seen == self._decisions or self._finished()))
                )
            )
            if self._failure is not None:
                raise ApplicationError(self._failure, type=WORKFLOW_FAILED, non_retryable=True)
            return CONTINUED if self._continuing else self._ready().state.status.value
        finally:
            self._settling -= 1

    @workflow.query(name="state")
    def state(self, at_seq: int | None = None) -> str:
        """The run's state (snapshot JSON) after event `at_seq`, the latest when None. An
        execution loaded from a snapshot answers from that seq on; the store, for any seq."""
        base = self._store.base_seq
        events = self._store.events
        if at_seq is not None:
            if at_seq < base - 1:
                raise InvalidOperation(
                    f"run {self._start.run_id}'s workflow holds its states from seq {base - 1} on; read "
                    f"earlier ones from the store: agent.state(run_id, at_seq={at_seq})"
                )
            events = events[: at_seq + 1 - base]
        state = _fold(self._snapshot, events)
        if state is None:
            raise InvalidOperation(f"run {self._start.run_id} has no events up to seq {at_seq}")
        return state_to_json(state)


def _fold(snapshot: str | None, events: list[Event]) -> RunState | None:
    """The state after `events`, from `snapshot` (a state the load activity found readable)."""
    if snapshot is None:
        return RunState.from_events(events)
    state = state_from_json(snapshot)
    if state is None:
        raise InvalidOperation("the run's snapshot was written by another fold version")
    for event in events:
        state.apply(event)
    return state


def _decision_event(state: RunState, decision: DecisionInput) -> Any:
    if decision.approved is not None:
        decided = approval(
            state, decision.call_id, decision.approved, by=decision.by, note=decision.note, at=decision_time(state)
        )
        # The sender checked the edit against the tool's schema; the run checks it again before it runs.
        if decision.arguments is None:
            return decided
        asked = state.calls[decision.call_id].asked  # approval() found the call waiting
        return replace(
            decided, arguments=decision.arguments, original_arguments=asked if isinstance(asked, dict) else None
        )
    return reconciliation(state, decision.call_id, output=decision.output, retry=decision.retry, by=decision.by)


def _agent(start: RunInput) -> Agent:
    """The worker's agent when eudaimon is passed through (it is then of this `Agent` class),
    else the agent built in this sandbox from the module the worker serves."""
    served = _served.agent_for(start.agent)
    if isinstance(served, Agent):
        return served
    spec = _served.spec_for(start.agent)
    module_name, _, attr = spec.partition(":")
    # Building an agent reads its configuration (environment variables, a store URL) and
    # constructs clients without using them: not workflow logic, and the same on every
    # worker of the queue. The loop itself then runs under the sandbox's restrictions.
    with workflow.unsafe.sandbox_unrestricted():
        found: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            found = getattr(found, part)
        if not isinstance(found, Agent) and callable(found):
            found = found()
    if not isinstance(found, Agent):
        raise TypeError(f"{spec} is a {type(found).__name__}, not an Agent")
    return found


class _StepEnd:
    """The hook that lets a long run continue as new at a step's end (`RunWorkflow.at_step_end`)."""

    def __init__(self, run: RunWorkflow) -> None:
        self._run = run

    async def on_iteration_end(self, state: object) -> None:
        await self._run.at_step_end()


def _runtime_config(agent: Agent, run: RunWorkflow, start: RunInput) -> RuntimeConfig:
    """The agent's configuration with its model and tools replaced by activities."""
    config: RuntimeConfig = runtime_of(agent).config
    hooks = HookSet([*(config.hooks.hooks if config.hooks is not None else ()), _StepEnd(run)])
    return replace(
        config,
        model=ActivityModel(config, run._ready, start, run._stashed, lambda: run._store),
        tools=activity_tools(config, start, run._stashed, lambda: run._store),
        hooks=hooks,
    )
