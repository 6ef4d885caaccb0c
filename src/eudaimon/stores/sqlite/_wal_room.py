"""Room for the write-ahead log: zeros written and synced past its end, ahead of its frames.

A durable commit appends frames to the WAL and syncs it. When those frames lengthen the file,
the sync must also make the new size and the new blocks durable (on ext4, a journal commit
of its own). On our test machine a one-row commit took about 300 µs when it lengthened the
file and about 170 µs when it wrote over blocks the file already had. SQLite lengthens the WAL
until a checkpoint lets it start again from the top, so without room every process that opens
a journal pays the longer sync for its first few hundred commits, a short-lived one for all.

The room is made while holding SQLite's write lock and only past the file's current end, where
the last committed frame ends or earlier room does: no frame is overwritten and no other writer
is appending meanwhile. SQLite ignores whatever follows its last valid frame (each frame carries
the header's salt and a running checksum), so the zeros are never read as data, and a crash
just after making room leaves a valid log. The sizes are absolute, so processes sharing a
file agree on them and make each room once between them.
"""

from __future__ import annotations

import os

STEPS = tuple((256 << 10) << n for n in range(5))
"""The sizes room is made to, 256 KiB doubling to 4 MiB: a process that commits a few times
makes little, one that commits often soon has what SQLite's own checkpoint threshold (1,000
pages of 4 KiB) lets a WAL grow to. Past the last step the WAL grows as SQLite makes it."""


def supported() -> bool:
    """Whether this platform has what the room needs: `os.pwrite` and `os.fdatasync` (Linux and
    most Unixes; not macOS or Windows, where commits lengthen the WAL as SQLite makes it)."""
    return hasattr(os, "pwrite") and hasattr(os, "fdatasync")


class WalRoom:
    """The room ahead of one database's WAL, made through a descriptor held open (opening the
    file for every commit cost a few µs each). SQLite deletes the WAL only when the last
    connection to the database closes, so the descriptor stays good while the store's own
    connection is open; close it with that connection."""

    def __init__(self, database: str) -> None:
        self._wal = database + "-wal"
        self._fd: int | None = None

    def make(self) -> bool:
        """Lengthen the WAL with synced zeros to the next of `STEPS`, unless it is at one (the
        room made there may not be used up yet) or past the last; True if it was lengthened.

        Call inside a durable write transaction, before its COMMIT. A WAL whose frames outgrew
        the room is at no step, so the next commit makes more. A failure costs only speed, so
        it is not raised: the commit then lengthens the file as SQLite would anyway.

        The size is read with `lseek`, not `stat`: on our test machine (ext4) a `stat` or
        `fstat` of the WAL just before a commit made that commit's sync about 55 µs slower,
        every commit, while seeking to its end cost the sync nothing.
        """
        try:
            if self._fd is None:
                self._fd = os.open(self._wal, os.O_WRONLY)
            size = os.lseek(self._fd, 0, os.SEEK_END)
            if size in STEPS or size > STEPS[-1]:
                return False
            step = next(step for step in STEPS if step > size)
            os.pwrite(self._fd, bytes(step - size), size)
            os.fdatasync(self._fd)
        except OSError:
            return False
        return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
