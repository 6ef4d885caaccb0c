"""The agent a datasource test fleet serves: `datasource_agent:make_shop`.

Its one tool inserts a row into the table `$SHOP_TABLE` of the datasource `$SHOP_URL` (a SQLite
file), through `ctx.db`, in the transaction the worker commits with the call's record.
"""

from __future__ import annotations

import os
from typing import Any

from eudaimon import Agent, Datasource, Message, ToolCall, ToolContext, tool
from eudaimon.models import ChatRequest, FunctionModel


@tool(datasource="shop")
def place(sku: str, ctx: ToolContext) -> str:
    """Place an order."""
    ctx.db.execute(f"INSERT INTO {os.environ['SHOP_TABLE']} (sku, call_key) VALUES (?, ?)", (sku, ctx.idempotency_key))
    return f"ordered {sku}"


def _plan(request: ChatRequest) -> Message | str:
    if any(m.role == "tool" for m in request.messages):
        return "placed"
    return Message.assistant(tool_calls=[ToolCall("call_0", "place", {"sku": "tea"})])


def make_shop(*, store: Any = None, engine: Any = None) -> Agent:
    return Agent(
        FunctionModel(_plan),
        tools=[place],
        store=store,
        engine=engine,
        name="shop",
        memory=None,
        datasources={"shop": Datasource(os.environ["SHOP_URL"])},
    )
