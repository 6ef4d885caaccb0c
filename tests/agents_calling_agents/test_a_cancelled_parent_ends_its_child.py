"""Invariant: cancelling a run cancels the child runs its calls started (agents used as tools):
each child's journal ends with `run_cancelled`, naming who cancelled and why, instead of
staying `running` with nobody driving it. That holds wherever the child was: waiting for its
model, or running tools of its own."""

from __future__ import annotations

import asyncio

import pytest

from eudaimon import Agent, tool
from eudaimon.core.errors import Cancelled
from eudaimon.core.events import RunCancelled
from eudaimon.core.messages import Message, ToolCall
from eudaimon.models import ChatRequest, FunctionModel, ScriptedModel
from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.stores import MemoryStore

PARENT = "parent-run"
CHILD = f"{PARENT}.c1"  # `child_run_id`: the parent's run and call


def _parent(child: Agent, store: MemoryStore) -> Agent:
    ask = Message.assistant(None, [ToolCall("c1", "researcher", {"input": "dig"})])
    return Agent(ScriptedModel([ask, "never reached"]), tools=[child.as_tool()], store=store)


async def _cancel_when(reached: asyncio.Event, token: CancellationToken) -> None:
    await reached.wait()
    token.cancel("the operator stopped it", by="alice")


async def _run_and_cancel(parent: Agent, reached: asyncio.Event) -> None:
    token = CancellationToken()
    canceller = asyncio.create_task(_cancel_when(reached, token))
    with pytest.raises(Cancelled):
        await asyncio.wait_for(parent.prompt("go", run_id=PARENT, cancel=token), timeout=30)
    await canceller


async def _last_event(store: MemoryStore, run_id: str) -> object:
    return (await store.load(run_id))[-1].data


async def test_a_child_waiting_for_its_model_ends_cancelled() -> None:
    reached = asyncio.Event()

    async def slow_model(request: ChatRequest) -> Message:
        reached.set()
        await asyncio.Event().wait()  # a model that never answers
        raise AssertionError("unreachable")

    store = MemoryStore()
    child = Agent(FunctionModel(slow_model), name="researcher", store=store, memory=None)
    await _run_and_cancel(_parent(child, store), reached)

    ended = await _last_event(store, CHILD)
    assert isinstance(ended, RunCancelled), ended
    assert (ended.reason, ended.by) == ("the operator stopped it", "alice")
    assert isinstance(await _last_event(store, PARENT), RunCancelled)


async def test_a_child_running_its_own_tools_ends_cancelled() -> None:
    reached = asyncio.Event()

    @tool(effect="read")
    async def search(query: str) -> str:
        """Search for `query`.

        Args:
            query: What to look for.
        """
        reached.set()
        await asyncio.Event().wait()  # a search that never returns
        return "unreachable"

    look = Message.assistant(None, [ToolCall("s1", "search", {"query": "x"}), ToolCall("s2", "search", {"query": "y"})])
    store = MemoryStore()
    child = Agent(ScriptedModel([look, "found"]), name="researcher", tools=[search], store=store, memory=None)
    await _run_and_cancel(_parent(child, store), reached)

    ended = await _last_event(store, CHILD)
    assert isinstance(ended, RunCancelled), ended
    assert ended.by == "alice"
    state = await child.state(CHILD)
    assert state.status.value == "cancelled"
