"""What any process does with an agent's runs by driving them itself: start one (`prompt`, its
stream and its variants), continue one (`resume`, its stream), run one again (`replay`).

Each pair (`prompt`/`prompt_stream`, `resume`/`resume_stream`) shares one body, a context
manager that starts the run and holds its run slot and thread lease while the caller drives it:
they differ only in how they drive it (to the end, or yielding its stream events).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any, Generic

from eudaimon.agent._input import PromptInput, check_deps, check_input, check_messages
from eudaimon.agent._queued import begin_queued
from eudaimon.agent._replay import Evaluator, replay_run
from eudaimon.agent._start import Started, begin_prompt
from eudaimon.agent.agent_runtime import AgentRuntime
from eudaimon.core.errors import EudaimonError, InvalidOperation
from eudaimon.core.messages import Message
from eudaimon.core.settings import ModelSettings
from eudaimon.core.state import CallStatus, Status
from eudaimon.extensions.guardrails import Guardrail
from eudaimon.memory import Memory
from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.admission import run_slot
from eudaimon.runtime.process.replay import Replay
from eudaimon.runtime.process.response import AgentResponse, OutputT
from eudaimon.runtime.process.tree import waiting_calls
from eudaimon.stores.base import EventStore
from eudaimon.streaming import StreamEvent
from eudaimon.tools.context import DepsT


class DrivenRuns(Generic[DepsT, OutputT]):
    """The part of `Agent` that starts, continues and replays runs in this process."""

    name: str
    store: EventStore
    memory: Memory | None
    default_thread: str | None
    deps_type: type[DepsT] | None
    input_guardrails: tuple[Guardrail, ...]
    _runtime: AgentRuntime

    async def prompt(
        self,
        input: PromptInput,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        cancel: CancellationToken | None = None,
        wait: bool = True,
        deps: DepsT | None = None,
        model_settings: ModelSettings | None = None,
        message_history: Sequence[Message] | None = None,
    ) -> AgentResponse[OutputT]:
        """Run the agent on `input` until it answers, fails, or waits for a human.

        Args:
            input: the user's message: a string, or a list of `TextPart`, `ImagePart` and
                `DocumentPart` (strings in the list are text).
            thread_id: the conversation this prompt continues; memory supplies its history.
                Without one the agent's own default thread is used, shared by every prompt
                that names none (none at all for `Agent(memory=None)`). A thread runs one
                prompt at a time: a second one waits, or raises `LeaseHeld` when `wait=False`.
            run_id: the id to give the run (a fresh one when None).
            cancel: a token that stops the run at its next check.
            deps: what tools and instructions get as `ctx.deps` (required when the agent
                has a `deps_type`); never journaled.
            model_settings: merged over the agent's, key by key, for every call of this
                run; journaled in `run_started`, so a resumed run calls the model the same way.
            message_history: the conversation so far, kept by the caller (e.g. a previous
                `response.all_messages()`): sent after the agent's instructions (system
                messages in it are dropped) instead of what memory holds, and not fed to memory.

        Raises:
            TypeError: `input` or `message_history` is of a type not accepted (nothing is journaled).
            ConfigurationError: deps missing, or settings the provider does not have.
            GuardrailBlocked: an input guardrail refused `input` (nothing is journaled).
            MaxIterations, Cancelled, BudgetExceeded, OutputRejected, RunFailedError: the run
                ended without an answer; `error.run_id` names its journal.
        """
        async with self._prompting(input, thread_id, run_id, wait, deps, model_settings, message_history) as started:
            await self._runtime.run(started.journal, cancel, config=started.config, leases=started.leases)
        return await self._respond(started.journal)

    async def prompt_stream(
        self,
        input: PromptInput,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        cancel: CancellationToken | None = None,
        wait: bool = True,
        deps: DepsT | None = None,
        model_settings: ModelSettings | None = None,
        message_history: Sequence[Message] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """The same run as `prompt`, yielding text and tool-call deltas, tool results, usage
        per iteration and `Done`. A run that ends badly yields `Error` before `Done`."""
        async with self._prompting(input, thread_id, run_id, wait, deps, model_settings, message_history) as started:
            async for event in self._runtime.drive(
                started.journal,
                cancel,
                stream_model=True,
                config=started.config,
                leases=started.leases,
            ):
                yield event

    @asynccontextmanager
    async def _prompting(
        self,
        input: PromptInput,
        thread_id: str | None,
        run_id: str | None,
        wait: bool,
        deps: Any,
        model_settings: ModelSettings | None,
        message_history: Sequence[Message] | None,
    ) -> AsyncIterator[Started]:
        """A prompt's run started, holding a run slot and its thread's lease while it is driven:
        what `prompt` and `prompt_stream` share (they differ only in how they drive it). The
        driver gives the leases up; if it never took them over, they are given up here (a
        second release does nothing)."""
        async with run_slot(self._runtime.max_active_runs):  # before the thread's lease: a queued prompt holds none
            started = await begin_prompt(
                self, self._runtime, input, thread_id, run_id, wait, deps, model_settings, message_history
            )
            try:
                yield started
            finally:
                await started.leases.release()

    async def prompt_with_cancellation(self, input: PromptInput, cancel: CancellationToken) -> AgentResponse[OutputT]:
        return await self.prompt(input, cancel=cancel)

    async def prompt_with_messages(
        self,
        messages: Sequence[Message],
        *,
        run_id: str | None = None,
        cancel: CancellationToken | None = None,
        deps: DepsT | None = None,
        model_settings: ModelSettings | None = None,
    ) -> AgentResponse[OutputT]:
        """Run on a conversation you assembled yourself: memory and input guardrails are bypassed."""
        history = check_messages(messages)
        if not history:
            raise InvalidOperation("prompt_with_messages needs at least one message")
        check_deps(self.name, self.deps_type, deps, "prompt_with_messages(...)")
        self._runtime.check_run_settings(model_settings)
        records, config = await self._runtime.fresh_tools()
        journal = self._runtime.start(
            history,
            input=history[-1].content,
            thread_id=None,
            run_id=run_id,
            uses_memory=False,
            model_settings=model_settings,
            deps=deps,
            tools=records,
        )
        await self._runtime.run(journal, cancel, config=config)
        return await self._respond(journal)

    def prompt_sync(self, input: PromptInput, **options: Any) -> AgentResponse[OutputT]:
        """`prompt` for code that is not async. Not for use inside a running event loop."""
        check_input(input)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.prompt(input, **options))
        raise EudaimonError("prompt_sync was called inside a running event loop; use `await agent.prompt(...)`")

    async def _respond(self, journal: RunJournal) -> AgentResponse[OutputT]:
        """The response, with the approvals its child runs wait for in place of the calls
        waiting on them: those are the ones a human decides (`approve` takes their ids)."""
        response: AgentResponse[OutputT] = self._runtime.respond(journal)
        state = journal.state
        if response.status is Status.AWAITING_APPROVAL and state.children:
            waiting = await waiting_calls(self.store, state, CallStatus.AWAITING_APPROVAL)
            response = replace(response, pending_approvals=waiting)
        return response

    async def resume(
        self,
        run_id: str,
        *,
        cancel: CancellationToken | None = None,
        wait: bool = True,
        deps: DepsT | None = None,
    ) -> AgentResponse[OutputT]:
        """Continue a run from its journal: after a crash, an approval or a reconciliation.

        A queued run (journaled by a server, not yet started) starts here, holding its
        thread's lease, once the runs queued before it on its thread have started (else
        `QueuedBehind`). Completed calls are never executed again. A call started but not completed runs again
        (same idempotency key) only if its tool is READ or idempotent; otherwise the run waits
        for `reconcile`. If another process drives the run, this waits for its lease to lapse
        (or raises `LeaseHeld` when `wait=False`). The run keeps the instructions, tools
        offered and model settings its journal recorded.

        Args:
            deps: the run's deps again (they are never journaled); required when the agent
                has a `deps_type` and the run is not finished.

        Raises:
            ConfigurationError: the agent has a `deps_type` and no deps were given; nothing ran.
            QueuedBehind: the run is queued and another run of its thread must go first.
        """
        async with self._resuming(run_id, wait, deps, cancel) as started:
            await self._runtime.run(started.journal, cancel, wait=wait, config=started.config, leases=started.leases)
        return await self._respond(started.journal)

    async def resume_stream(
        self,
        run_id: str,
        *,
        cancel: CancellationToken | None = None,
        wait: bool = True,
        deps: DepsT | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """`resume`, yielding the stream events of what the run does from here (as `prompt_stream`)."""
        async with self._resuming(run_id, wait, deps, cancel) as started:
            async for event in self._runtime.drive(
                started.journal, cancel, stream_model=True, wait=wait, config=started.config, leases=started.leases
            ):
                yield event

    @asynccontextmanager
    async def _resuming(
        self, run_id: str, wait: bool, deps: Any, cancel: CancellationToken | None
    ) -> AsyncIterator[Started]:
        """Run `run_id` reopened with its deps and the tools it recorded; a queued run started,
        holding a run slot and its thread's lease while it is driven: what `resume` and
        `resume_stream` share (they differ only in how they drive it)."""
        journal = await self._runtime.reopen(run_id, deps)
        if not journal.state.status.is_terminal:
            check_deps(self.name, self.deps_type, deps, f"resume({run_id!r}, deps=...)")
        if journal.state.status is not Status.QUEUED:
            yield Started(journal, await self._runtime.resumed_tools(journal.state))
            return
        async with run_slot(self._runtime.max_active_runs):
            started = await begin_queued(self, self._runtime, journal.state, wait=wait, deps=deps, cancel=cancel)
            try:
                yield started
            finally:
                await started.leases.release()

    async def replay(
        self,
        run_id: str,
        *,
        live_reads: bool = False,
        evaluators: Sequence[Evaluator] = (),
        deps: DepsT | None = None,
    ) -> Replay:
        """Run run `run_id`'s recorded input (and history) again with this agent, as a run of its
        own (`run_started.replay_of`), and line its decisions up with the original's.

        The model decides live; tools are never trusted. A call the original made (same tool,
        same arguments) gets its recorded result; a READ it did not make runs live only with
        `live_reads`; any other call never runs: the replay stops there (`status="diverged"`,
        `would_call`). Nothing the original did is sent again.

        Args:
            evaluators: `fn(original_state, replay) -> bool | float | str`, each giving one
                entry of `replay.scores` (by the function's name).
            deps: for instructions and live READ tools; never journaled.
        """
        return await replay_run(self._runtime, run_id, live_reads=live_reads, evaluators=evaluators, deps=deps)
