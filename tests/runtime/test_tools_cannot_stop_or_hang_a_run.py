"""A tool can neither end the host process nor hang its run forever.

Bugs: a tool raising `SystemExit` or `KeyboardInterrupt` killed the host (a READ tool doing so
crash-looped on every resume); a tool built from a raw JSON Schema given deeply nested
arguments failed the run with `RecursionError`; a hung tool hung its run forever while its
lease was renewed.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import pytest

from eudaimon import Agent, Effect, Message, Tool, ToolCall, tool
from eudaimon.core.errors import ConfigurationError
from eudaimon.core.events import ToolOutcomeUnknown
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores import MemoryStore


def _calls(name: str, arguments: Any = None) -> FunctionModel:
    """Calls `name` once, then answers with the result it saw."""

    def answer(request: ChatRequest) -> Message | str:
        last = request.messages[-1]
        if last.role == "tool":
            return f"{'error' if last.is_error else 'ok'}: {last.content}"
        return Message.assistant(tool_calls=[ToolCall("c", name, {} if arguments is None else arguments)])

    return FunctionModel(answer)


@tool(effect="read")
async def exits_async() -> str:
    """Exits."""
    raise SystemExit(3)


@tool(effect="read")
def exits_in_a_thread() -> str:
    """Exits from a worker thread."""
    sys.exit("bye")


@tool(effect="write")
async def interrupts() -> str:
    """Raises KeyboardInterrupt."""
    raise KeyboardInterrupt


@pytest.mark.parametrize("stopper", [exits_async, exits_in_a_thread, interrupts], ids=lambda t: t.name)
async def test_a_tool_that_tries_to_stop_the_process_is_an_error_result(stopper: Tool) -> None:
    """Invariant: SystemExit or KeyboardInterrupt raised by a tool (async, or sync in its
    thread) becomes an error result the model sees; the run completes and the host lives; a
    resume of the finished run does not run the tool again (no crash loop)."""
    agent = Agent(_calls(stopper.name), tools=[stopper], store=MemoryStore())
    done = await agent.prompt("go")
    assert done.status == "completed"
    assert done.final_text.startswith("error: ") and "tried to stop the process" in done.final_text
    assert (await agent.resume(done.run_id)).status == "completed"


async def test_a_raw_schema_tool_given_arguments_5000_deep_gets_an_error_result() -> None:
    """Invariant: arguments too deep to parse or check are invalid arguments, shown to the
    model; never a RecursionError that ends the run."""
    raw = Tool(
        name="store",
        description="Store a document.",
        parameters={"type": "object", "properties": {"doc": {"type": "object"}}},
        function=lambda doc: "stored",
        effect=Effect.READ,
    )
    deep = '{"doc": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}"
    done = await Agent(_calls("store", deep), tools=[raw]).prompt("go")
    assert done.status == "completed"
    assert done.final_text.startswith("error: ") and "nested too deeply" in done.final_text


@tool(effect="read", timeout_s=0.05)
async def hangs_reading() -> str:
    """Never answers."""
    await asyncio.sleep(3600)
    return "never"


@tool(effect="write")
async def hangs_writing() -> str:
    """Never answers."""
    await asyncio.sleep(3600)
    return "never"


async def test_a_timed_out_read_is_an_error_result() -> None:
    """Invariant: a READ call that outlives its `timeout_s` is abandoned as an error result;
    the run goes on and completes."""
    done = await Agent(_calls("hangs_reading"), tools=[hangs_reading]).prompt("go")
    assert done.status == "completed"
    assert done.final_text.startswith("error: ") and "timeout_s=0.05" in done.final_text


async def test_a_timed_out_write_is_an_unknown_outcome_awaiting_reconciliation() -> None:
    """Invariant: a WRITE call that outlives the agent-wide `tool_timeout_s` may have acted,
    so it becomes `tool_outcome_unknown` and the run waits for an operator; reconciled, it
    completes."""
    store = MemoryStore()
    agent = Agent(_calls("hangs_writing"), tools=[hangs_writing], store=store, tool_timeout_s=0.05)
    paused = await agent.prompt("go")
    assert paused.status == "awaiting_reconciliation"
    assert any(isinstance(e.data, ToolOutcomeUnknown) for e in await store.load(paused.run_id))
    await agent.reconcile(paused.run_id, "c", output="it did not happen", by="ops")
    done = await agent.resume(paused.run_id)
    assert done.status == "completed" and done.final_text == "ok: it did not happen"


async def test_a_tools_own_timeout_wins_over_the_agents() -> None:
    """Invariant: `@tool(timeout_s=…)` overrides `Agent(tool_timeout_s=…)`, either way."""

    @tool(effect="read", timeout_s=5)
    async def slowish() -> str:
        """Takes a moment."""
        await asyncio.sleep(0.2)
        return "finished"

    done = await Agent(_calls("slowish"), tools=[slowish], tool_timeout_s=0.01).prompt("go")
    assert done.final_text == "ok: finished"


def test_timeouts_must_be_positive() -> None:
    """Invariant: a zero or negative timeout is a configuration error when the agent is built."""
    with pytest.raises(ConfigurationError, match="timeout_s"):
        Agent(_calls("x"), tools=[tool(timeout_s=0)(lambda: "x")])
    with pytest.raises(ConfigurationError, match="tool_timeout_s"):
        Agent(_calls("x"), tool_timeout_s=-1)


def test_a_sync_tool_that_times_out_leaves_the_run_free() -> None:
    """Invariant: a sync tool past its timeout no longer holds its run (its thread finishes
    on its own later; Python cannot stop a thread)."""

    @tool(effect="read", timeout_s=0.05)
    def blocks() -> str:
        """Blocks its thread a while."""
        time.sleep(0.5)
        return "late"

    done = Agent(_calls("blocks"), tools=[blocks]).prompt_sync("go")
    assert done.final_text.startswith("error: ")
