"""`eudaimon runs show` makes the tree of runs visible: a parent lists the child runs its calls
started, a child names its parent, and a call a child waits for is decided on the parent."""

from __future__ import annotations

import asyncio

from cli_support import Invoke

from eudaimon import Agent, tool
from eudaimon.core.messages import Message, ToolCall
from eudaimon.models import ScriptedModel

sent: list[str] = []


@tool(effect="irreversible")
def send_money(to: str) -> str:
    """Send money."""
    sent.append(to)
    return f"sent to {to}"


def _pause_a_tree(store_url: str) -> str:
    async def go() -> str:
        child = Agent(
            ScriptedModel([Message.assistant(None, [ToolCall("k1", "send_money", {"to": "bob"})]), "paid"]),
            name="payer",
            tools=[send_money],
        )
        parent = Agent(
            ScriptedModel([Message.assistant(None, [ToolCall("c1", "payer", {"input": "pay bob"})]), "done"]),
            name="boss",
            tools=[child.as_tool()],
            store=store_url,
        )
        async with parent:
            response = await parent.prompt("pay bob")
        return response.run_id

    return asyncio.run(go())


def test_a_paused_tree_shows_children_and_the_call_to_decide_on_the_parent(cli: Invoke, store_url: str) -> None:
    """Invariant: the parent's `runs show` lists its child run (agent, status, the call that
    started it) and the child's call awaiting approval, with the command to approve it on the parent;
    that command continues the tree."""
    parent_id = _pause_a_tree(store_url)
    child_id = f"{parent_id}.c1"
    shown = cli("runs", "show", parent_id, "--store", store_url)
    assert shown.exit_code == 0, shown.output
    assert child_id in shown.output and "payer" in shown.output and "via call c1" in shown.output
    assert "awaiting approval: k1 send_money" in shown.output
    assert f"eudaimon runs approve {parent_id} k1" in shown.output

    child = cli("runs", "show", child_id, "--store", store_url)
    assert f"child of {parent_id} (agent 'boss', call c1)" in child.output

    approved = cli("runs", "approve", parent_id, "k1", "--store", store_url)
    assert approved.exit_code == 0, approved.output
    events = cli("runs", "events", parent_id, "--store", store_url)
    assert "decided in its child run" in events.output or "approved" in events.output
