"""Eviction never splits a tool-call group: no orphaned tool result, no unanswered call."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from _memory_backends import WINDOWED, backend_params, open_backend
from hypothesis import given, settings
from hypothesis import strategies as st

from eudaimon.core.groups import estimate_tokens
from eudaimon.core.messages import Message, Role, ToolCall
from eudaimon.memory import Memory, SlidingWindowMemory, SummaryMemory, TokenWindowMemory
from eudaimon.models import ChatRequest, FunctionModel

Group = list[Message]

# A conversation: user and assistant texts, and tool groups (one result length per call).
_ITEM = st.one_of(
    st.tuples(st.just("user"), st.integers(0, 40)),
    st.tuples(st.just("assistant"), st.integers(0, 40)),
    st.tuples(st.just("tools"), st.lists(st.integers(0, 40), min_size=1, max_size=4)),
)
CONVERSATIONS = st.lists(_ITEM, max_size=40)


def build(items: list[tuple[str, object]]) -> list[Group]:
    """The conversation's groups; every message's content starts with its id."""
    groups: list[Group] = []
    n = 0

    def next_id() -> str:
        nonlocal n
        n += 1
        return f"m{n}"

    for kind, size in items:
        if kind == "user":
            mid = next_id()
            groups.append([Message.user(f"{mid} " + "u" * int(str(size)), id=mid)])
        elif kind == "assistant":
            mid = next_id()
            groups.append([Message.assistant(f"{mid} " + "a" * int(str(size)), id=mid)])
        else:
            sizes = list(size) if isinstance(size, list) else []
            head = next_id()
            calls = [ToolCall(f"call_{head}_{j}", "lookup", {"q": j}) for j in range(len(sizes))]
            group = [Message.assistant(head, calls, id=head)]
            for call, length in zip(calls, sizes, strict=True):
                mid = next_id()
                group.append(Message.tool(call.id, f"{mid} " + "r" * length, id=mid))
            groups.append(group)
    return groups


def flatten(groups: list[Group]) -> list[Message]:
    return [m for g in groups for m in g]


def assert_well_formed(messages: list[Message]) -> None:
    """No tool result without its call just before it, no call without its results."""
    open_calls: set[str] = set()
    for message in messages:
        if message.role is Role.TOOL:
            assert message.tool_call_id in open_calls, f"orphaned tool result {message.id}"
            open_calls.discard(message.tool_call_id)
            continue
        assert not open_calls, f"calls {sorted(open_calls)} unanswered before {message.id}"
        open_calls = {c.id for c in message.tool_calls}
    assert not open_calls, f"calls {sorted(open_calls)} unanswered at the end"


def suffix_start(visible: list[Message], complete: list[Group]) -> int:
    """The i with visible == the groups complete[i:], flattened; fails if there is none."""
    for i in range(len(complete) + 1):
        if flatten(complete[i:]) == visible:
            return i
    raise AssertionError(f"not a suffix of whole groups: {[m.id for m in visible]}")


def maximal_start(complete: list[Group], limit: int, weigh: Callable[[Message], int]) -> int:
    """Where the longest suffix of whole groups within `limit` starts (else the last group)."""
    for i in range(len(complete)):
        if sum(weigh(m) for m in flatten(complete[i:])) <= limit:
            return i
    return max(0, len(complete) - 1)


async def feed_and_check(memory: Memory, groups: list[Group], limit: int, weigh: Callable[[Message], int]) -> None:
    """Add every message; after each add, check what `get_messages` returns."""
    complete: list[Group] = []
    for group in groups:
        for count, message in enumerate(group, start=1):
            await memory.add_message(message, "t")
            finished = count == len(group)
            visible = await memory.get_messages("t")
            assert_well_formed(visible)
            done = [*complete, group] if finished else complete
            start = suffix_start(visible, done)
            kept = done[start:]
            assert sum(weigh(m) for m in visible) <= limit or len(kept) == 1, "window over its limit"
            if finished:
                # With no group in progress, the window is exactly the longest suffix that fits.
                assert start == maximal_start(done, limit, weigh)
        complete.append(group)


def _one(_: Message) -> int:
    return 1


@pytest.mark.parametrize("kind", backend_params(WINDOWED))
@settings(max_examples=60, deadline=None)
@given(items=CONVERSATIONS, window=st.integers(1, 12))
def test_windows_return_a_suffix_of_whole_groups(
    kind: str, items: list[tuple[str, object]], window: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Whole groups: for any conversation and window size, after every add, get_messages is a
    suffix of whole groups (no orphaned result, no unanswered call), within the window unless a
    single group is larger, and the longest such suffix once no group is in progress."""
    directory: Path = tmp_path_factory.getbasetemp()

    async def scenario() -> None:
        opened = await open_backend(kind, directory, window=window)
        try:
            await feed_and_check(opened.memory, build(items), window, _one)
        finally:
            await opened.close()

    asyncio.run(scenario())


@settings(max_examples=100, deadline=None)
@given(items=CONVERSATIONS, budget=st.integers(1, 120))
def test_token_window_keeps_whole_groups_within_budget(items: list[tuple[str, object]], budget: int) -> None:
    """Whole groups by tokens: the token window (default ~4 chars/token estimate) is the longest
    suffix of whole groups within the budget, or the newest group alone when it is over."""
    asyncio.run(feed_and_check(TokenWindowMemory(budget), build(items), budget, estimate_tokens))


def _folding_model() -> FunctionModel:
    """Summarises by listing, in order, the ids of everything it was asked to fold."""

    def summarise(request: ChatRequest) -> str:
        return " ".join(re.findall(r"\bm\d+\b", request.messages[-1].content)) or "empty"

    return FunctionModel(summarise)


@settings(max_examples=100, deadline=None)
@given(items=CONVERSATIONS, max_messages=st.integers(2, 10), data=st.data())
def test_summary_memory_loses_nothing_and_keeps_whole_groups(
    items: list[tuple[str, object]], max_messages: int, data: st.DataObject
) -> None:
    """Summary: after every add, the verbatim part is a suffix of whole groups, and the summary's
    ids followed by the verbatim ids (and any group in progress) are exactly the ids added."""
    retain = data.draw(st.integers(0, max_messages - 1))
    memory = SummaryMemory(_folding_model(), max_messages=max_messages, retain_recent=retain)
    groups = build(items)

    async def scenario() -> None:
        added: list[str] = []
        complete: list[Group] = []
        for group in groups:
            for count, message in enumerate(group, start=1):
                await memory.add_message(message)
                added.append(message.id)
                finished = count == len(group)
                got = await memory.get_messages()
                summary = await memory.current_summary()
                if summary is not None:
                    assert got[0].role is Role.SYSTEM and summary in got[0].content
                    got = got[1:]
                assert_well_formed(got)
                done = [*complete, group] if finished else complete
                suffix_start(got, done)
                in_progress = [] if finished else [m.id for m in group[:count]]
                folded = summary.split() if summary and summary != "empty" else []
                assert folded + [m.id for m in got] + in_progress == added
            complete.append(group)

    asyncio.run(scenario())


async def test_a_group_larger_than_the_window_is_kept_whole() -> None:
    """Whole groups: a single group longer than the window is kept entire, not cut."""
    memory = SlidingWindowMemory(2)
    calls = [ToolCall(f"c{i}", "f", {}) for i in range(3)]
    group = [Message.assistant(None, calls, id="a"), *(Message.tool(c.id, "ok", id=f"t{c.id}") for c in calls)]
    await memory.add_message(Message.user("go", id="u"))
    for message in group:
        await memory.add_message(message)
    assert await memory.get_messages() == group


async def test_a_call_awaiting_its_results_is_not_returned() -> None:
    """No unanswered call: an assistant message whose results are not all in yet is held back,
    and appears with its results once they are."""
    memory = SlidingWindowMemory(10)
    ask = Message.user("go", id="u")
    call = Message.assistant(None, [ToolCall("c1", "f", {}), ToolCall("c2", "f", {})], id="a")
    await memory.add_message(ask)
    await memory.add_message(call)
    await memory.add_message(Message.tool("c1", "one", id="t1"))
    assert await memory.get_messages() == [ask]
    await memory.add_message(Message.tool("c2", "two", id="t2"))
    assert [m.id for m in await memory.get_messages()] == ["u", "a", "t1", "t2"]


async def test_a_stray_tool_result_is_never_returned() -> None:
    """No orphaned result: a tool result with no call before it is held, never returned."""
    memory = SlidingWindowMemory(10)
    await memory.add_message(Message.tool("nobody", "stray", id="t"))
    await memory.add_message(Message.user("hi", id="u"))
    assert [m.id for m in await memory.get_messages()] == ["u"]
