"""Datasources: the application's own databases, whose writes commit exactly once.

A tool declared `@tool(datasource="shop")` gets `ctx.db`, a connection inside an open
transaction on the agent's `Datasource` of that name. eudaimon writes the call's completion
record (run, call, result) in its own table of that database, in the same transaction, and
commits; recovery reads the record to learn whether a call it lost track of committed.
"""

from eudaimon.datasources._datasource import Datasource
from eudaimon.datasources._record import (
    COMPLETIONS_TABLE,
    DatasourceError,
    DatasourceOutcomeUnknown,
    DatasourceUnreachable,
    StoredCompletion,
)

__all__ = [
    "COMPLETIONS_TABLE",
    "Datasource",
    "DatasourceError",
    "DatasourceOutcomeUnknown",
    "DatasourceUnreachable",
    "StoredCompletion",
]
