"""Invariant: a process that stalls on its way to a commit, whose lease lapses meanwhile, never
lands that commit: it fails with `LeaseLost`, so the intent it carried is not journaled and the
tool behind it never runs in that process. A process stopped inside a SQLite commit holds the
write lock, and other writers are told so in one line; its commit then fails too.

Bug (issue 14): a process stopped inside a SQLite commit held the write lock, every other
process failed after 30 s with `database is locked`, and the lapsed process's commit then
landed; a process stopped just before its commit landed it after another had taken the run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _proc_support import open_store, scratch_pg_schema, worker_env

from eudaimon.core.errors import JournalError, LeaseHeld
from eudaimon.stores.sqlite import SqliteStore

WORKER = Path(__file__).parent / "_stalled_writer.py"
TTL_S = 1.0


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.db'}"
        return
    with scratch_pg_schema("stalled") as name:
        yield name


def _start(spec: str, run_id: str, marker: Path, where: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), spec, run_id, str(marker), where],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=worker_env(TTL_S),
    )


def _wait_stopped(proc: subprocess.Popen[str]) -> None:
    """Until the worker has stopped itself (state T in /proc), or fail if it ended."""
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"the worker ended before stalling: {proc.communicate()}")
        state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state in ("T", "t"):
            return
        time.sleep(0.01)


def _finish(proc: subprocess.Popen[str]) -> dict[str, str | None]:
    os.kill(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    report: dict[str, str | None] = json.loads(out.strip().splitlines()[-1])
    return report


async def _take_when_lapsed(spec: str, name: str) -> None:
    """Take the lease over as soon as it has lapsed (as another process's resume would)."""
    store = open_store(spec)
    try:
        while True:
            try:
                await store.acquire_lease(name, "the-other-process", 30)
                return
            except LeaseHeld:
                await asyncio.sleep(0.05)
    finally:
        await store.close()


async def _types(spec: str, run_id: str) -> list[str]:
    store = open_store(spec)
    try:
        return [event.type for event in await store.load(run_id)]
    finally:
        await store.close()


def test_a_commit_stalled_past_its_lease_fails_after_another_took_the_run(spec: str, tmp_path: Path) -> None:
    """Stopped after its own lease check and before the store, while another process takes
    the lapsed lease: on waking, the intent's commit fails, the tool does not run."""
    marker = tmp_path / "paid.txt"
    proc = _start(spec, "run-stalled", marker, "before")
    try:
        _wait_stopped(proc)
        asyncio.run(_take_when_lapsed(spec, "run:run-stalled"))
    finally:
        report = _finish(proc)
    assert report["error"] == "LeaseLost", report
    assert not marker.exists(), marker.read_text()
    assert "tool_started" not in asyncio.run(_types(spec, "run-stalled"))


def test_a_process_stopped_inside_a_sqlite_commit_blocks_writers_clearly_and_its_commit_fails(tmp_path: Path) -> None:
    """While stopped holding the write lock, another writer fails with one message that names
    the file and the likely cause; once its lease has lapsed and it continues, its commit is
    refused (nothing lands, the tool does not run) and the lock is free again."""
    db, marker = tmp_path / "runs.db", tmp_path / "paid.txt"
    spec = f"sqlite:///{db}"
    proc = _start(spec, "run-inside", marker, "inside")
    try:
        _wait_stopped(proc)

        async def try_to_write() -> None:
            store = SqliteStore(db, busy_timeout_s=0.3)
            try:
                await store.acquire_lease("run:run-inside", "the-other-process", 30)
            finally:
                await store.close()

        with pytest.raises(JournalError) as blocked:
            asyncio.run(try_to_write())
        assert str(db) in str(blocked.value) and "stopped or paused inside a commit" in str(blocked.value)
        time.sleep(TTL_S * 1.5)  # let its lease lapse while it is stopped (not a timing assertion)
    finally:
        report = _finish(proc)
    assert report["error"] == "LeaseLost", report
    assert not marker.exists()
    assert "tool_started" not in asyncio.run(_types(spec, "run-inside"))
    asyncio.run(_take_when_lapsed(spec, "run:run-inside"))  # the lock is free: another can take over
