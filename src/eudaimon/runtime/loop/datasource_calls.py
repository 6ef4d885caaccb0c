"""Executing a call of a `@tool(datasource=…)` tool: its writes and its completion record in
one transaction, committed exactly once.

Before a second attempt (a retry, or recovery after a crash) the datasource is asked whether
the call committed already: if it did, its stored result is the call's, and nothing runs
again. Otherwise the tool runs on `ctx.db` inside a fresh transaction; eudaimon adds the
completion record and commits. A tool that raises is rolled back: what it wrote never lands.
Should another process have committed the call meanwhile (this one was stalled, then woke up
after a takeover), the record's key refuses the second commit, the whole transaction rolls
back, and the first commit's result is returned.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eudaimon.core.messages import ContentPart
from eudaimon.datasources import Datasource
from eudaimon.tools import Tool, ToolContext, ToolReturn


@dataclass(frozen=True, slots=True)
class Transacted:
    """What a datasource call gave: its text, and whether it was read back from the record."""

    output: str
    is_error: bool
    parts: tuple[ContentPart, ...] = ()
    recovered: bool = False
    """The result is the completion record another attempt (or process) had committed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Committed(ToolReturn):
    """A datasource call's result as a Temporal worker's `eudaimon.tool` activity sends it back
    when it says more than its text: it was an error, or it was read back from the completion
    record (`recovered`), which the workflow journals on `tool_completed` as a local run does."""

    recovered: bool = False


async def run_in_transaction(
    source: Datasource, tool: Tool, arguments: Mapping[str, Any], ctx: ToolContext[Any]
) -> Transacted:
    """Run `tool` once on `source`, exactly once across attempts and processes (see module)."""
    if ctx.attempt > 1:
        stored = await source.lookup(ctx.run_id, ctx.call_id)
        if stored is not None:
            return Transacted(stored.output, stored.is_error, recovered=True)
    conn = await source.transaction(is_async=tool.is_async)
    try:
        output, parts = await tool.execute(arguments, dataclasses.replace(ctx, db=conn))
    except BaseException:
        # A sync tool cut short by a timeout may still hold the connection in its thread.
        await source.rollback(conn, reuse=tool.is_async)
        raise
    if isinstance(output, ToolReturn):
        text, is_error = output.output, output.is_error
    else:
        text, is_error = output, False
    try:
        committed = await source.commit(conn, ctx.run_id, ctx.call_id, ctx.idempotency_key, text, is_error)
    except BaseException:
        await source.rollback(conn, reuse=False)
        raise
    if committed:
        return Transacted(text, is_error, parts)
    stored = await source.lookup(ctx.run_id, ctx.call_id)
    if stored is None:  # cannot be: the key that refused the commit is a committed record
        raise source.error("reading the completion record that refused a second commit", LookupError(ctx.call_id))
    return Transacted(stored.output, stored.is_error, recovered=True)
