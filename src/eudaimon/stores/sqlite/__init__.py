"""`SqliteStore`: the embedded default journal — one file, WAL, group commit (DESIGN §5).

`_store` holds the store; `_worker` its commit thread and group commit; `_sql` the
compare-and-append and the reads; `_content` the content-addressed texts and messages that
events point to (`eudaimon.stores.packing`);
`_wal_room` the room kept ahead of the write-ahead log, which makes durable commits cheaper;
`_schema` the tables, and the upgrade of files made by older versions.
"""

from __future__ import annotations

from eudaimon.stores.sqlite._store import SqliteStore
from eudaimon.stores.sqlite._worker import Synchronous

__all__ = ["SqliteStore", "Synchronous"]
