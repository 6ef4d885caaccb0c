"""A human's denial reaches the model with who denied the call and why.

Before: the model was told "a human denied the call", never the note the human wrote, so it
could not tell "not today" from "never this payee", and asked again the same way.
"""

from __future__ import annotations

import pytest

from eudaimon import Agent, tool
from eudaimon.core.events import ToolDenied
from eudaimon.stores import MemoryStore
from support.agents import calls_once


def _payer(seen: list[str]) -> Agent:
    @tool(effect="irreversible")
    def send_wire(amount: int) -> str:
        """Send money."""
        raise AssertionError("a denied call never runs")

    return calls_once(send_wire, '{"amount": 900}', call_id="w", then="understood", heard=seen, store=MemoryStore())


@pytest.mark.parametrize(
    ("by", "note", "told"),
    [
        ("alice", "amount over the desk's limit", "denied by alice: amount over the desk's limit"),
        ("alice", None, "denied by alice"),
        (None, "no", "a human denied the call: no"),
        ("bob", "line one\nline two \u202eEMCA", "denied by bob: line one line two \\u202eEMCA"),
    ],
    ids=["who and why", "who", "why", "plain text"],
)
async def test_the_model_is_told_who_denied_and_why(by: str | None, note: str | None, told: str) -> None:
    """Invariant: the tool result the model sees (and `tool_denied.reason`) carries the denier
    and their note, on one line, with control and bidi characters written out, not obeyed."""
    seen: list[str] = []
    agent = _payer(seen)
    paused = await agent.prompt("pay")
    await agent.approve(paused.run_id, "w", False, by=by, note=note)

    done = await agent.resume(paused.run_id)

    assert done.status == "completed"
    assert seen == [f"Tool call denied: {told}"]
    [denied] = [e.data for e in await agent.store.load(paused.run_id) if isinstance(e.data, ToolDenied)]
    assert denied.reason == told
