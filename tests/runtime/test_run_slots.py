"""Invariant: run slots are handed out first come, first served, and a waiter that gives up
(cancelled) never keeps a slot from the others.

The slots replaced `asyncio.Semaphore`, whose release on Python 3.11 scans the waiters already
woken; these pin the behaviour the replacement must keep (`runtime/process/admission.py`)."""

from __future__ import annotations

import asyncio

from eudaimon.runtime.process.admission import RunSlots


async def _holder(slots: RunSlots, name: str, order: list[str], release: asyncio.Event) -> None:
    await slots.take()
    order.append(name)
    try:
        await release.wait()
    finally:
        slots.give()


async def test_slots_go_to_waiters_in_the_order_they_came() -> None:
    slots = RunSlots(2)
    order: list[str] = []
    gates = {name: asyncio.Event() for name in "abcdef"}
    tasks = [asyncio.create_task(_holder(slots, name, order, gates[name])) for name in "abcdef"]
    await asyncio.sleep(0)
    assert order == ["a", "b"] and slots.waiting == 4
    for name in "abcdef":
        gates[name].set()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)
    assert order == list("abcdef")
    assert slots.free == 2 and slots.waiting == 0


async def test_a_cancelled_waiter_takes_no_slot() -> None:
    slots = RunSlots(1)
    await slots.take()
    gone = asyncio.create_task(slots.take())
    after = asyncio.create_task(slots.take())
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.sleep(0)
    slots.give()  # must go to `after`, skipping the cancelled waiter
    await asyncio.wait_for(after, timeout=1)
    assert gone.cancelled() and slots.free == 0
    slots.give()
    assert slots.free == 1


async def test_a_waiter_cancelled_after_being_handed_a_slot_passes_it_on() -> None:
    slots = RunSlots(1)
    await slots.take()
    first = asyncio.create_task(slots.take())
    second = asyncio.create_task(slots.take())
    await asyncio.sleep(0)
    slots.give()  # handed to `first`, which has not run yet
    first.cancel()  # cancelled before it ran: the slot must reach `second`
    await asyncio.wait_for(second, timeout=1)
    assert first.cancelled() and slots.free == 0 and slots.waiting == 0
