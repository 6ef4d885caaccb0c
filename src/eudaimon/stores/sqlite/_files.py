"""Which file a `SqliteStore` opens, and how it opens one it may only read.

A path is checked before SQLite sees it, because SQLite's own answers ("unable to open database
file") name neither the path nor the fix, and because SQLite creates whatever file it is given:
a typo'd path would otherwise become a new, empty journal, and a read command would report
"no runs" there instead of the runs the user meant.

A read-only open (`mode=ro`) creates nothing, upgrades nothing and writes nothing. A journal in
WAL mode still needs its `-shm` index, which a reader creates next to the file when it can;
where it cannot (a read-only directory) and no `-wal` file is left either, every commit is in
the main file and it is read as immutable.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from eudaimon.core.errors import JournalError
from eudaimon.stores.sqlite import _schema


def check_path(path: str, *, read_only: bool) -> None:
    """Raise a `JournalError` that names the path and the fix when it cannot be a journal.

    Raises:
        JournalError: the path is a directory; or it does not exist and `read_only` (reading
            never creates a journal) or its directory is missing (writing never creates one).
    """
    file = Path(path)
    if file.is_dir():
        raise JournalError(
            f"{path!r} is a directory, not a SQLite journal; name a file, e.g. {str(file / 'runs.db')!r}"
        )
    if file.exists():
        return
    parent = file.parent
    if parent.exists() and not parent.is_dir():
        raise JournalError(f"cannot use the SQLite journal {path!r}: {str(parent)!r} is a file, not a directory")
    if read_only:
        raise JournalError(
            f"no SQLite journal at {path!r}: check the path (or --store); reading never creates a journal"
        )
    if not parent.is_dir():
        raise JournalError(
            f"cannot create the SQLite journal {path!r}: the directory {str(parent)!r} does not exist; "
            f"create it (mkdir -p {parent}) or check the path"
        )


def connect_read_only(path: str) -> sqlite3.Connection:
    """A connection that can only read `path`, whose tables it checks are current.

    Raises:
        JournalError: the file is not a journal, or one this version cannot read without
            upgrading it (which takes write access).
    """
    uri = f"file:{quote(os.path.abspath(path))}?mode=ro"
    try:
        conn = _open(uri)
    except sqlite3.OperationalError:
        if os.path.exists(f"{path}-wal"):
            raise
        conn = _open(uri + "&immutable=1")  # no -shm can be made here, and nothing is in a WAL
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > _schema.VERSION:
            raise JournalError(f"{path!r} has schema version {version}, newer than {_schema.VERSION}; upgrade eudaimon")
        if version < _schema.VERSION:
            tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'events'").fetchone()[0]
            if not tables:
                raise JournalError(f"{path!r} is not an eudaimon journal (it has no events table); check the path")
            raise JournalError(
                f"the journal {path!r} was made by an older eudaimon; open it once with write access "
                "(e.g. `eudaimon runs list` as its owner) to upgrade it, then read it"
            )
    except BaseException:
        conn.close()
        raise
    return conn


def _open(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA schema_version").fetchone()  # opening is lazy: make it fail here
    except BaseException:
        conn.close()
        raise
    return conn
