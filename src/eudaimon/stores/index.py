"""Reading the run index every store keeps (`eudaimon.core.run_index`): the query, its keyset
cursor, the dashboard's day rows, and how a store without an index answers them (by folding).

Order: most recently updated first, ties by run id (descending), so a page is a keyset range:
the cursor is the (updated_at, run_id) of the page's last run, and the next page is the runs
strictly after it in that order. A run updated while a client pages moves to the front:
it is never shown twice in one pass, and one not reached yet is not shown again in that pass
(it is found by starting again from the first page, where it now leads).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Protocol, runtime_checkable

from eudaimon.core.errors import EudaimonError
from eudaimon.core.events import Event
from eudaimon.core.run_index import ENDED, ERRORED, RunRow, searchable, sortable
from eudaimon.stores.base import EventStore


class BoundOutOfRange(EudaimonError, ValueError):
    """A listing's date or datetime that reads, but whose instant in UTC falls outside the years
    1 to 9999 (`until=9999-12-31` ends after them); pick a date inside them."""


class BadBound(EudaimonError, ValueError):
    """A listing's `since` or `until` that is no date (or one outside the calendar); the message
    names the filter and shows what to pass."""


class BadCursor(EudaimonError, ValueError):
    """A listing's cursor this module did not make (cut, edited, or from another server); pass the
    `next_cursor` of the previous page unchanged, or leave it out to start from the first page."""


@dataclass(frozen=True, slots=True)
class Cursor:
    updated_at: str
    """`sortable(updated_at)` of the last run shown."""
    run_id: str

    def encode(self) -> str:
        return base64.urlsafe_b64encode(f"{self.updated_at}\n{self.run_id}".encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> Cursor:
        """Raises `BadCursor`: never anything else, whatever `text` is (no recursion, no JSON)."""
        if len(text) > 1000:
            raise BadCursor("the cursor is too long")
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
            updated, run_id = raw.split("\n", 1)
            datetime.fromisoformat(updated)
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise BadCursor("the cursor is not one this server gave") from None
        if not run_id or "\x00" in raw:
            raise BadCursor("the cursor is not one this server gave")
        return cls(updated, run_id)

    @classmethod
    def after(cls, row: RunRow) -> Cursor:
        return cls(sortable(row.updated_at), row.run_id)


@dataclass(frozen=True, slots=True)
class RunQuery:
    """What `GET /v1/runs` asks of the index; every filter is optional and they combine (AND)."""

    limit: int = 50
    status: str | None = None
    agent: str | None = None
    thread_id: str | None = None
    q: str | None = None
    """Case-insensitive substring of `RunRow.search_text`."""
    since: datetime | None = None
    """created_at >= since (aware, UTC)."""
    until: datetime | None = None
    """created_at < until (aware, UTC)."""
    cursor: Cursor | None = None
    statuses: tuple[str, ...] = ()
    """Any of these statuses (with `status`, both must hold); the recovery sweep's."""
    due_by: datetime | None = None
    """Runs with a deadline or a wake (`RunRow.due_at`) at or before this time; the timers' sweep."""
    replay_of: str | None = None
    """Only the replays of this run (`agent.replay`)."""
    replays: bool = False
    """Include replays; without it (or `replay_of`) a listing leaves them out."""
    version: str | None = None
    """Only runs of this agent version."""

    @property
    def hides_replays(self) -> bool:
        return self.replay_of is None and not self.replays

    @property
    def needle(self) -> str:
        """`q` as the stores look it up: lower-cased, as `RunRow.search_text` is (`searchable`)."""
        return searchable(self.q or "")

    def matches(self, row: RunRow) -> bool:
        """The filters in Python, for the stores that keep rows in memory (and the fallback)."""
        if self.status is not None and row.status != self.status:
            return False
        if self.statuses and row.status not in self.statuses:
            return False
        if self.agent is not None and row.agent != self.agent:
            return False
        if self.thread_id is not None and row.thread_id != self.thread_id:
            return False
        if self.hides_replays and row.replay_of is not None:
            return False
        if self.replay_of is not None and row.replay_of != self.replay_of:
            return False
        if self.version is not None and row.version != self.version:
            return False
        if self.due_by is not None:
            due = row.due_at
            if due is None or sortable(due) > sortable(self.due_by):
                return False
        if self.q and self.needle not in row.search_text:
            return False
        created = sortable(row.created_at)
        if self.since is not None and created < sortable(self.since):
            return False
        if self.until is not None and created >= sortable(self.until):
            return False
        return self.cursor is None or (sortable(row.updated_at), row.run_id) < (
            self.cursor.updated_at,
            self.cursor.run_id,
        )


def parsed_row(body: str) -> RunRow | None:
    """The index row a store kept as `body`, or None when it does not parse (a body edited by
    hand, or written by a version that wrote other fields): every store then folds the run's
    journal again, or leaves what it would have filled from the row as it is."""
    try:
        return RunRow.from_json(body)
    except (ValueError, KeyError, TypeError):
        return None


def order_key(row: RunRow) -> tuple[str, str]:
    return sortable(row.updated_at), row.run_id


def select(rows: Iterable[RunRow], query: RunQuery) -> list[RunRow]:
    """The rows `query` asks for, in the index's order, at most `limit`."""
    found = sorted((row for row in rows if query.matches(row)), key=order_key, reverse=True)
    return found[: query.limit]


@dataclass(frozen=True, slots=True)
class DayRow:
    """One agent's runs created on one UTC day, as `GET /v1/dashboard` shows them."""

    agent: str
    day: str
    runs: int
    by_status: dict[str, int]
    cost_usd: float | None
    """None when no run of the day had a price: "unpriced", not free."""
    input_tokens: int
    output_tokens: int
    p50_duration_ms: int | None
    p95_duration_ms: int | None
    error_rate: float
    """Runs that failed or exceeded their budget, over the day's runs."""


def nearest_rank(sorted_values: Sequence[int], percent: int) -> int | None:
    """The nearest-rank percentile (PostgreSQL's `percentile_disc`): the value at rank
    ceil(percent / 100 * n), in integers, as the stores' SQL computes it."""
    if not sorted_values:
        return None
    return sorted_values[(percent * len(sorted_values) + 99) // 100 - 1]


def _priced(costs: Iterable[float | None]) -> float | None:
    """The sum of the costs known; None when none is (the runs were unpriced, not free)."""
    known = [c for c in costs if c is not None]
    return sum(known) if known else None


def day_row(
    agent: str,
    day: str,
    groups: Sequence[tuple[str, int, float | None, int, int]],
    p50: int | None,
    p95: int | None,
) -> DayRow:
    """A day's row from its (status, runs, cost, input tokens, output tokens) groups."""
    runs = sum(g[1] for g in groups)
    return DayRow(
        agent=agent,
        day=day,
        runs=runs,
        by_status={status: count for status, count, *_ in groups},
        cost_usd=_priced(g[2] for g in groups),
        input_tokens=sum(g[3] for g in groups),
        output_tokens=sum(g[4] for g in groups),
        p50_duration_ms=p50,
        p95_duration_ms=p95,
        error_rate=sum(g[1] for g in groups if g[0] in ERRORED) / runs if runs else 0.0,
    )


def day_rows(rows: Iterable[RunRow], since: datetime, agent: str | None) -> list[DayRow]:
    """The dashboard's rows computed in Python (the memory store's query)."""
    groups: dict[tuple[str, str], list[RunRow]] = {}
    bound = sortable(since)
    for row in rows:
        if sortable(row.created_at) < bound or (agent is not None and row.agent != agent) or row.replay_of:
            continue
        groups.setdefault((row.agent, sortable(row.created_at)[:10]), []).append(row)
    days: list[DayRow] = []
    for (name, day), runs in sorted(groups.items(), key=lambda item: (item[0][1], item[0][0])):
        by_status: dict[str, list[RunRow]] = {}
        for run in runs:
            by_status.setdefault(run.status, []).append(run)
        durations = sorted(d for run in runs if run.status in ENDED and (d := run.duration_ms) is not None)
        found = [
            (
                status,
                len(of),
                _priced(r.cost_usd if r.cost_known else None for r in of),
                sum(r.input_tokens for r in of),
                sum(r.output_tokens for r in of),
            )
            for status, of in by_status.items()
        ]
        days.append(day_row(name, day, found, nearest_rank(durations, 50), nearest_rank(durations, 95)))
    return days


def window_start(days: int, now: datetime) -> datetime:
    """The first moment of the dashboard's window: midnight UTC `days - 1` days before today."""
    today = now.astimezone(UTC).date()
    first = today - timedelta(days=days - 1)
    return datetime(first.year, first.month, first.day, tzinfo=UTC)


def filter_bound(name: str, text: str | None, *, end: bool) -> datetime | None:
    """`parse_bound` of the filter `name` (`since`, `until`) as a listing's caller wrote it, from
    the API or the command line alike.

    Raises:
        BadBound: saying what to pass instead.
    """
    if text is None:
        return None
    try:
        return parse_bound(text, end=end)
    except BoundOutOfRange:
        raise BadBound(f"{name}={text[:60]!r} is out of range: pick a date between 0001-01-02 and 9999-12-30") from None
    except ValueError:
        raise BadBound(
            f"{name}={text[:60]!r} is not an ISO 8601 date or datetime; pass e.g. 2026-12-01 or 2026-12-01T09:30:00Z"
        ) from None


def parse_bound(text: str, *, end: bool) -> datetime:
    """An ISO 8601 date or datetime as an aware UTC instant (naive: UTC). A date as an upper
    bound (`end`) means the end of that day: `until=2026-12-01` includes December 1st.

    Raises:
        ValueError: `text` is neither, or names an instant outside the years 1 to 9999 once in
            UTC (`until=9999-12-31` ends after them; `0001-01-01T00:00+01:00` begins before).
    """
    text = text.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            at = datetime(day.year, day.month, day.day, tzinfo=UTC)
            return at + timedelta(days=1) if end else at
        at = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
        return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
    except OverflowError:
        raise BoundOutOfRange(f"{text!r} is outside the dates a filter can hold (years 1 to 9999, in UTC)") from None


class LastRows:
    """The row a store wrote last for each run it appends to, so that the next append computes
    its row without reading one back: a row is a pure function of the journal, so the row
    kept at `event_count` n is the row of events 0..n-1 whoever wrote them. The store's write
    is guarded by that count and reads the row back when the guard misses (another process
    appended meanwhile). Runs that ended are dropped; so are the oldest beyond `size`."""

    def __init__(self, size: int = 10_000) -> None:
        self._rows: dict[str, RunRow] = {}
        self._size = size

    def following(self, run_id: str, expected_seq: int, events: Sequence[Event]) -> RunRow | None:
        """The row after `events` appended at `expected_seq`, if known without reading."""
        if expected_seq == 0:
            return RunRow(run_id).advance(events)
        kept = self._rows.get(run_id)
        if kept is None or kept.event_count != expected_seq:
            return None
        return kept.advance(events)

    def search_changed(self, row: RunRow) -> tuple[bool, bool]:
        """Whether `row`'s text part and ids part (`RunRow.search_text`) differ from the kept row's
        (both, when none is kept). The ids part counts as changed when the run stops running,
        too: a store may leave a running run's ids out of its search documents until then."""
        kept = self._rows.get(row.run_id)
        if kept is None:
            return True, True
        stopped = kept.status == "running" and row.status != "running"
        return kept.text_key() != row.text_key(), stopped or kept.ids_key() != row.ids_key()

    def keep(self, row: RunRow) -> None:
        self._rows.pop(row.run_id, None)
        if row.is_ended:
            return
        self._rows[row.run_id] = row
        if len(self._rows) > self._size:
            del self._rows[next(iter(self._rows))]

    def forget(self, run_id: str) -> None:
        self._rows.pop(run_id, None)


@runtime_checkable
class IndexedStore(Protocol):
    """A store that keeps the run index (every store here does)."""

    async def query_runs(self, query: RunQuery) -> list[RunRow]: ...

    async def run_row(self, run_id: str) -> RunRow | None: ...

    async def dashboard(self, since: datetime, agent: str | None = None) -> list[DayRow]: ...


async def query_runs(store: EventStore, query: RunQuery) -> list[RunRow]:
    """`store.query_runs(query)`, or for a store that keeps no index, its runs folded one by one."""
    if isinstance(store, IndexedStore):
        return await store.query_runs(query)
    return select(await _folded(store), query)


async def run_row(store: EventStore, run_id: str) -> RunRow | None:
    if isinstance(store, IndexedStore):
        return await store.run_row(run_id)
    return RunRow.of(await store.load(run_id))


async def dashboard(store: EventStore, since: datetime, agent: str | None = None) -> list[DayRow]:
    if isinstance(store, IndexedStore):
        return await store.dashboard(since, agent)
    return day_rows(await _folded(store), since, agent)


async def _folded(store: EventStore) -> list[RunRow]:
    rows = []
    for summary in await store.list_runs(limit=1_000_000_000):
        row = RunRow.of(await store.load(summary.run_id))
        if row is not None:
            rows.append(row)
    return rows
