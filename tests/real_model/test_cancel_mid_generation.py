"""A cancel mid-generation through the real server: the run ends cancelled, the server stops.

Bug (issue 26): a cancel during a model call answered 200 while llama-server went on
generating (6,000+ tokens). Here the run streams a long answer (a `max_tokens` no answer
reaches soon), is cancelled after a few deltas, and llama-server's `/slots` shows it stopped
working on that request: it stops generating when its client goes.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from typing import Any

from eudaimon import Agent, CancellationToken
from eudaimon.core.events import RunCancelled
from eudaimon.models.registry import infer_model
from eudaimon.stores import MemoryStore
from eudaimon.streaming import Done, TextDelta

MAX_TOKENS = 1999
"""Big, and odd enough to pick this test's request out of `/slots` on a shared server."""
WAIT_S = 120.0
"""The server serves one request at a time, others' included: ours may wait its turn."""


def _slots(port: int) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/slots", timeout=5) as reply:
        slots: list[dict[str, Any]] = json.loads(reply.read())
        return slots


def _our_task(port: int) -> int | None:
    """The id of the task generating this test's request, while one does."""
    for slot in _slots(port):
        if slot.get("is_processing") and slot.get("params", {}).get("n_predict") == MAX_TOKENS:
            return int(slot["id_task"])
    return None


def _still_on(port: int, task: int) -> bool:
    return any(s.get("is_processing") and s.get("id_task") == task for s in _slots(port))


async def test_a_cancel_mid_generation_stops_the_real_server(real_model):
    """Cancelled after a few deltas of a long answer: `run_cancelled` with who and why, and the
    server's slot leaves the request (it would otherwise generate up to 1,999 tokens)."""
    store = MemoryStore()
    model = infer_model(real_model.model_string, base_url=real_model.base_url)
    agent = Agent(model, store=store, memory=None, max_tokens=MAX_TOKENS, temperature=0.8)
    token = CancellationToken()
    deltas = 0
    task: int | None = None
    status = ""
    began = cancelled_at = time.monotonic()
    after_cancel = 0
    async for event in agent.prompt_stream(
        "Write a very long story about a lighthouse keeper, chapter after chapter.", run_id="long", cancel=token
    ):
        if isinstance(event, TextDelta):
            deltas += 1
            if token.is_cancelled:
                after_cancel += 1  # the few already on their way; a cancel that is not heard gets many
                assert after_cancel < 50, "the generation went on after the cancel"
                continue
            if task is None:
                task = await asyncio.to_thread(_our_task, real_model.port)
            if deltas >= 5 and (task is not None or deltas >= 40):
                token.cancel("enough of that", by="tester")
                cancelled_at = time.monotonic()
        elif isinstance(event, Done):
            status = event.status
        assert time.monotonic() - began < WAIT_S, "the run never got to its cancel"
    assert status == "cancelled"
    assert (await store.load("long"))[-1].data == RunCancelled(reason="enough of that", by="tester")
    assert task is not None, "the request was seen generating in /slots"
    while await asyncio.to_thread(_still_on, real_model.port, task):
        assert time.monotonic() - cancelled_at < 30, "the server went on generating after the cancel"
        await asyncio.sleep(0.05)
    freed_s = time.monotonic() - cancelled_at
    print(
        f"\nreal model: cancelled after {deltas - after_cancel} deltas, {after_cancel} after; slot free in {freed_s:.3f} s"
    )
    await agent.aclose()
