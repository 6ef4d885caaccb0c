"""An MCP client (the official `mcp` SDK) calling an eudaimon agent as a tool. Runs offline.

The agent is served with `create_app(agent, mcp=True)` (what `eudaimon serve --mcp` does) and
its model is scripted. The client lists the server's tools (one per agent), calls the agent with
an idempotency key and hears its steps as progress, reads the run as a resource, then sends the
same call again, as a client that lost the answer would: it is answered with the same run.

    pip install 'eudaimon[server,mcp]'
    python examples/mcp_client.py
"""

from __future__ import annotations

import asyncio

from _background_server import serving
from mcp import Client

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.mcp import IDEMPOTENCY_META_KEY
from eudaimon.models import ScriptedModel
from eudaimon.server import create_app


@tool(effect="read")
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: shipped on Monday"


agent = Agent(
    ScriptedModel(
        [
            Message.assistant(tool_calls=[ToolCall("c1", "lookup_order", {"order_id": "A-17"})]),
            "Your order A-17 shipped on Monday.",
        ]
    ),
    tools=[lookup_order],
    name="orders",
    description="Answers questions about orders.",
    store="memory:",
)


async def main(url: str) -> None:
    async with Client(f"{url}/mcp") as client:
        for listed in (await client.list_tools()).tools:
            hints = listed.annotations
            print(f"tool {listed.name}: {listed.description} (read-only: {hints.read_only_hint if hints else None})")

        async def progress(done: float, total: float | None, message: str | None) -> None:
            print("  progress:", message)

        meta = {IDEMPOTENCY_META_KEY: "ticket-4711"}
        result = await client.call_tool("orders", {"input": "Where is A-17?"}, progress_callback=progress, meta=meta)
        run = result.structured_content or {}
        print("answer:", run.get("output"), "| run", run.get("run_id"), run.get("status"))
        resource = await client.read_resource(f"eudaimon://runs/{run.get('run_id')}")
        print("resource:", getattr(resource.contents[0], "text", ""))
        again = await client.call_tool("orders", {"input": "Where is A-17?"}, meta=meta)
        print("sent again, the same run:", (again.structured_content or {}).get("run_id") == run.get("run_id"))


if __name__ == "__main__":
    with serving(create_app(agent, mcp=True)) as base:
        asyncio.run(main(base))
