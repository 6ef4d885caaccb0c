"""The one runtime loop. `prompt`, `prompt_stream` and `resume` all drive `drive`.

The loop asks the pure `next_step` what to do, performs that effect, records what happened
and asks again. Because decisions are made from the folded state alone, a run resumed in a
new process after a crash or a human decision continues exactly where the journal says.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from eudaimon.core.decide import (
    AwaitApproval,
    AwaitReconciliation,
    AwaitWake,
    CallModel,
    Fail,
    Finish,
    RunTools,
    Step,
    Stop,
    next_step,
)
from eudaimon.core.due import due_events
from eudaimon.core.errors import ContextTooLong, JournalError, ModelError, ModelRetry
from eudaimon.core.events import (
    BudgetExceeded,
    FailureKind,
    FinishRejected,
    RunCancelled,
    RunCompleted,
    RunFailed,
    ToolOutcomeUnknown,
)
from eudaimon.core.state import TERMINAL_STATUSES
from eudaimon.datasources import DatasourceOutcomeUnknown
from eudaimon.models.base import ChatResponse
from eudaimon.runtime.loop.call_intents import prepare_batch
from eudaimon.runtime.loop.call_watch import CallCancelled, CallWatch
from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.runtime.loop.clock import no_wait
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.context import loop_state, run_context
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.loop.model_calls import ContextRejected, attempt
from eudaimon.runtime.loop.model_calls import call as model_call
from eudaimon.runtime.loop.model_turn import after_call, before_call
from eudaimon.runtime.loop.signals import LoopSignal
from eudaimon.runtime.loop.tool_calls import OutcomeLost, run_alone, run_together
from eudaimon.streaming import Done, Error, StreamEvent

logger = logging.getLogger("eudaimon.runtime")

_NOTHING: tuple[StreamEvent, ...] = ()


async def drive(
    journal: RunJournal,
    cfg: RuntimeConfig,
    *,
    cancel: CancellationToken | None = None,
    stream_model: bool = False,
    emit: bool = True,
) -> AsyncIterator[StreamEvent]:
    """Run until the run completes, fails or waits for a human; yield what happens.

    `stream_model` asks the model for deltas (`prompt_stream`); otherwise each model call is
    one `generate`. With `emit=False` (a caller that wants only the outcome) nothing is
    yielded. Either way the events journaled are the same.
    """
    state = journal.state
    run = _Run(journal, cfg, cancel, _watch(journal, cancel), stream_model, emit)
    try:
        while True:
            await journal.clock.turn()  # the loop's other callbacks and timers go first if steps ran long
            step = next_step(state, cfg.decide)
            events: AsyncIterator[StreamEvent] | None = None
            if isinstance(step, CallModel) and not stream_model:
                made = await run.call_model(step.step)  # a coroutine: no generator a step
                if emit:
                    for event in made:
                        yield event
            elif isinstance(step, CallModel):
                events = run.stream_model_call(step.step)
            elif isinstance(step, RunTools):
                events = run.run_tools(step)
            elif isinstance(step, Finish):
                await run.finish(step.text)
                continue
            else:
                if run.fire_due(step):
                    continue  # a deadline or a wake fell due while the run waited: it goes on
                run.halt(step)
                break
            if events is not None:
                async for event in events:
                    if emit:
                        yield event
            if state.status in TERMINAL_STATUSES:
                break  # the step recorded the run's end (a cancel, a budget, a guardrail's block)
    except asyncio.CancelledError:
        await _cut_short(journal, cancel)
        raise
    except (JournalError, LoopSignal):
        # Another process owns the run now, or the store failed: nothing more may be written.
        # Or a shell's signal (a Temporal run continuing as new), for the shell to act on.
        raise
    except DatasourceOutcomeUnknown:
        # A datasource call's outcome is not known until its datasource answers (`tool_calls`):
        # the run stops as a crash leaves it, resumable, its siblings' results durable.
        await journal.flush()
        raise
    except Exception as exc:
        await _failed(journal, cfg, exc)
    finally:
        if run.watch is not None:
            run.watch.close()
    await journal.flush()
    if emit:
        if state.error and state.status.is_terminal and state.status != "completed":
            yield Error(state.error)
        yield Done(state.run_id, state.status.value)


def _watch(journal: RunJournal, cancel: CancellationToken | None) -> CallWatch | None:
    """A cancel during a model call closes it (`call_watch`). Not in a Temporal workflow: its
    replayed history must hold every command, and a cancelled activity would be a new one."""
    return CallWatch(journal, cancel) if journal.clock.turn is not no_wait else None


async def _cut_short(journal: RunJournal, cancel: CancellationToken | None) -> None:
    """Cut short from outside. By a cancelled parent run (the token says so): the journal says
    so too, unless the cut fell inside a commit (what landed is then unknown; whoever takes the
    run over reads it). Any other cut (a shutdown) leaves the run as a crash would: resumable."""
    if cancel is not None and cancel.is_cancelled and not journal.in_doubt:
        if not journal.state.status.is_terminal:
            journal.record(RunCancelled(reason=cancel.reason, by=cancel.by))
        await journal.flush()


async def _failed(journal: RunJournal, cfg: RuntimeConfig, exc: Exception) -> None:
    """A model that failed for good, or user code (a hook, middleware) that raised: record why
    the run ended, so the journal never shows a run that just stopped, and keep the exception,
    so the error `prompt` raises in this process has it as its cause."""
    state = journal.state
    journal.failure = exc
    if isinstance(exc, ModelError):
        logger.warning("run %s failed: the model failed: %s: %s", state.run_id, type(exc).__name__, exc)
    else:
        logger.error("run %s failed: %s raised", state.run_id, type(exc).__name__, exc_info=exc)
    if not state.status.is_terminal:
        journal.record(
            RunFailed(error=f"{type(exc).__name__}: {exc}", kind=failure_kind(exc), exception=type(exc).__name__)
        )
    await journal.flush()
    if not isinstance(exc, ModelError) and cfg.hooks is not None:
        try:
            await cfg.hooks.on_error(exc, run_context(journal))
        except Exception:
            logger.exception("an on_error hook raised while reporting %r", exc)


@dataclass(frozen=True, slots=True)
class _Run:
    """One drive of the loop: each kind of step the loop takes, as a method.

    A step that streams (a model call's deltas, tool results as they finish) yields what it
    makes; a step ends the run only by recording its end, which `drive` reads from the state.
    """

    journal: RunJournal
    cfg: RuntimeConfig
    cancel: CancellationToken | None
    watch: CallWatch | None
    stream_model: bool
    emit: bool

    async def call_model(self, step: int) -> Sequence[StreamEvent]:
        """Ask the model for step `step`'s answer in one call and journal it, unless the run
        stops first; what it makes for the stream (a coroutine: no generator a step)."""
        journal, cfg, watch = self.journal, self.cfg, self.watch
        if await self._stopped_before_call():
            return _NOTHING
        call = await before_call(journal, cfg, step)
        answer = call.answer
        if answer is None:
            try:
                answer = await model_call(
                    journal,
                    cfg.model,
                    call.request,
                    step=step,
                    retry=cfg.model_retry,
                    offered=cfg.prepared,
                    watch=watch,
                )
            except (ContextRejected, CallCancelled) as exc:
                return self._cut_off(exc)
            finally:
                if watch is not None:
                    watch.pause()
            await journal.clock.turn()  # a wave of answers arrives at once: judging them is steps' work
        return await after_call(journal, cfg, call, answer, self.emit)

    async def stream_model_call(self, step: int) -> AsyncIterator[StreamEvent]:
        """`call_model` with the model's deltas yielded as they arrive (`prompt_stream`)."""
        journal, cfg, watch = self.journal, self.cfg, self.watch
        if await self._stopped_before_call():
            return
        call = await before_call(journal, cfg, step)
        answer = call.answer
        if answer is None:
            try:
                stream = attempt(
                    journal,
                    cfg.model,
                    call.request,
                    step=step,
                    stream=True,
                    retry=cfg.model_retry,
                    offered=cfg.prepared,
                    watch=watch,
                )
                async for item in stream:
                    if isinstance(item, ChatResponse):
                        answer = item
                    else:
                        yield item
            except (ContextRejected, CallCancelled) as exc:
                for event in self._cut_off(exc):
                    yield event
                return
            finally:
                if watch is not None:
                    watch.pause()
            assert answer is not None
            await journal.clock.turn()
        for event in await after_call(journal, cfg, call, answer, self.emit):
            yield event

    def _cut_off(self, exc: ContextRejected | CallCancelled) -> Sequence[StreamEvent]:
        """A model call that ended without an answer: the context was too long (the step is
        asked again, smaller), or a cancel closed it (recorded)."""
        if isinstance(exc, ContextRejected):
            return (Error(f"context too long, retrying with a smaller request: {exc}"),)
        self.journal.record(RunCancelled(reason=exc.request.reason, by=exc.request.by))
        return _NOTHING

    async def _stopped_before_call(self) -> bool:
        """Whether the run ended before its next model call (recorded): cancelled or over budget."""
        journal, cfg, cancel = self.journal, self.cfg, self.cancel
        state = journal.state
        if cancel is not None and cancel.is_cancelled:
            journal.record(RunCancelled(reason=cancel.reason, by=cancel.by))
            return True
        breach = cfg.budget.breach(state.cost_usd, state.usage.total_tokens) if cfg.budget is not None else None
        if breach is not None:
            journal.record(
                BudgetExceeded(reason=breach.reason, spent=breach.spent, limit=breach.limit, unit=breach.unit)
            )
            return True
        # Left by another process (read now and then), or seen as a call ended.
        requested = (self.watch and self.watch.request) or await journal.cancel_request()
        if requested is not None:
            journal.record(RunCancelled(reason=requested.reason, by=requested.by))
            return True
        return False

    async def run_tools(self, step: RunTools) -> AsyncIterator[StreamEvent]:
        """Decide, journal and execute one batch of tool calls; yield each result as recorded."""
        journal, cfg, cancel = self.journal, self.cfg, self.cancel
        batch = await prepare_batch(journal, cfg, step)
        for result in batch.settled:
            yield result
        try:
            if len(batch.ready) == 1 and cancel is None:  # nothing to race: no task (a step costs 0.8x)
                yield await run_alone(journal, cfg, batch.ready[0])
            elif batch.ready:
                async for result in run_together(journal, cfg, batch.ready, cancel):
                    yield result
        except OutcomeLost:
            return  # the call is started and unfinished: `next_step` decides as after a crash
        if cancel is not None and cancel.is_cancelled:
            journal.record(RunCancelled(reason=cancel.reason, by=cancel.by))
        elif not journal.state.pending and cfg.hooks is not None:
            await cfg.hooks.on_iteration_end(loop_state(journal.state, cfg, journal.state.steps), run_context(journal))

    async def finish(self, text: str) -> None:
        """Complete with the final answer, or ask for a corrected one."""
        journal, cfg = self.journal, self.cfg
        await _finish(journal, cfg, text)
        if journal.state.status.is_terminal and cfg.hooks is not None:
            await cfg.hooks.on_iteration_end(loop_state(journal.state, cfg, journal.state.steps), run_context(journal))

    def fire_due(self, step: Step) -> bool:
        """Record the deadlines and wakes due by now in a run about to stop for them (a run
        resumed after its time): whether any were."""
        if not isinstance(step, AwaitApproval | AwaitWake):
            return False
        due = due_events(self.journal.state, self.journal.clock.now())
        for event in due:
            self.journal.record(event)
        return bool(due)

    def halt(self, step: AwaitApproval | AwaitReconciliation | AwaitWake | Fail | Stop) -> None:
        """The run stops here: it waits for a human or an operator, or it ended, or it fails."""
        if isinstance(step, AwaitReconciliation):
            for unknown in step.outcome_unknown:
                self.journal.record(ToolOutcomeUnknown(call_id=unknown.id, tool=unknown.name))
        elif isinstance(step, Fail):
            self.journal.record(RunFailed(error=step.error, kind=step.kind, limit=step.limit))


def failure_kind(exc: Exception) -> FailureKind:
    """How the journal classifies an exception that ended a run."""
    if isinstance(exc, ContextTooLong):
        return FailureKind.CONTEXT_TOO_LONG
    if isinstance(exc, ModelError):
        return FailureKind.MODEL_ERROR
    return FailureKind.EXCEPTION


async def _finish(journal: RunJournal, cfg: RuntimeConfig, text: str) -> None:
    """Complete with the final answer, or ask for a corrected one: the schema's complaint
    (ValueError) or an output validator's `ModelRetry` becomes `finish_rejected`."""
    state = journal.state
    if cfg.output_validator is None:
        journal.record(RunCompleted(output=text))
        return
    try:
        output, structured = await cfg.output_validator(text, run_context(journal))
    except ModelRetry as exc:
        journal.record(FinishRejected(step=state.steps, reason=exc.message, by_validator=True))
        return
    except ValueError as exc:
        journal.record(FinishRejected(step=state.steps, reason=str(exc)))
        return
    journal.record(RunCompleted(output=output, structured=structured))
