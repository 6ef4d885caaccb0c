"""Invariant: runs share their event loop. Steps run back to back for at most a slice of time
(`runtime/loop/turns.py`); then the loop's due timers and other callbacks go first, whatever the
number of runs ready. A step that waits for its turn and is cancelled gives its place up.

Timing is not asserted: each model call spins for a millisecond of the same clock the slices
are measured by, so the tests count how many calls ran before a timer fired, which holds on a
loaded machine as on an idle one.
"""

from __future__ import annotations

import asyncio
import time

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.runtime.loop.turns import SLICE_S, take_turn
from eudaimon.stores import MemoryStore

SPIN_S = 0.001
CALLS_PER_SLICE = round(SLICE_S / SPIN_S)


def _spin() -> None:
    """A millisecond of CPU, as converting a long provider response might take."""
    until = time.perf_counter() + SPIN_S
    while time.perf_counter() < until:
        pass


def _agent(calls: list[int], steps: int) -> Agent:
    @tool(effect="read")
    async def look(i: int) -> int:
        """Look `i` up.

        Args:
            i: Any integer.
        """
        return i

    async def model(request: ChatRequest) -> Message:
        _spin()  # no await: without turns, a ready run would never let the loop go
        calls.append(1)
        done = sum(1 for m in request.messages if m.role.value == "tool")
        if done + 1 >= steps:
            return Message.assistant("done")
        return Message.assistant(tool_calls=[ToolCall(f"c{done}", "look", {"i": done})])

    return Agent(FunctionModel(model), tools=[look], store=MemoryStore(), memory=None)


async def _calls_before_timer(runs: int, steps: int) -> tuple[int, int]:
    calls: list[int] = []
    agent = _agent(calls, steps)
    seen: list[int] = []
    loop = asyncio.get_running_loop()
    loop.call_later(SPIN_S, lambda: seen.append(len(calls)))
    answers = await asyncio.gather(*(agent.prompt(f"q{i}", thread_id=f"t{i}") for i in range(runs)))
    assert all(a.final_text == "done" for a in answers)
    assert seen, "the timer never fired"
    return seen[0], len(calls)


async def test_a_timer_fires_while_many_runs_are_ready() -> None:
    before, total = await _calls_before_timer(runs=60, steps=1)
    assert total == 60
    # All 60 runs are ready in the loop's first turn; the timer comes due after one call.
    assert before <= 4 * CALLS_PER_SLICE, f"{before} of {total} model calls ran before a due timer"


async def test_one_run_that_never_waits_still_lets_timers_run() -> None:
    before, total = await _calls_before_timer(runs=1, steps=20)
    assert total == 20
    assert before <= 4 * CALLS_PER_SLICE, f"{before} of {total} model calls ran before a due timer"


async def test_a_cancelled_waiter_gives_its_place_up() -> None:
    order: list[str] = []

    async def step(name: str) -> None:
        await take_turn()
        order.append(name)

    await take_turn()  # this task's slice begins
    tasks = {name: asyncio.create_task(step(name)) for name in "abc"}  # ready, not yet run
    until = asyncio.get_running_loop().time() + 3 * SLICE_S
    while asyncio.get_running_loop().time() < until:  # the slice is spent, and the loop has not turned
        pass
    await take_turn()  # first in line: a, b and c arrive behind this task
    assert order == []
    tasks["b"].cancel()
    done = await asyncio.wait_for(asyncio.gather(*tasks.values(), return_exceptions=True), timeout=10)
    assert isinstance(done[1], asyncio.CancelledError)
    assert order == ["a", "c"]
