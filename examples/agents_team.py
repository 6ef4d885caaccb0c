"""Agents calling agents: an agent used as a tool, and a handoff. Runs offline.

- `researcher.as_tool()` is a tool of `writer`: each call is a child run journaled in the
  writer's store and linked both ways; its usage is added to the writer's.
- `triage` hands the conversation to `billing` (`transfer_to_billing`): billing continues
  with the history, its own tools and instructions; its answer ends triage's run.

    python examples/agents_team.py
    eudaimon runs show RUN_ID --store sqlite:///agents_example.db    # the tree of runs
"""

from __future__ import annotations

import asyncio

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ScriptedModel

STORE = "sqlite:///agents_example.db"


@tool(effect="read")
def invoice_total(invoice: str) -> str:
    """The total of an invoice."""
    return f"{invoice}: 120 EUR"


async def main() -> None:
    researcher = Agent(ScriptedModel(["Durable execution means every step is journaled."]), name="researcher")
    writer = Agent(
        ScriptedModel(
            [
                Message.assistant(None, [ToolCall("c1", "researcher", {"input": "What is durable execution?"})]),
                "Durable execution: every step is journaled, so a crash loses nothing.",
            ]
        ),
        name="writer",
        tools=[researcher.as_tool(description="Ask the researcher a question.")],
        store=STORE,
    )
    async with writer:
        response = await writer.prompt("Write one line on durable execution.")
        print(f"writer ({response.run_id}): {response.final_text}")
        state = await writer.state(response.run_id)
        print("  child runs:", state.children)

    billing = Agent(
        ScriptedModel(
            [
                Message.assistant(None, [ToolCall("b1", "invoice_total", {"invoice": "INV-7"})]),
                "INV-7 comes to 120 EUR.",
            ]
        ),
        name="billing",
        system_prompt="You answer billing questions.",
        tools=[invoice_total],
    )
    triage = Agent(
        ScriptedModel([Message.assistant(None, [ToolCall("t1", "transfer_to_billing", {})])]),
        name="triage",
        system_prompt="You route questions to the right agent.",
        handoffs=[billing],
        store=STORE,
    )
    async with triage:
        response = await triage.prompt("How much is invoice INV-7?")
        state = await triage.state(response.run_id)
        print(f"triage ({response.run_id}): {response.final_text}  [handed off to run {state.handed_off_to}]")


if __name__ == "__main__":
    asyncio.run(main())
