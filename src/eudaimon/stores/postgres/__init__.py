"""`PostgresStore`: the journal shared by many machines (DESIGN §5).

`_store` holds the store, `_pools` its connections (a pool per event loop), `_schema` the
schema's creation, `_sql` the tables and statements (and why most writes are a single
statement), `_content` the texts and messages events point to (`eudaimon.stores.packing`),
`_dsn` what of a DSN may be shown.
"""

from __future__ import annotations

from eudaimon._extras import needs

with needs("postgres", "PostgresStore (a postgresql:// store URL)"):
    from eudaimon.stores.postgres._store import PostgresStore

__all__ = ["PostgresStore"]
