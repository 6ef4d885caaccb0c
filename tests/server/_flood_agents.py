"""The agent three servers serve in the flood test: each run makes one WRITE, logged to a ledger.

`flood`: the model asks for `charge` once, then answers. `charge` appends the run's id and the
call's idempotency key to `$FLOOD_LEDGER` (one fsynced line per execution) before it returns,
so a test can count what really ran. The journal is the PostgreSQL schema `$FLOOD_PG_SCHEMA`.
"""

from __future__ import annotations

import asyncio
import json
import os

from eudaimon import Agent, Effect, Message, ToolCall, ToolContext, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores.postgres import PostgresStore

DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


@tool(effect=Effect.WRITE)
def charge(amount: int, ctx: ToolContext) -> str:
    """Charge an amount."""
    line = json.dumps({"run": ctx.run_id, "key": ctx.idempotency_key, "pid": os.getpid()})
    fd = os.open(os.environ["FLOOD_LEDGER"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return f"charged {amount}"


async def _answer(request: ChatRequest) -> Message:
    await asyncio.sleep(0.02)
    if not any(m.role == "tool" for m in request.messages):
        return Message.assistant(tool_calls=[ToolCall("c0", "charge", {"amount": 5})])
    return Message.assistant("charged")


flood = Agent(
    FunctionModel(_answer, "flood-model"),
    tools=[charge],
    name="flood",
    memory=None,
    store=PostgresStore(DSN, schema=os.environ.get("FLOOD_PG_SCHEMA", "eudaimon_flood")),
)
