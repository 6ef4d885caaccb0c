"""Two versions of one refund agent, for the change tests: v1, and v2 with the argument of
`refund` renamed, its tool removed, or a refusing `on_change`."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores import EventStore
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.sqlite import SqliteStore

PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
SCHEMAS: list[str] = []
"""The PostgreSQL schemas `open_store` made; tests/change/conftest.py drops them at the end."""


def open_store(kind: str, tmp_path: Path) -> EventStore:
    if kind == "sqlite":
        return SqliteStore(tmp_path / "runs.db")
    schema = f"eudaimon_change_{uuid.uuid4().hex[:12]}"
    SCHEMAS.append(schema)
    return PostgresStore(PG_DSN, schema=schema)


def _last_tool_text(request: ChatRequest) -> str | None:
    last = request.messages[-1]
    return last.content if last.role == "tool" else None


def refunder(
    store: EventStore,
    ledger: list[Any],
    *,
    version: str,
    renamed: bool = False,
    removed: bool = False,
    on_change: str = "continue",
    seen: list[str] | None = None,
) -> Agent[Any, Any]:
    """An agent that refunds order 7; `renamed`: `refund(cents=…)` instead of `refund(amount=…)`."""

    @tool(effect="write", requires_approval=True)
    def refund(amount: int) -> str:
        """Refund an order."""
        ledger.append(("refund", amount))
        return f"refunded {amount}"

    @tool(name="refund", effect="write", requires_approval=True)
    def refund_cents(cents: int) -> str:
        """Refund an order, in cents."""
        ledger.append(("refund_cents", cents))
        return f"refunded {cents} cents"

    @tool(effect="read")
    def lookup(order: int) -> str:
        """Look an order up."""
        return f"order {order}: 5 units"

    def answer(request: ChatRequest) -> Message | str:
        told = _last_tool_text(request)
        if seen is not None and told is not None:
            seen.append(told)
        if told is None:
            arguments = {"cents": 500} if renamed else {"amount": 5}
            return Message.assistant(tool_calls=[ToolCall("r1", "refund", arguments)])
        if "did not run" in told and renamed:
            return Message.assistant(tool_calls=[ToolCall("r2", "refund", {"cents": 500})])
        return "done"

    tools: list[Callable[..., Any]] = [lookup] if removed else [refund_cents if renamed else refund, lookup]
    return Agent(
        FunctionModel(answer),
        tools=tools,  # type: ignore[arg-type]
        store=store,
        name="refunds",
        version=version,
        on_change=on_change,  # type: ignore[arg-type]
        memory=None,
    )
