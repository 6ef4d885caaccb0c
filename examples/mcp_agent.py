"""An agent whose tools come from an MCP server, with effects you can trust. Runs offline.

`examples/mcp_server.py` is started over stdio. Trusted, its annotations decide: `read_note`
is READ, `save_note` an idempotent WRITE, `delete_all_notes` IRREVERSIBLE, so the run waits
for a human before deleting. The tool list is journaled with the run: resumed after the
approval (or days later, against an upgraded server), it calls the same tools with the same
effect classes. The model is scripted; use `model="openai:gpt-4o-mini"` for a real one.

    python examples/mcp_agent.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from eudaimon import Agent, Message, ToolCall
from eudaimon.mcp import MCPTools
from eudaimon.models import ScriptedModel

SERVER = str(Path(__file__).with_name("mcp_server.py"))


async def main() -> None:
    model = ScriptedModel(
        [
            Message.assistant(None, [ToolCall("c1", "notes_save_note", {"title": "todo", "text": "buy milk"})]),
            Message.assistant(None, [ToolCall("c2", "notes_read_note", {"title": "todo"})]),
            Message.assistant(None, [ToolCall("c3", "notes_delete_all_notes", {})]),
            "Saved, read back (buy milk) and, with your approval, deleted all notes.",
        ]
    )
    notes = MCPTools(command=[sys.executable, SERVER], trusted=True, prefix="notes")
    async with Agent(model, tools=[notes], store="sqlite:///mcp_example.db") as agent:
        response = await agent.prompt("Save a todo, read it back, then clear everything.")
        print("status:", response.status, "| waiting for:", [c.name for c in response.pending_approvals])
        for record in (await agent.state(response.run_id)).tools:
            print(f"  journaled tool {record.name}: {record.effect}{' (idempotent)' if record.idempotent else ''}")
        await agent.approve(response.run_id, "c3", by="you")
        response = await agent.resume(response.run_id)
        print("status:", response.status, "|", response.final_text)


if __name__ == "__main__":
    asyncio.run(main())
