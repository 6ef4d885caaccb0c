"""Starting a prompt's run: the checks, input guardrails, toolsets listed, then, holding the
thread's lease, the history, the rendered instructions and `run_started`.

Nothing is journaled until every check has passed, so a refused prompt leaves no trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eudaimon.agent._faces import StartingAgent
from eudaimon.agent._input import (
    PromptInput,
    UserInput,
    check_deps,
    check_history,
    check_input,
)
from eudaimon.agent.agent_runtime import AgentRuntime
from eudaimon.core.events import ToolRecord
from eudaimon.core.messages import Message
from eudaimon.core.settings import ModelSettings
from eudaimon.core.state import RunState
from eudaimon.extensions.guardrails import run_input_guardrails
from eudaimon.runtime.loop.clock import new_message_id, new_run_id
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.leases import NO_LEASES, HeldLeases
from eudaimon.runtime.process.threads import thread_state
from eudaimon.tools import ToolContext


@dataclass(frozen=True, slots=True)
class Started:
    """A run ready to be driven: its journal, the config with its toolsets' tools (None: the
    agent's own), and the leases taken for it (the driver gives them up: `RunDriver.drive`).
    Whoever yields it gives them up once the run has been driven, in case the driver never
    took them over (a second release does nothing)."""

    journal: RunJournal
    config: RuntimeConfig | None
    leases: HeldLeases = NO_LEASES


async def begin_prompt(
    agent: StartingAgent,
    runtime: AgentRuntime,
    input: PromptInput,
    thread_id: str | None,
    run_id: str | None,
    wait: bool,
    deps: Any,
    model_settings: ModelSettings | None,
    message_history: Sequence[Message] | None,
) -> Started:
    """One prompt's start: checks, guardrails, toolsets listed, then, holding the thread,
    history and `run_started`.

    A prompt on a thread takes the run's own lease with the thread's, in one round trip to the
    store (`RunDriver.start_leases`); the driver then gives both up together: a run of a thread
    costs the store no more round trips than a run of none. The caller (`agent`, handing its
    `runtime`) drives the run and then gives up what the driver has not.
    """
    user = check_input(input)
    history_given = check_history(message_history) if message_history is not None else None
    check_deps(agent.name, agent.deps_type, deps, "prompt(...)")
    runtime.check_run_settings(model_settings)
    run_id = run_id or new_run_id()
    if agent.input_guardrails:
        ctx: ToolContext[Any] = ToolContext(run_id, "", "", 0, deps, 0)
        user = user.with_text(await run_input_guardrails(agent.input_guardrails, user.text, ctx))
    records, config = await runtime.fresh_tools()
    thread = thread_id or agent.default_thread
    leases = runtime.start_leases(run_id, thread)
    await leases.acquire(wait=wait)
    try:
        journal = await assemble(
            agent,
            runtime,
            user,
            run_id=run_id,
            thread=thread,
            memory_thread=thread_id,
            history_given=history_given,
            deps=deps,
            model_settings=model_settings,
            tools=records,
        )
    except BaseException:
        await leases.release()
        raise
    return Started(journal, config, leases)


async def assemble(
    agent: StartingAgent,
    runtime: AgentRuntime,
    user: UserInput,
    *,
    run_id: str,
    thread: str | None,
    memory_thread: str | None,
    history_given: list[Message] | None,
    deps: Any,
    model_settings: ModelSettings | None,
    tools: tuple[ToolRecord, ...],
    queued: RunState | None = None,
) -> RunJournal:
    """A run's `run_started`, recorded (not yet committed): its history from memory (or the
    caller), the thread's guardrail streak and the rendered instructions. The caller holds the
    thread's lease: these depend on the thread's earlier runs. A `queued` run's journal goes on
    from its `run_queued`."""
    if history_given is not None:
        history = history_given
    else:
        history = await agent.memory.get_messages(memory_thread) if agent.memory is not None else []
    carried = 0
    if runtime.carries_rejections and thread is not None:
        carried = (await thread_state(agent.store, thread)).guardrail_retries
    system = await runtime.render_instructions(run_id, deps)
    # Ids given here, at construction, spare `start` a copy of each message to give one.
    first = [Message.system(system, id=new_message_id())] if system else []
    return runtime.start(
        [*first, *history, user.message(new_message_id())],
        input=user.text,
        thread_id=thread,
        run_id=run_id,
        uses_memory=history_given is None,
        memory_thread=memory_thread,
        guardrail_retries=carried,
        model_settings=model_settings,
        deps=deps,
        tools=tools,
        queued=queued,
    )
