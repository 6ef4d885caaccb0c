"""A run's row in the store's index: what listings, search and the dashboard read, kept by every
append instead of folded per request.

`RunRow.advance(events)` is a pure function of the journal, as `RunState.apply` is, so the
store can keep a run's row in the same transaction as the events it follows from, and a row
at `next_seq` n is the same whoever wrote events 0..n-1 (a store may keep the last row it
wrote and skip reading it back). The status mirrors the fold's own rule (`RunState._refresh_batch`):
it tracks the current batch's call statuses, nothing else, so an index and a fold over the same
events agree (a test checks it over the suite's journals and random event sequences).

An event type this module does not know (added by another part of the code) changes only
`event_count`, `updated_at` and `last_event_type`, unless `STATUS_OF_TYPE` maps it to a status.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from eudaimon.core.events import (
    AgentReplaced,
    ApprovalDecided,
    ApprovalRequested,
    ApprovalTimedOut,
    BudgetExceeded,
    Event,
    GuardrailRejected,
    ModelCalled,
    ModelFailed,
    ModelRetryScheduled,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunStarted,
    ToolCompleted,
    ToolDenied,
    ToolOutcomeUnknown,
    ToolReconciled,
    ToolStarted,
    ToolWaiting,
    ToolWoke,
)
from eudaimon.core.messages import Usage
from eudaimon.core.state import TERMINAL_STATUSES, Status

STATUSES: tuple[str, ...] = tuple(
    status.value
    for status in sorted(Status, key=lambda s: 0 if s is Status.QUEUED else 2 if s in TERMINAL_STATUSES else 1)
)
"""Every status a row can have, the fold's `Status` values (`queued` too: a run journaled while its
thread is busy), in the order a run meets them: queued, live, ended (listings offer them so)."""
ENDED = frozenset(status.value for status in TERMINAL_STATUSES)
NOT_ENDED: tuple[str, ...] = tuple(status for status in STATUSES if status not in ENDED)
"""A run in one of these still has a driver, or a wait, that may be gone: queued, running, waiting."""
ERRORED = frozenset({"failed", "budget_exceeded"})
"""The statuses the dashboard's `error_rate` counts."""

STATUS_OF_TYPE: dict[str, str] = {"run_queued": "queued"}
"""Event types outside this module's `match` that set a status (by type name, so a type added
elsewhere needs only a line here)."""

PREVIEW_CHARS = 200
SEARCH_CHARS = 2000
"""How much of the input and of the outcome search reads (each); previews are their start."""
MAX_IDS = 200
"""Most call ids (and tool names) a row keeps for search: a long run's first ones."""

# The call statuses of the current batch, as the fold names them (`CallStatus`): only whether a
# call is unknown, awaiting approval or done decides the run's status.
_REQUESTED, _STARTED, _AWAITING, _APPROVED, _REJECTED, _UNKNOWN, _RETRY, _DONE, _WAITING = (
    "requested",
    "started",
    "awaiting_approval",
    "approved",
    "rejected",
    "unknown",
    "retry",
    "done",
    "waiting",
)


def own_thread(agent: str, run_id: str) -> str:
    """The thread of a run started over HTTP without one: its own, named after it."""
    return f"{agent}:{run_id}"


@dataclass(frozen=True, slots=True)
class RunRow:
    """A run as the index knows it. `advance` makes the next one; nothing else writes it."""

    run_id: str
    agent: str = ""
    thread_id: str | None = None
    status: str = "running"
    created_at: datetime = datetime.min
    updated_at: datetime = datetime.min
    ended_at: datetime | None = None
    event_count: int = 0
    last_event_type: str = ""
    input_text: str = ""
    """The input's first `SEARCH_CHARS` characters."""
    output_text: str | None = None
    error_text: str | None = None
    cost_usd: float = 0.0
    cost_known: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    steps: int = 0
    tools: tuple[str, ...] = ()
    """Tool names the model called, each once, in the order first called."""
    call_ids: tuple[str, ...] = ()
    parent_run_id: str | None = None
    batch: tuple[tuple[str, str], ...] = field(default=())
    """The current batch's calls and their statuses, in the order the model asked for them."""
    version: str = ""
    """The agent's version (`run_started`, then the latest `agent_replaced`)."""
    replay_of: str | None = None
    """The run this one replays: listings and the dashboard leave replays out unless asked."""
    dues: tuple[tuple[str, str], ...] = field(default=())
    """Calls of the batch something must happen to at a time: `(call_id, sortable time)` for an
    approval's deadline and a waiting call's `wake_at`. `due_at` is the earliest: the store
    keeps it in a column of its own, indexed, for the sweepers that fire them."""
    engine: str | None = None
    """The engine driving the run ("" for a process's own loop), as `run_started` named it; None
    in a row written before rows kept it (then only the run's journal tells)."""

    @classmethod
    def of(cls, events: Iterable[Event]) -> RunRow | None:
        """The row of a journal; None when it has no events."""
        row: RunRow | None = None
        for event in events:
            row = (row or cls(event.run_id)).advance((event,))
        return row

    # -- what listings show ------------------------------------------------------------------

    @property
    def in_own_thread(self) -> bool:
        """Whether the run's thread is its own (`own_thread`: a start over HTTP that named none)."""
        return self.thread_id == own_thread(self.agent, self.run_id)

    @property
    def input_preview(self) -> str:
        return self.input_text[:PREVIEW_CHARS]

    @property
    def output_preview(self) -> str | None:
        return None if self.output_text is None else self.output_text[:PREVIEW_CHARS]

    @property
    def error_preview(self) -> str | None:
        return None if self.error_text is None else self.error_text[:PREVIEW_CHARS]

    @property
    def cost(self) -> float | None:
        """The run's cost in USD; None while no call of it was priced (unknown, not free)."""
        return self.cost_usd if self.cost_known else None

    @property
    def duration_ms(self) -> int | None:
        """First event to the terminal one; None while the run has not ended."""
        if self.ended_at is None:
            return None
        return max(0, round((_utc(self.ended_at) - _utc(self.created_at)).total_seconds() * 1000))

    @property
    def pending_approvals(self) -> int:
        return sum(1 for _, status in self.batch if status == _AWAITING)

    @property
    def due_at(self) -> datetime | None:
        """When the first deadline or wake of the run falls due; None: nothing is timed."""
        if not self.dues or self.status in ENDED:
            return None
        return datetime.fromisoformat(min(at for _, at in self.dues))

    @property
    def is_ended(self) -> bool:
        return self.status in ENDED

    @property
    def search_text(self) -> str:
        """What `q` searches, lower-cased: `text_part`, `SEARCH_SEPARATOR`, `ids_part`. A query's
        text goes through `searchable` too, which drops the separator's `\x1f`, so a match is
        one inside either part, never across them: stores may index the parts apart."""
        return self.text_part + SEARCH_SEPARATOR + self.ids_part

    @property
    def text_part(self) -> str:
        """Run and thread ids, input, outcome: written when the run starts and when it ends."""
        parts = [self.run_id, self.thread_id or "", self.input_text, self.output_text or "", self.error_text or ""]
        return searchable("\n".join(parts))

    @property
    def ids_part(self) -> str:
        """Tool names and call ids: longer with every step that calls a tool."""
        return searchable("\n".join([*self.tools, *self.call_ids]))

    def text_key(self) -> tuple[object, ...]:
        """What `text_part` is made of: equal keys, equal texts (cheaper to compare)."""
        return (self.thread_id, self.input_text, self.output_text, self.error_text)

    def ids_key(self) -> tuple[object, ...]:
        return (self.tools, self.call_ids)

    # -- the fold ------------------------------------------------------------------------------

    def advance(self, events: Iterable[Event]) -> RunRow:
        """The row after `events`, which follow on from this one (events `event_count`, … of the run).

        The fields are changed in one dict, in place, and the row made once per batch (a
        `replace` per event was most of an append's cost for the index)."""
        state = dict(zip(_FIELDS, _values(self), strict=True))
        for event in events:
            _apply(state, event)
        row = object.__new__(RunRow)  # its fields set as `__init__` would, at a third of the cost
        for put, value in zip(_PUTS, state.values(), strict=True):
            put(row, value)
        return row

    # -- storage -------------------------------------------------------------------------------

    def to_json(self) -> str:
        body = {
            "run_id": self.run_id,
            "agent": self.agent,
            "thread_id": self.thread_id,
            "status": self.status,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "ended_at": None if self.ended_at is None else self.ended_at.isoformat(),
            "event_count": self.event_count,
            "last_event_type": self.last_event_type,
            "input_text": self.input_text,
            "output_text": self.output_text,
            "error_text": self.error_text,
            "cost_usd": self.cost_usd,
            "cost_known": self.cost_known,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "steps": self.steps,
            "tools": self.tools,
            "call_ids": self.call_ids,
            "parent_run_id": self.parent_run_id,
            "batch": self.batch,
            "version": self.version,
            "replay_of": self.replay_of,
            **({"dues": self.dues} if self.dues else {}),
            **({"engine": self.engine} if self.engine is not None else {}),
        }
        return _encode(body)

    @classmethod
    def from_json(cls, text: str) -> RunRow:
        """Raises `ValueError` (or `KeyError`, `TypeError`) for a body this module did not write."""
        body = json.loads(text)
        ended = body["ended_at"]
        return cls(
            run_id=str(body["run_id"]),
            agent=str(body["agent"]),
            thread_id=body["thread_id"],
            status=str(body["status"]),
            created_at=datetime.fromisoformat(body["created_at"]),
            updated_at=datetime.fromisoformat(body["updated_at"]),
            ended_at=None if ended is None else datetime.fromisoformat(ended),
            event_count=int(body["event_count"]),
            last_event_type=str(body["last_event_type"]),
            input_text=str(body["input_text"]),
            output_text=body["output_text"],
            error_text=body["error_text"],
            cost_usd=float(body["cost_usd"]),
            cost_known=bool(body["cost_known"]),
            input_tokens=int(body["input_tokens"]),
            output_tokens=int(body["output_tokens"]),
            steps=int(body["steps"]),
            tools=tuple(str(t) for t in body["tools"]),
            call_ids=tuple(str(c) for c in body["call_ids"]),
            parent_run_id=body["parent_run_id"],
            batch=tuple((str(c), str(s)) for c, s in body["batch"]),
            version=str(body.get("version", "")),
            replay_of=body.get("replay_of"),
            dues=tuple((str(c), str(at)) for c, at in body.get("dues", ())),
            engine=None if body.get("engine") is None else str(body["engine"]),
        )


_FIELDS = tuple(f.name for f in fields(RunRow))
_values = operator.attrgetter(*_FIELDS)
"""A row's fields in `_FIELDS` order, read in one call (a comprehension of `getattr`s cost 4x)."""
_PUTS = tuple(RunRow.__dict__[name].__set__ for name in _FIELDS)
"""Each field's slot setter: a frozen row's `__init__` goes through `object.__setattr__` per field."""
_encode = json.JSONEncoder(separators=(",", ":")).encode
"""Made once, not per `json.dumps` call (an append writes a body). ASCII: a lone surrogate or a
NUL stays escaped; tuples are written as arrays."""


def _apply(s: dict[str, Any], event: Event) -> None:
    """Change the fields `event` changes, in place, as `RunState.apply` changes those they mirror."""
    first = s["event_count"] == 0
    s["event_count"] += 1
    s["updated_at"] = event.at
    s["last_event_type"] = event.type
    data = event.data
    match data:
        case RunStarted():
            parent = data.parent.run_id if data.parent is not None else None
            if parent is None and data.parent_call is not None:
                parent = data.parent_call.run_id
            s.update(
                agent=data.agent,
                thread_id=data.thread_id,
                input_text=data.input[:SEARCH_CHARS],
                parent_run_id=parent,
                status=s["status"] if s["status"] in ENDED else "running",
                version=data.version,
                replay_of=data.replay_of,
                engine=data.engine,
            )
            if first:
                s["created_at"] = event.at
        case ModelCalled():
            _billed(s, data.usage, data.cost_usd)
            s["steps"] += 1
            calls = data.message.tool_calls
            batch: dict[str, str] = {}
            for call in calls:
                batch.setdefault(call.id, _REQUESTED)
            s["batch"] = tuple(batch.items())
            s["dues"] = ()
            if calls:
                s["tools"] = _added(s["tools"], (c.name for c in calls))
                s["call_ids"] = _added(s["call_ids"], (c.id for c in calls))
        case ToolStarted():
            _set_call(s, data.call_id, _STARTED)
        case ToolCompleted():
            if data.child_run_id is not None:
                _billed(s, data.usage, data.cost_usd)
            _set_call(s, data.call_id, _DONE)
        case ApprovalRequested():
            _set_call(s, data.call_id, _AWAITING)
            if data.deadline is not None:
                _due(s, data.call_id, data.deadline)
        case ApprovalDecided():
            _set_call(s, data.call_id, _APPROVED if data.approved else _REJECTED)
            _due(s, data.call_id, None)
        case ApprovalTimedOut():
            _set_call(s, data.call_id, _REJECTED)
            _due(s, data.call_id, None)
        case ToolWaiting():
            _set_call(s, data.call_id, _WAITING)
            _due(s, data.call_id, data.wake_at)
        case ToolWoke():
            _set_call(s, data.call_id, _RETRY)
            _due(s, data.call_id, None)
        case ToolDenied():
            _set_call(s, data.call_id, _DONE)
        case ToolOutcomeUnknown():
            _set_call(s, data.call_id, _UNKNOWN)
        case ToolReconciled():
            _set_call(s, data.call_id, _RETRY if data.retry else _DONE)
        case ModelRetryScheduled():
            if data.observed_usage is not None:
                s["input_tokens"] += data.observed_usage.input_tokens
                s["output_tokens"] += data.observed_usage.output_tokens
        case ModelFailed():
            _billed(s, data.usage, data.cost_usd)
        case GuardrailRejected():
            _billed(s, data.usage, data.cost_usd)
            s["steps"] += 1
        case RunCompleted():
            s.update(_ended(event, "completed"), output_text=data.output[:SEARCH_CHARS], error_text=None)
        case RunFailed():
            s.update(_ended(event, "failed"), error_text=data.error[:SEARCH_CHARS])
        case BudgetExceeded():
            s.update(_ended(event, "budget_exceeded"), error_text=data.reason[:SEARCH_CHARS])
        case RunCancelled():
            s.update(_ended(event, "cancelled"), error_text=(data.reason or "cancelled")[:SEARCH_CHARS])
        case AgentReplaced():
            s["version"] = data.version
        case _:
            status = STATUS_OF_TYPE.get(event.type)
            if status is not None:
                s["status"] = status
            if first:  # a run opened by another kind of event (`run_queued`)
                s.update(
                    created_at=event.at,
                    agent=str(getattr(data, "agent", "") or ""),
                    thread_id=getattr(data, "thread_id", None),
                    input_text=str(getattr(data, "input", "") or "")[:SEARCH_CHARS],
                )


def _billed(s: dict[str, Any], usage: Usage, cost_usd: float | None) -> None:
    """The fold's `_bill`: tokens add up; a cost makes the run's cost known."""
    s["input_tokens"] += usage.input_tokens
    s["output_tokens"] += usage.output_tokens
    if cost_usd is not None:
        s["cost_usd"] += cost_usd
        s["cost_known"] = True


def _due(s: dict[str, Any], call_id: str, at: datetime | None) -> None:
    """Set (or, with None, drop) the time `call_id` falls due."""
    dues = tuple(d for d in s["dues"] if d[0] != call_id)
    s["dues"] = dues if at is None else (*dues, (call_id, sortable(at)))


def _set_call(s: dict[str, Any], call_id: str, status: str) -> None:
    """The fold's `_set_call` and `_refresh_batch`: the call's status, then the run's. A call
    outside the batch (which the fold refuses as corrupt) changes nothing."""
    batch = dict(s["batch"])
    if call_id not in batch:
        return
    batch[call_id] = status
    s["batch"] = tuple(batch.items())
    if s["status"] not in ENDED:
        statuses = set(batch.values())
        if _UNKNOWN in statuses:
            s["status"] = "awaiting_reconciliation"
        elif _AWAITING in statuses:
            s["status"] = "awaiting_approval"
        elif _WAITING in statuses:
            s["status"] = "waiting"
        else:
            s["status"] = "running"


def _ended(event: Event, status: str) -> dict[str, Any]:
    return {"status": status, "ended_at": event.at}


def _added(kept: tuple[str, ...], new: Iterable[str]) -> tuple[str, ...]:
    if len(kept) >= MAX_IDS:
        return kept  # full: the same tuple, so the search text is seen unchanged at a glance
    added = list(kept)
    for name in new:
        if name not in added and len(added) < MAX_IDS:
            added.append(name)
    return tuple(added)


SEARCH_SEPARATOR = "\x1f"
"""Between the parts: `searchable` drops it from every text, so no match can span it."""


def searchable(text: str) -> str:
    """Lower-cased, without NUL, lone surrogates or the separator: what every store can keep."""
    text = text.lower().replace("\x00", "").replace("\x1f", "")
    return text.encode("utf-8", "replace").decode("utf-8")


def _utc(at: datetime) -> datetime:
    return at.astimezone(UTC) if at.tzinfo is not None else at.replace(tzinfo=UTC)


def sortable(at: datetime) -> str:
    """A time whose text sorts in time order: in UTC (a naive time taken as UTC), with microseconds."""
    return _utc(at).isoformat(timespec="microseconds")
