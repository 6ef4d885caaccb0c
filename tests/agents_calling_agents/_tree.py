"""A parent agent whose child agent runs a WRITE tool, for the kill -9 test and its worker.

The tool appends a line to a ledger file (fsync'ed, outside eudaimon: what really ran) and
then sleeps `EUDAIMON_TEST_WRITE_SLEEP_S`, so a test can kill the process mid-tool. The models
are functions of the request, so a resumed process asks for the very same calls.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from eudaimon import Agent, ToolContext, tool
from eudaimon.core.messages import Message, Role, ToolCall
from eudaimon.models import ChatRequest, FunctionModel


def ledger_lines(ledger: Path) -> list[dict[str, str]]:
    if not ledger.exists():
        return []
    return [json.loads(line) for line in ledger.read_text().splitlines() if line.strip()]


def build(store: str, ledger: Path) -> Agent:
    @tool
    async def write_record(text: str, ctx: ToolContext) -> str:
        """Write a record (a plain WRITE: never run twice)."""
        fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (json.dumps({"text": text, "key": ctx.idempotency_key, "pid": os.getpid()}) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        await asyncio.sleep(float(os.environ.get("EUDAIMON_TEST_WRITE_SLEEP_S", "0")))
        return f"wrote {text}"

    def child_model(request: ChatRequest) -> Message:
        last = request.messages[-1]
        if last.role is Role.USER:
            return Message.assistant(None, [ToolCall("w1", "write_record", {"text": last.content})])
        return Message.assistant(f"recorded: {last.content}")

    def parent_model(request: ChatRequest) -> Message:
        last = request.messages[-1]
        if last.role is Role.USER:
            return Message.assistant(None, [ToolCall("c1", "clerk", {"input": "invoice 7"})])
        return Message.assistant(f"the clerk says: {last.content}")

    clerk = Agent(FunctionModel(child_model), name="clerk", tools=[write_record])
    return Agent(FunctionModel(parent_model), name="boss", tools=[clerk.as_tool()], store=store)
