"""What `PostgresStore` promises beyond the shared contract: the append fence and leases hold
across OS processes, the DSN's password never shows, and one store serves event loops in turn.

The PostgreSQL server comes from EUDAIMON_TEST_PG_DSN (default: trust auth on 127.0.0.1:5432).
Each test works in a fresh schema and drops it. An unreachable server FAILS these tests with the
store's own error naming the host: CI starts PostgreSQL, so nothing here is ever skipped.

Run as a script, this file is one racing process (see `_writer_main`): `append` races for the
seqs of one run, `leases` races for a set of leases.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from fence_writer import race, seq_winners

from eudaimon.core.errors import ConcurrencyConflict, ConfigurationError, JournalError, LeaseHeld
from eudaimon.core.events import Event, EventData, ModelAttemptStarted, RunStarted, ToolCompleted
from eudaimon.stores import PostgresStore as ExportedPostgresStore
from eudaimon.stores import open_store
from eudaimon.stores.postgres import PostgresStore

pytestmark = pytest.mark.postgres

DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
PROCESSES = 6
SEQS = 150
LEASES = 20
PASSWORD = "hunter2-Sup3rSecret"


@pytest.fixture
def schema() -> Iterator[str]:
    """A schema name nobody uses yet; the schema (if a store created it) is dropped afterwards."""
    name = f"eudaimon_test_{uuid.uuid4().hex}"
    yield name
    with contextlib.suppress(psycopg.OperationalError), psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def _sql(query: str, *args: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(DSN, autocommit=True) as conn:
        cursor = conn.execute(query, args)
        return cursor.fetchall() if cursor.description else []


def _spawn(*args: str) -> subprocess.Popen[str]:
    """This file run as a script (see `_writer_main`), talking over pipes."""
    return subprocess.Popen(
        [sys.executable, __file__, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "EUDAIMON_TEST_PG_DSN": DSN},
    )


@contextlib.contextmanager
def _reaped(procs: list[subprocess.Popen[str]], *, after_s: float) -> Iterator[None]:
    """Kill `procs` after `after_s` (a hung process fails the test, never hangs it) or on exit."""

    def kill() -> None:
        for proc in procs:
            proc.kill()

    watchdog = threading.Timer(after_s, kill)
    watchdog.start()
    try:
        yield
    finally:
        watchdog.cancel()
        kill()
        for proc in procs:
            proc.communicate()


def _race(schema: str, *args: str) -> list[dict[str, Any]]:
    """Start PROCESSES copies of this file as writers, let them warm up, start them together."""
    procs = [_spawn(*args, schema, f"w{i}") for i in range(PROCESSES)]
    reports: list[dict[str, Any]] = []
    with _reaped(procs, after_s=180):
        for proc in procs:  # every writer has used its store once (racing to create the schema)
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.strip() == "ready", proc.communicate(timeout=30)[1]
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err
            reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def test_processes_racing_on_one_run_win_each_seq_exactly_once(schema: str) -> None:
    """Invariant: when several OS processes (each with its own pool) append to one run at the same
    seqs, every seq is won by exactly one of them, the others get ConcurrencyConflict with the real
    next seq, the journal ends gap-free without duplicates, and only won appends cost a commit.
    The processes also race to create the schema on first use (the advisory lock)."""
    reports = _race(schema, "append", "run-fence", str(SEQS))

    winner = seq_winners(reports, SEQS)
    assert sum(r["conflicts"] for r in reports) >= PROCESSES - 1  # all tried seq 0: the race happened

    events = asyncio.run(_load_and_close(PostgresStore(DSN, schema=schema), "run-fence"))
    assert [e.seq for e in events] == list(range(SEQS))
    assert isinstance(events[0].data, RunStarted)
    assert events[0].data.agent == winner[0]
    for event in events[1:]:
        assert isinstance(event.data, ModelAttemptStarted)
        assert event.data.request_id == f"{winner[event.seq]}:{event.seq}"
    ((rows, distinct),) = _sql(f'SELECT COUNT(*), COUNT(DISTINCT seq) FROM "{schema}".events')
    ((next_seq,),) = _sql(f'SELECT next_seq FROM "{schema}".runs WHERE run_id = %s', "run-fence")
    assert rows == distinct == next_seq == SEQS


def test_processes_racing_for_a_lease_leave_exactly_one_holder(schema: str) -> None:
    """Invariant: when several OS processes try to take the same free leases at once, each lease
    goes to exactly one process, every other one gets LeaseHeld naming that holder, and the
    server's lease row names the same holder (one worker drives a run)."""
    reports = _race(schema, "leases", str(LEASES))

    for i in range(LEASES):
        name = f"run:r{i}"
        winners = [r["writer"] for r in reports if r["leases"][name] == "won"]
        assert len(winners) == 1, f"{name} taken by {winners}"
        assert all(r["leases"][name] in ("won", winners[0]) for r in reports)
        assert _sql(f'SELECT owner FROM "{schema}".leases WHERE name = %s', name) == [(winners[0],)]


def test_store_serves_event_loops_one_after_another_without_leaking_connections(schema: str) -> None:
    """Invariant: a store built outside any loop works from several `asyncio.run` calls in turn
    (the CLI and `prompt_sync` do that): each loop gets its own pool, whose connections are
    closed when that loop ends, so no connection is leaked from one `asyncio.run` to the next."""
    app = f"eudaimon_loops_{uuid.uuid4().hex[:12]}"
    store = PostgresStore(_named(app), schema=schema, max_size=1)
    events = [_event("run-1", 0, RunStarted(agent="a", input="x", messages=())), _event("run-1", 1, _attempt("w", 1))]

    async def append_and_count(seq: int) -> int:
        await store.append("run-1", seq, events[seq : seq + 1])
        return _connection_count(app)

    assert asyncio.run(append_and_count(0)) == 1
    assert _connections_settle_at(app, 0)
    assert asyncio.run(append_and_count(1)) == 1
    assert _connections_settle_at(app, 0)
    assert asyncio.run(store.load("run-1")) == events
    asyncio.run(store.close())
    assert _connections_settle_at(app, 0)


def test_a_store_nobody_closed_lets_its_loop_end_and_leaves_no_connection(schema: str) -> None:
    """Invariant: `asyncio.run` returns after busy use of a store that was never closed (its pool
    is closed as the loop ends, even while connections are being opened), and no connection of
    that store is left on the server. Run in a subprocess: a hung loop fails, never hangs."""
    app = f"eudaimon_unclosed_{uuid.uuid4().hex[:12]}"
    proc = _spawn("unclosed", app, schema, "w0")
    with _reaped([proc], after_s=60):
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "returned", proc.communicate(timeout=30)[1]
        assert _connections_settle_at(app, 0)  # while the process is still alive
        proc.stdin.write("exit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0


def test_repr_and_errors_never_show_the_password(caplog: pytest.LogCaptureFixture) -> None:
    """Invariant: the DSN's password appears in no repr, error message, traceback or log line;
    the repr shows host and database, and a server that cannot be reached is a JournalError
    naming its host and database (not a skip, not the driver's raw error)."""
    caplog.set_level(logging.DEBUG)
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dsns = [
        f"postgresql://alice:{PASSWORD}@127.0.0.1:{port}/ledger",
        f"postgres://alice:{PASSWORD}@127.0.0.1:{port}/ledger?connect_timeout=5",
        f"host=127.0.0.1 port={port} dbname=ledger user=alice password={PASSWORD}",
    ]
    for dsn in dsns:
        store = PostgresStore(dsn)
        with pytest.raises(JournalError) as failed:
            asyncio.run(store.load("run-1"))
        asyncio.run(store.close())

        shown = [repr(store), str(failed.value), "".join(traceback.format_exception(failed.value))]
        assert all(PASSWORD not in text for text in shown), dsn
        assert "127.0.0.1" in repr(store) and "ledger" in repr(store)
        assert "127.0.0.1" in str(failed.value) and "ledger" in str(failed.value)
    for dsn in (f"postgresql://alice:{PASSWORD}@127.0.0.1/db?no_such_option=1", f"password={PASSWORD} dbname"):
        with pytest.raises(ConfigurationError) as refused:
            PostgresStore(dsn)
        assert PASSWORD not in "".join(traceback.format_exception(refused.value))
    assert PASSWORD not in caplog.text


async def test_one_append_is_one_commit_and_a_refused_one_is_none(schema: str, samples: Any) -> None:
    """Invariant: `commit_count` counts transactions that wrote: an append costs exactly one,
    a refused append (conflict, bad batch), a refused lease and reads cost none."""
    store = PostgresStore(DSN, schema=schema)
    try:
        assert store.commit_count == 0
        await store.append("run-1", 0, samples.make_events("run-1", [samples.started(), samples.attempt(0)]))
        assert store.commit_count == 1
        with pytest.raises(ConcurrencyConflict):
            await store.append("run-1", 0, samples.make_events("run-1", [samples.started()]))
        await store.load("run-1")
        await store.list_runs()
        await store.acquire_lease("run:run-1", "a", 30)
        with pytest.raises(LeaseHeld):
            await store.acquire_lease("run:run-1", "b", 30)
        assert store.commit_count == 2
    finally:
        await store.close()


async def test_primary_key_fences_even_when_the_run_row_disagrees(schema: str, samples: Any) -> None:
    """Invariant: if the `runs` row is lost or wrong (a hand edit), the (run_id, seq) key still
    refuses a second event at a taken seq: ConcurrencyConflict naming the journal's real next seq,
    and nothing written."""
    store = PostgresStore(DSN, schema=schema)
    try:
        events = samples.make_events("run-1", [samples.started(), samples.attempt(0)])
        await store.append("run-1", 0, events)
        _sql(f'DELETE FROM "{schema}".runs WHERE run_id = %s', "run-1")

        with pytest.raises(ConcurrencyConflict) as refused:
            await store.append("run-1", 0, samples.make_events("run-1", [samples.started("intruder")]))

        assert refused.value.actual_seq == 2
        assert await store.load("run-1") == events
        assert await store.list_runs() == []
    finally:
        await store.close()


async def test_payloads_round_trip_what_jsonb_would_refuse(schema: str, samples: Any) -> None:
    """Invariant: payloads are kept as the codec wrote them: a tool output holding a NUL
    character (which a jsonb column rejects) and deep unicode load back unchanged."""
    store = PostgresStore(DSN, schema=schema)
    try:
        output = ToolCompleted(call_id="c1", tool="cat", output="bin\x00ary ✓ \U0001f600", is_error=False)
        events = samples.make_events("run-1", [samples.started(), output])
        await store.append("run-1", 0, events)
        assert await store.load("run-1") == events
    finally:
        await store.close()


async def test_stores_sharing_a_schema_see_each_other(schema: str, samples: Any) -> None:
    """Invariant: stores opened at once on one new schema (another machine, another process)
    create it without colliding and share one journal: what one appends the others read and fence."""
    stores = [PostgresStore(DSN, schema=schema, min_size=0) for _ in range(4)]
    try:
        await asyncio.gather(*(s.list_runs() for s in stores))
        await stores[0].append("run-1", 0, samples.make_events("run-1", [samples.started()]))
        assert [e.seq for e in await stores[1].load("run-1")] == [0]
        with pytest.raises(ConcurrencyConflict):
            await stores[2].append("run-1", 0, samples.make_events("run-1", [samples.started()]))
    finally:
        await asyncio.gather(*(s.close() for s in stores))


def test_urls_and_names_route_to_postgres_and_bad_schemas_are_refused() -> None:
    """Invariant: `postgresql://` and `postgres://` store URLs open a PostgresStore (built without
    a loop or a connection), it is exported from `eudaimon.stores`, and a schema name that is not
    a plain identifier is refused before any SQL is built from it."""
    assert ExportedPostgresStore is PostgresStore
    for url in ("postgresql://u@127.0.0.1:5432/db", "postgres://u@127.0.0.1/db"):
        assert isinstance(open_store(url), PostgresStore)
    with pytest.raises(ConfigurationError):
        PostgresStore(DSN, schema='x"; DROP TABLE runs; --')
    with pytest.raises(ConfigurationError):
        PostgresStore(DSN, min_size=5, max_size=2)


# -- helpers --------------------------------------------------------------------------------


def _event(run_id: str, seq: int, data: EventData) -> Event:
    return Event.of(run_id, seq, datetime.now(UTC), data)


def _attempt(writer: str, seq: int) -> ModelAttemptStarted:
    return ModelAttemptStarted(step=seq, request_id=f"{writer}:{seq}", request_digest="")


def _named(app: str) -> str:
    """The test DSN with an application_name, to count the store's connections on the server."""
    return f"{DSN}{'&' if '?' in DSN else '?'}application_name={app}"


def _connection_count(app: str) -> int:
    ((count,),) = _sql("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = %s", app)
    return int(count)


def _connections_settle_at(app: str, count: int) -> bool:
    """Wait (up to 5 s) for the server to show `count` connections named `app`: a closed socket's
    backend exits a moment after the client closes it."""
    for _ in range(50):
        if _connection_count(app) == count:
            return True
        time.sleep(0.1)
    return False


async def _load_and_close(store: PostgresStore, run_id: str) -> list[Event]:
    try:
        return await store.load(run_id)
    finally:
        await store.close()


async def _lease_race(store: PostgresStore, total: int, writer: str) -> dict[str, Any]:
    outcomes: dict[str, str] = {}
    for i in range(total):
        try:
            await store.acquire_lease(f"run:r{i}", writer, 60)
            outcomes[f"run:r{i}"] = "won"
        except LeaseHeld as held:
            outcomes[f"run:r{i}"] = held.owner
    await store.close()
    return {"writer": writer, "leases": outcomes}


async def _busy(store: PostgresStore) -> None:
    await asyncio.gather(*(store.list_runs(limit=1) for _ in range(40)))  # the pool grows to its max


def _writer_main(argv: list[str]) -> None:
    """`append RUN TOTAL SCHEMA WRITER` or `leases TOTAL SCHEMA WRITER`: warm up in one event
    loop, print `ready`, wait for a line on stdin, race in a second loop, print a JSON report.
    `unclosed APP SCHEMA WRITER`: use a store busily, never close it, print `returned` once
    `asyncio.run` is back, then wait for a line on stdin before exiting."""
    mode, *args = argv
    schema, writer = args[-2], args[-1]
    if mode == "unclosed":
        asyncio.run(_busy(PostgresStore(_named(args[0]), schema=schema)))
        print("returned", flush=True)
        sys.stdin.readline()
        return
    store = PostgresStore(DSN, schema=schema)
    asyncio.run(store.list_runs(limit=1))
    print("ready", flush=True)
    sys.stdin.readline()
    if mode == "append":
        report = asyncio.run(race(store, args[0], int(args[1]), writer))
    else:
        report = asyncio.run(_lease_race(store, int(args[0]), writer))
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    _writer_main(sys.argv[1:])
