"""A process that stops itself (SIGSTOP) in the middle of a PostgreSQL append's transaction.

Usage: python _stalled_pg_append.py DSN SCHEMA TIMEOUT_S RUN_ID

It appends the first batch of RUN_ID (a `run_started` whose message is stored in the `messages`
table, so the append is a transaction of several statements) and stops right after the message
was inserted, before the claim and the commit: its session is left idle in a transaction that
holds the new message's row. It prints `Z` before stopping; once woken, `landed` or `failed`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import UTC, datetime
from typing import Any

from eudaimon.core.errors import JournalError
from eudaimon.core.events import Event, RunStarted
from eudaimon.core.messages import Message
from eudaimon.stores.postgres import PostgresStore, _content

SHARED = Message.user("the same first message in every run", id="shared-message")


def first_batch(run_id: str) -> list[Event]:
    started = RunStarted(agent="a", input=SHARED.content, messages=(SHARED,))
    return [Event.of(run_id, 0, datetime(2026, 1, 1, tzinfo=UTC), started)]


async def main() -> None:
    dsn, schema, timeout_s, run_id = sys.argv[1:5]
    store = PostgresStore(dsn, schema=schema, stalled_transaction_timeout_s=float(timeout_s))
    await store.list_runs(limit=1)
    real = _content.store

    async def store_then_stop(*args: Any) -> dict[str, Any]:
        out = await real(*args)
        print("Z", flush=True)
        os.kill(os.getpid(), signal.SIGSTOP)
        return out

    _content.store = store_then_stop  # the store calls it through the module
    try:
        await store.append(run_id, 0, first_batch(run_id))
    except JournalError as exc:
        print("failed", type(exc).__name__, flush=True)
    else:
        print("landed", flush=True)
    finally:
        _content.store = real
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
