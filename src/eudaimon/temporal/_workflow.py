"""`RunWorkflow`: one eudaimon run as one Temporal workflow, driven by the one loop.

The workflow (id = the run id) loads the run's journal, then runs `eudaimon.runtime.loop.drive`
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

Everything here runs in Temporal's workflow sandbox; eudaimon's modules are imported inside
it (none is passed through but the registry of agents this worker serves).
"""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import replace
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

import eudaimon
from eudaimon.agent import Agent
from eudaimon.core.codec import event_from_json, state_to_json
from eudaimon.core.errors import ConcurrencyConflict, InvalidOperation
from eudaimon.core.events import Event, RunCancelled
from eudaimon.core.state import RunState
from eudaimon.runtime.cancel import CancellationToken
from eudaimon.runtime.config import RuntimeConfig
from eudaimon.runtime.journal import RunJournal
from eudaimon.runtime.loop import drive
from eudaimon.runtime.operations import approval, reconciliation
from eudaimon.temporal._payloads import DecisionInput, LoadInput, RunInput
from eudaimon.temporal._seams import ActivityModel, JournalStore, activity_tools, workflow_clock

with workflow.unsafe.imports_passed_through():
    # The one module shared with the worker's process: which module builds each agent.
    import eudaimon.temporal._served as _served

# The served agent's module is imported when a run starts (`_runtime_config`), and the sandbox
# wants what it imports loaded with the workflow. `import eudaimon` loads its public names on
# first use, so load them all now: an agent module may use any of them.
for _public in eudaimon.__all__:
    getattr(eudaimon, _public)


@workflow.defn(name="eudaimon.run")
class RunWorkflow:
    @workflow.init
    def __init__(self, start: RunInput) -> None:
        self._start = start
        self._journal: RunJournal | None = None
        self._store = JournalStore(start.run_id, [])
        self._cancel = CancellationToken()
        self._decisions = 0
        """Decisions received; a pass of the loop has seen those counted when it began."""
        self._seen = -1
        self._idle = False

    @workflow.run
    async def run(self, start: RunInput) -> str:
        body = asyncio.ensure_future(self._main())
        try:
            return await asyncio.shield(body)
        except asyncio.CancelledError:
            # The workflow was cancelled: the loop journals it at its next check and stops.
            self._cancel.cancel("the run's workflow was cancelled")
            self._decisions += 1
            return await body

    async def _main(self) -> str:
        config = _runtime_config(self._start)
        await self._load()
        while True:
            journal = self._ready()
            self._seen, self._idle = self._decisions, False
            try:
                async for _ in drive(journal, config, cancel=self._cancel, emit=False):
                    pass
            except ConcurrencyConflict:
                # Something outside appended to the journal (an old client's decision): fold
                # it and go on, as a local driver would after reloading.
                await self._load()
                continue
            state = journal.state
            if not state.status.is_terminal and self._cancel.is_cancelled:
                journal.record(RunCancelled(reason=self._cancel.reason))
                await journal.flush()
            await self._remember(journal.state)
            if journal.state.status.is_terminal:
                break
            self._idle = True
            await workflow.wait_condition(lambda: self._decisions != self._seen)
        self._idle = True
        await workflow.wait_condition(workflow.all_handlers_finished)
        return journal.state.status.value

    async def _load(self) -> None:
        texts: list[str] = await workflow.execute_activity(
            "eudaimon.load",
            LoadInput(self._start.run_id, self._start.inline_limit),
            start_to_close_timeout=timedelta(seconds=120),
            result_type=list[str],
        )
        events: list[Event] = [event_from_json(t) for t in texts]
        state = RunState.from_events(events)
        assert state is not None
        self._store = JournalStore(self._start.run_id, events)
        self._journal = RunJournal(self._store, state, snapshot_every=0, clock=workflow_clock())

    async def _remember(self, state: RunState) -> None:
        if state.uses_memory:
            await workflow.execute_activity(
                "eudaimon.remember",
                state.run_id,
                start_to_close_timeout=timedelta(seconds=60),
                retry_policy=RetryPolicy(maximum_attempts=10),
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
        journal = self._ready()
        journal.record(_decision_event(journal.state, decision))
        await journal.flush()
        self._decisions += 1
        return journal.committed_seq

    @decide.validator
    def _validate(self, decision: DecisionInput) -> None:
        state = self._ready().state
        if state.status.is_terminal:
            raise InvalidOperation(f"run {state.run_id} is {state.status.value}; it takes no more decisions")
        _decision_event(state, decision)

    @workflow.update(name="settled")
    async def settled(self) -> str:
        """Return the run's status once it has finished or waits for a human."""
        await workflow.wait_condition(lambda: self._idle and (self._seen == self._decisions or self._finished()))
        return self._ready().state.status.value

    @workflow.query(name="state")
    def state(self, at_seq: int | None = None) -> str:
        """The run's state (snapshot JSON) after event `at_seq`, the latest when None."""
        events = self._store.events if at_seq is None else self._store.events[: at_seq + 1]
        state = RunState.from_events(events)
        if state is None:
            raise InvalidOperation(f"run {self._start.run_id} has no events up to seq {at_seq}")
        return state_to_json(state)


def _decision_event(state: RunState, decision: DecisionInput) -> Any:
    if decision.approved is not None:
        return approval(state, decision.call_id, decision.approved, by=decision.by, note=decision.note)
    return reconciliation(state, decision.call_id, output=decision.output, retry=decision.retry, by=decision.by)


def _runtime_config(start: RunInput) -> RuntimeConfig:
    """The agent's configuration, built in this sandbox from the module the worker serves,
    with its model and tools replaced by activities."""
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
    config: RuntimeConfig = found._driver.config
    holder: list[RunWorkflow] = []

    def journal() -> RunJournal:
        return holder[0]._ready()

    holder.append(workflow.instance())
    return _with_seams(config, journal, start)


def _with_seams(config: RuntimeConfig, journal: Any, start: RunInput) -> RuntimeConfig:
    return replace(config, model=ActivityModel(config, journal, start), tools=activity_tools(config, start))
