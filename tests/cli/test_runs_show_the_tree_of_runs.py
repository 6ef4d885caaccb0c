"""`eudaimon runs show` makes the tree of runs visible: a parent lists the child runs its calls
started, a child names its parent, and a call a child waits for is decided on the parent."""

from __future__ import annotations

import asyncio

from cli_support import Invoke

from eudaimon import Agent, AgentResponse, tool
from eudaimon.core.messages import Message, ToolCall
from eudaimon.models import ScriptedModel

sent: list[str] = []


@tool(effect="irreversible")
def send_money(to: str) -> str:
    """Send money."""
    sent.append(to)
    return f"sent to {to}"


def _pause_a_tree(store_url: str, arguments: dict[str, object] | str | None = None) -> AgentResponse[str]:
    """A parent whose child run waits for approval of `send_money`, called with `arguments`
    (as a provider sends them: a string of JSON, here with a line break in it)."""

    async def go() -> AgentResponse[str]:
        call = ToolCall("k1", "send_money", {"to": "bob"} if arguments is None else arguments)
        child = Agent(
            ScriptedModel([Message.assistant(None, [call]), "paid"]),
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
            return await parent.prompt("pay bob")

    return asyncio.run(go())


def test_a_paused_tree_shows_children_and_the_call_to_decide_on_the_parent(cli: Invoke, store_url: str) -> None:
    """Invariant: the parent's `runs show` lists its child run (agent, status, the call that
    started it) and the child's call awaiting approval, with the command to approve it on the parent;
    that command continues the tree."""
    parent_id = _pause_a_tree(store_url).run_id
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


def test_a_call_awaiting_approval_is_shown_as_the_tool_would_get_it(cli: Invoke, store_url: str) -> None:
    """Invariant: what a human is asked to approve is the object the tool would run with, on one
    line, wherever it is shown (the parent's response, `runs show`), not the model's raw text;
    and the command that approves it is one line even at 80 columns (a wrapped command, copied,
    runs without its `--store`)."""
    raw = '{\n  "to": "bob"}'
    response = _pause_a_tree(store_url, raw)
    assert [call.arguments for call in response.pending_approvals] == [{"to": "bob"}]
    shown = cli("runs", "show", response.run_id, "--store", store_url, env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    assert 'awaiting approval: k1 send_money({"to": "bob"})' in shown.output
    assert f"  eudaimon runs approve {response.run_id} k1 --store {store_url}\n" in shown.output
    child = cli("runs", "show", f"{response.run_id}.c1", "--store", store_url)
    assert '→ send_money({"to": "bob"})' in child.output  # the conversation, as the model asked
