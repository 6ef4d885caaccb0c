"""`Agent`: the public face of eudaimon. Every prompt is a durable run in `agent.store`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from enum import Enum
from typing import Any, Final, Literal

from eudaimon.agent._build import build_runtime_config
from eudaimon.agent._input import check_input, check_messages
from eudaimon.agent.response import AgentResponse
from eudaimon.core.decide import DecideConfig
from eudaimon.core.errors import EudaimonError, InvalidOperation
from eudaimon.core.messages import Message
from eudaimon.core.state import RunState
from eudaimon.extensions.cost import CostModel
from eudaimon.extensions.guardrails import Guardrail, run_input_guardrails
from eudaimon.extensions.hitl import HumanInputHandler
from eudaimon.extensions.prompts import PromptBuilder, PromptTemplate
from eudaimon.extensions.retry import ToolRetryPolicy
from eudaimon.memory import Memory, SlidingWindowMemory, ThreadState
from eudaimon.models.base import Model
from eudaimon.runtime import operations
from eudaimon.runtime.cancel import CancellationToken
from eudaimon.runtime.clock import new_message_id
from eudaimon.runtime.config import ApprovalPolicy
from eudaimon.runtime.engines import Engine, open_engine
from eudaimon.runtime.journal import RunJournal
from eudaimon.runtime.leases import LeaseKeeper
from eudaimon.runtime.runs import RunDriver
from eudaimon.runtime.threads import hold_thread, thread_state
from eudaimon.stores.base import EventStore
from eudaimon.streaming import StreamEvent
from eudaimon.tools import Tool


class _Default(Enum):
    """The type of `DEFAULT_MEMORY`: "not passed" differs from `memory=None` (no memory)."""

    MEMORY = "default memory"


DEFAULT_MEMORY: Final = _Default.MEMORY
"""`Agent(memory=...)` when not passed: a `SlidingWindowMemory(50)`, as in Daimon."""


class _NoThread:
    """The lease of a prompt that belongs to no thread: there is nothing to hold or release."""

    async def release(self) -> None:
        return None


class Agent:
    """An agent: a model, its tools and the rules it runs by, journaled to a store.

    Args:
        model: a `Model`, or a `"provider:model"` string such as `"openai:gpt-4o-mini"`.
        system_prompt: sent first in every run; `prompt_template` wins when both are given.
        tools: `Tool`s or plain typed functions (wrapped with `@tool`); names must be unique.
        memory: which history a prompt is sent. Not passed: a `SlidingWindowMemory(50)`,
            as in Daimon, and a prompt without `thread_id` continues the agent's one default
            thread (`"{name}:default"`): every such prompt shares that history, and they run
            one at a time. `None`: no memory; a prompt without `thread_id` then belongs to no
            thread at all (its own history only, no thread lease), which is what a server
            answering many users wants. With a `thread_id`, a prompt always continues that
            thread.
        max_iterations: model calls a run may make before it fails with `MaxIterations`.
        output_type: a pydantic model, any type pydantic can validate, or a JSON Schema
            dict; the final answer must be JSON that validates, else the model is asked again.
        store: an `EventStore` or a store URL (`memory:`, `sqlite:///runs.db`,
            `postgresql://…`); defaults to `$EUDAIMON_STORE`, else an in-memory store.
        approval_policy: `fn(call, tool) -> ToolPolicy` deciding allow / deny / require
            approval per call; by default only tools that need approval wait for a human.
        engine: where runs are driven: None for this process, else an engine such as
            `eudaimon.temporal.TemporalEngine("host:7233", task_queue="agents")` or its URL
            `"temporal://host:7233/agents"`, whose workers serve this same agent module.
    """

    def __init__(
        self,
        model: Model | str,
        *,
        system_prompt: str | None = None,
        prompt_template: PromptTemplate | PromptBuilder | str | None = None,
        tools: Sequence[Tool | Callable[..., Any]] = (),
        memory: Memory | Literal[_Default.MEMORY] | None = DEFAULT_MEMORY,
        hooks: object | Sequence[object] | None = None,
        max_iterations: int = 25,
        temperature: float | None = None,
        max_tokens: int | None = None,
        validate_tool_inputs: bool = True,
        middleware: object | Sequence[object] = (),
        input_guardrails: Sequence[Guardrail] = (),
        output_guardrails: Sequence[Guardrail] = (),
        cost_model: CostModel | None = None,
        max_budget: float | None = None,
        max_budget_tokens: int | None = None,
        tool_retry_policy: ToolRetryPolicy | None = None,
        human_input: HumanInputHandler | None = None,
        output_type: Any = None,
        store: EventStore | str | None = None,
        name: str = "agent",
        approval_policy: ApprovalPolicy | None = None,
        engine: Engine | str | None = None,
    ) -> None:
        built = build_runtime_config(
            model=model,
            name=name,
            system_prompt=system_prompt,
            prompt_template=prompt_template,
            tools=tools,
            hooks=hooks,
            max_iterations=max_iterations,
            temperature=temperature,
            max_tokens=max_tokens,
            validate_tool_inputs=validate_tool_inputs,
            middleware=middleware,
            output_guardrails=output_guardrails,
            cost_model=cost_model,
            max_budget=max_budget,
            max_budget_tokens=max_budget_tokens,
            tool_retry_policy=tool_retry_policy,
            human_input=human_input,
            output_type=output_type,
            store=store,
            approval_policy=approval_policy,
        )
        self.name = name
        self.model = built.config.model
        self.system_prompt = built.system_prompt
        self.tools = dict(built.config.tools)
        self.memory: Memory | None = SlidingWindowMemory(50) if memory is DEFAULT_MEMORY else memory
        self.default_thread: str | None = f"{name}:default" if self.memory is not None else None
        """The thread of prompts that name none; None (no thread) for an agent without memory."""
        self._carries_rejections = bool(output_guardrails)
        self.store: EventStore = built.store
        self._owns_store = store is None or isinstance(store, str)
        self._owns_model = isinstance(model, str)
        self.input_guardrails = tuple(input_guardrails)
        self._driver = RunDriver(built.config, self.store, self.memory, built.output, built.config_digest)
        self._driver.engine = open_engine(engine) if isinstance(engine, str) else engine

    @property
    def decide_config(self) -> DecideConfig:
        return self._driver.config.decide

    # -- prompting -------------------------------------------------------------------------

    async def prompt(
        self,
        input: str,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        cancel: CancellationToken | None = None,
        wait: bool = True,
    ) -> AgentResponse:
        """Run the agent on `input` until it answers, fails, or waits for a human.

        Args:
            thread_id: the conversation this prompt continues; memory supplies its history.
                Without one the agent's own default thread is used, shared by every prompt
                that names none (none at all for `Agent(memory=None)`). A thread runs one
                prompt at a time: a second one waits, or raises `LeaseHeld` when `wait=False`.
            run_id: the id to give the run (a fresh one when None).
            cancel: a token that stops the run at its next check.

        Raises:
            TypeError: `input` is not a str (nothing is journaled).
            GuardrailBlocked: an input guardrail refused `input` (nothing is journaled).
            MaxIterations, Cancelled, BudgetExceeded, OutputRejected, RunFailedError: the run
                ended without an answer; `error.run_id` names its journal.
        """
        keeper, journal = await self._begin(input, thread_id, run_id, wait)
        try:
            await self._driver.run(journal, cancel)
        finally:
            await keeper.release()
        return self._driver.respond(journal)

    async def prompt_stream(
        self,
        input: str,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        cancel: CancellationToken | None = None,
        wait: bool = True,
    ) -> AsyncIterator[StreamEvent]:
        """The same run as `prompt`, yielding text and tool-call deltas, tool results, usage
        per iteration and `Done`. A run that ends badly yields `Error` before `Done`."""
        keeper, journal = await self._begin(input, thread_id, run_id, wait)
        try:
            async for event in self._driver.drive(journal, cancel, stream_model=True):
                yield event
        finally:
            await keeper.release()

    async def prompt_with_cancellation(self, input: str, cancel: CancellationToken) -> AgentResponse:
        return await self.prompt(input, cancel=cancel)

    async def prompt_with_messages(
        self, messages: Sequence[Message], *, run_id: str | None = None, cancel: CancellationToken | None = None
    ) -> AgentResponse:
        """Run on a conversation you assembled yourself: memory and input guardrails are bypassed."""
        checked = check_messages(messages)
        if not checked:
            raise InvalidOperation("prompt_with_messages needs at least one message")
        journal = self._driver.start(
            checked, input=messages[-1].content, thread_id=None, run_id=run_id, uses_memory=False
        )
        await self._driver.run(journal, cancel)
        return self._driver.respond(journal)

    def prompt_sync(self, input: str, **options: Any) -> AgentResponse:
        """`prompt` for code that is not async. Not for use inside a running event loop."""
        check_input(input)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.prompt(input, **options))
        raise EudaimonError("prompt_sync was called inside a running event loop; use `await agent.prompt(...)`")

    async def _begin(
        self, input: str, thread_id: str | None, run_id: str | None, wait: bool
    ) -> tuple[LeaseKeeper | _NoThread, RunJournal]:
        """One prompt's start: guardrails, then, holding the thread, history and `run_started`.

        The caller drives the run and then releases the thread's lease returned.
        """
        text = check_input(input)
        if self.input_guardrails:
            text = await run_input_guardrails(self.input_guardrails, text)
        thread = thread_id or self.default_thread
        keeper: LeaseKeeper | _NoThread = _NoThread()
        if thread is not None:
            keeper = await hold_thread(self.store, thread, wait=wait, ttl_s=self._driver.lease_ttl_s)
        try:
            history = await self.memory.get_messages(thread_id) if self.memory is not None else []
            carried = 0
            if self._carries_rejections and thread is not None:
                carried = (await thread_state(self.store, thread)).guardrail_retries
            # Ids given here, at construction, spare `start` a copy of each message to give one.
            system = [Message.system(self.system_prompt, id=new_message_id())] if self.system_prompt else []
            journal = self._driver.start(
                [*system, *history, Message.user(text, id=new_message_id())],
                input=text,
                thread_id=thread,
                run_id=run_id,
                memory_thread=thread_id,
                guardrail_retries=carried,
            )
        except BaseException:
            await keeper.release()
            raise
        return keeper, journal

    async def thread(self, thread_id: str | None = None) -> ThreadState:
        """The thread's snapshot: turns, usage, consecutive guardrail rejections, cost.

        Raises:
            InvalidOperation: no `thread_id` for an agent without memory, which has no default thread.
        """
        thread = thread_id or self.default_thread
        if thread is None:
            raise InvalidOperation("this agent has no memory, so no default thread; name the thread: thread(thread_id)")
        return await thread_state(self.store, thread)

    # -- durable operations --------------------------------------------------------------

    async def state(self, run_id: str, at_seq: int | None = None) -> RunState:
        """The run's state after event `at_seq` (the latest when None). Raises `RunNotFound`."""
        return await operations.load_state(self.store, run_id, at_seq)

    async def resume(self, run_id: str, *, cancel: CancellationToken | None = None, wait: bool = True) -> AgentResponse:
        """Continue a run from its journal: after a crash, an approval or a reconciliation.

        Completed calls are never executed again. A call started but not completed runs again
        (same idempotency key) only if its tool is READ or idempotent; otherwise the run waits
        for `reconcile`. If another process drives the run, this waits for its lease to lapse
        (or raises `LeaseHeld` when `wait=False`).
        """
        journal = await self._driver.reopen(run_id)
        await self._driver.run(journal, cancel, wait=wait)
        return self._driver.respond(journal)

    async def approve(
        self, run_id: str, call_id: str, approved: bool = True, *, by: str | None = None, note: str | None = None
    ) -> RunState:
        """Record a human's decision on a call awaiting approval; `resume` then acts on it.

        Raises:
            InvalidOperation: the call is unknown, already decided, or not awaiting approval.
        """
        return await operations.approve(self.store, run_id, call_id, approved, by=by, note=note)

    async def reconcile(
        self, run_id: str, call_id: str, *, output: str | None = None, retry: bool = False, by: str | None = None
    ) -> RunState:
        """Settle a call whose outcome is unknown: give the `output` it had, or `retry=True`."""
        return await operations.reconcile(self.store, run_id, call_id, output=output, retry=retry, by=by)

    async def fork(self, run_id: str, at_seq: int) -> str:
        """A new run whose history is this run's up to `at_seq`; `resume` it to continue live."""
        return await operations.fork(self.store, run_id, at_seq)

    async def aclose(self) -> None:
        """Close what the agent opened itself: a store it built from a URL, a model from a string."""
        if self._owns_store:
            await self.store.close()
        if self._owns_model:
            close = getattr(self.model, "aclose", None)
            if close is not None:
                await close()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, model={self.model.model_id!r}, tools={sorted(self.tools)!r})"
