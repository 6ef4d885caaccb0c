"""Executing a call of a `@tool(datasource=…)` tool: its writes and its completion record in
one transaction, committed exactly once.

Before a second attempt (a retry, or recovery after a crash) the datasource is asked whether
the call committed already: if it did, its stored result is the call's, and nothing runs
again. Otherwise the tool runs on `ctx.db` inside a fresh transaction; eudaimon adds the
completion record and commits. A tool that raises is rolled back: what it wrote never lands.
Should another process have committed the call meanwhile (this one was stalled, then woke up
after a takeover), the record's key refuses the second commit, the whole transaction rolls
back, and the first commit's result is returned.

The datasource failing eudaimon's own statements (the connection lost, the server restarted
or failing over) is not the tool's failure, and the model is never shown it as one: the call
looks up whether it committed and runs again if it did not (`run_in_transaction`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from eudaimon.core.messages import ContentPart
from eudaimon.datasources import Datasource, DatasourceError, DatasourceUnreachable
from eudaimon.tools import Tool, ToolContext, ToolReturn

T = TypeVar("T")


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


RETRY_WAITS_S = (0.2, 1.0, 3.0)
"""How long a call waits before each new try after the datasource failed eudaimon's own
statement (its connection was lost, the server restarted): short, as such failures pass."""


class _Unreached(Exception):
    """The datasource failed eudaimon's statement, not the tool: the call may try again.
    `at_commit`: the statement failed was the commit, or came after it, so it may have landed."""

    def __init__(self, error: BaseException, *, at_commit: bool = False) -> None:
        super().__init__(str(error))
        self.error = error
        self.at_commit = at_commit


async def run_in_transaction(
    source: Datasource, tool: Tool, arguments: Mapping[str, Any], ctx: ToolContext[Any]
) -> Transacted:
    """Run `tool` once on `source`, exactly once across attempts and processes (see module).

    When the datasource fails one of eudaimon's own statements (opening the transaction,
    committing it, looking up the record) or the connection dies under the tool, the call
    is not the tool's failure and is never answered as one: after a short wait it looks up
    whether the call committed (a commit cut off may have landed), and runs it again in a
    new transaction if it did not. Past `RETRY_WAITS_S`, `DatasourceUnreachable` is raised.
    """
    look_up = ctx.attempt > 1  # a try before this attempt may have committed
    maybe_committed = look_up
    for wait_s in (*RETRY_WAITS_S, None):
        try:
            return await _try(source, tool, arguments, ctx, look_up)
        except _Unreached as unreached:
            maybe_committed = maybe_committed or unreached.at_commit
            if wait_s is None:
                error = DatasourceUnreachable(str(unreached.error), maybe_committed=maybe_committed)
                raise error from unreached.error
            await asyncio.sleep(wait_s)
        look_up = True  # what failed may have been a commit that landed
    raise AssertionError("unreachable")


async def _try(
    source: Datasource, tool: Tool, arguments: Mapping[str, Any], ctx: ToolContext[Any], look_up: bool
) -> Transacted:
    """One try: the record if `look_up` finds one, else the tool in a new transaction."""
    if look_up:
        stored = await _ours(source.lookup(ctx.run_id, ctx.call_id))
        if stored is not None:
            return Transacted(stored.output, stored.is_error, recovered=True)
    conn = await _ours(source.transaction(is_async=tool.is_async))
    try:
        output, parts = await tool.execute(arguments, dataclasses.replace(ctx, db=conn))
    except BaseException as exc:
        lost = isinstance(exc, Exception) and source.lost(conn)
        # A sync tool cut short by a timeout may still hold the connection in its thread.
        await source.rollback(conn, reuse=tool.is_async and not lost)
        if lost:  # the tool's statement failed because its connection died: nothing committed
            raise _Unreached(source.error("running the tool's statements", exc)) from exc
        raise
    if isinstance(output, ToolReturn):
        text, is_error = output.output, output.is_error
    else:
        text, is_error = output, False
    try:
        committed = await _ours(
            source.commit(conn, ctx.run_id, ctx.call_id, ctx.idempotency_key, text, is_error), at_commit=True
        )
    except BaseException:
        await source.rollback(conn, reuse=False)
        raise
    if committed:
        return Transacted(text, is_error, parts)
    stored = await _ours(source.lookup(ctx.run_id, ctx.call_id), at_commit=True)  # another's commit landed
    if stored is None:  # cannot be: the key that refused the commit is a committed record
        raise source.error("reading the completion record that refused a second commit", LookupError(ctx.call_id))
    return Transacted(stored.output, stored.is_error, recovered=True)


async def _ours(statement: Awaitable[T], *, at_commit: bool = False) -> T:
    """`statement`, one of eudaimon's own on the datasource: its failure is `_Unreached`."""
    try:
        return await statement
    except DatasourceError as exc:
        raise _Unreached(exc, at_commit=at_commit) from exc
