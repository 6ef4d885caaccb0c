"""Check journals against the ledger: what the journal claims against what really ran.

`audit` walks each run's raw events call by call (not only the folded state, which keeps
just the current batch) and holds them against the ledger of executions. The rules it
enforces are DESIGN §4's, stated from the outside:

- every execution carries the key sha256(f"{run_id}:{call_id}") and an attempt whose
  `tool_started` intent is in the journal; no (run, call, attempt) ran twice. The exception is
  a READ call, which may run before its intent is committed (an all-READ step commits once,
  after its calls): a process that died before that commit may have run it with no intent in
  the journal, and the run's next driver runs it again as the same attempt, so a READ
  (run, call, attempt) may have run any number of times in dead processes and once in a live one;
- a `tool_completed` after attempt k means attempt k ran exactly once (a READ: at least once,
  and at most once in a live process);
- a call found started-but-not-completed is re-run (attempt k+1) only if its tool is READ or
  idempotent, and attempt k was then in a dead process (killed, or crashed) or never ran;
- a WRITE / IRREVERSIBLE call runs again only after an operator's `tool_reconciled(retry=True)`;
- `tool_outcome_unknown` names exactly such an ambiguous call: a non-rerunnable attempt whose
  process died (or that never ran);
- the journal has seqs 0..n-1 with no gap or duplicate, and folds.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from _proc_support import READ_ONLY, RERUNNABLE, Execution

from eudaimon.core.digest import idempotency_key
from eudaimon.core.events import (
    Event,
    ToolCompleted,
    ToolDenied,
    ToolOutcomeUnknown,
    ToolReconciled,
    ToolStarted,
)
from eudaimon.core.state import RunState, Status


@dataclass
class Audit:
    runs: int = 0
    events: int = 0
    executions: int = 0
    reruns: int = 0
    """Recovery re-ran a READ/idempotent call (attempt k+1 after an interrupted attempt k)."""
    operator_retries: int = 0
    unknown_ran: int = 0
    """`tool_outcome_unknown` for a call that had in fact run (the ledger has it)."""
    unknown_never_ran: int = 0
    """`tool_outcome_unknown` for a call whose intent was committed but which never ran."""
    uncommitted_reads: int = 0
    """READ executions in a process that died before the step's one commit (no intent landed)."""
    statuses: Counter[str] = field(default_factory=Counter)
    completed: set[tuple[str, str, int]] = field(default_factory=set)
    """(run, call, attempt) whose `tool_completed` is in the journal."""
    problems: list[str] = field(default_factory=list)

    @property
    def unknowns(self) -> int:
        return self.unknown_ran + self.unknown_never_ran

    def fail(self, message: str) -> None:
        self.problems.append(message)


def check_sequence(run_id: str, events: list[Event], audit: Audit) -> RunState | None:
    """Seqs 0..n-1, one run id, and a fold that accepts them (it refuses gaps and duplicates)."""
    seqs = [e.seq for e in events]
    if seqs != list(range(len(events))):
        audit.fail(f"{run_id}: seqs are not 0..{len(events) - 1}: {seqs}")
        return None
    if any(e.run_id != run_id for e in events):
        audit.fail(f"{run_id}: foreign rows in the journal")
    return RunState.from_events(events)


def audit_runs(
    journals: dict[str, list[Event]],
    executions: Iterable[Execution],
    dead: Collection[str],
    *,
    expect_status: str | None = Status.COMPLETED,
) -> Audit:
    """Hold every run's journal against the ledger. `dead`: incarnations that were SIGKILLed
    or ended abruptly, whose in-flight calls are allowed to be ambiguous."""
    audit = Audit()
    ran: dict[tuple[str, str, int], list[Execution]] = defaultdict(list)
    for ex in executions:
        ran[(ex.run, ex.call, ex.attempt)].append(ex)
        audit.executions += 1
        if ex.key != idempotency_key(ex.run, ex.call):
            audit.fail(f"{ex.run}/{ex.call} attempt {ex.attempt} ran with key {ex.key}, not sha256(run:call)")
        if ex.run not in journals:
            audit.fail(f"ledger names run {ex.run}, which has no journal")
    for key, entries in ran.items():
        live = [e for e in entries if e.incarnation not in dead]
        if len(entries) > 1 and (entries[0].tool not in READ_ONLY or len(live) > 1):
            audit.fail(f"{key} ran {len(entries)} times: {[e.incarnation for e in entries]}")

    intents: set[tuple[str, str, int]] = set()
    for run_id, events in journals.items():
        audit.runs += 1
        audit.events += len(events)
        state = check_sequence(run_id, events, audit)
        if state is None:
            continue
        audit.statuses[state.status.value] += 1
        if expect_status is not None and state.status != expect_status:
            audit.fail(f"{run_id}: ended {state.status.value}, expected {expect_status}")
        _audit_calls(run_id, events, ran, dead, intents, audit)

    for key, entries in ran.items():
        if key in intents:
            # A READ run again as the same attempt: every run but the one whose intent landed
            # was in a process that died before its step's commit (a committed intent that
            # its process did not complete is re-run as the next attempt instead).
            audit.uncommitted_reads += len(entries) - 1
        elif entries[0].tool in READ_ONLY and all(e.incarnation in dead for e in entries):
            audit.uncommitted_reads += len(entries)
        else:
            audit.fail(f"{key} ran without a committed tool_started intent for that attempt")
    return audit


@dataclass
class _Call:
    tool: str
    attempt: int = 0
    phase: str = "none"  # none | open | unknown | retry | done
    retries: int = 0


def _audit_calls(
    run_id: str,
    events: list[Event],
    ran: dict[tuple[str, str, int], list[Execution]],
    dead: Collection[str],
    intents: set[tuple[str, str, int]],
    audit: Audit,
) -> None:
    calls: dict[str, _Call] = {}

    def executed(call: str, attempt: int) -> list[Execution]:
        return ran.get((run_id, call, attempt), [])

    def died_or_never_ran(call: str, attempt: int) -> bool:
        return all(ex.incarnation in dead for ex in executed(call, attempt))

    for event in events:
        data = event.data
        where = f"{run_id} seq {event.seq}"
        if isinstance(data, ToolStarted):
            c = calls.setdefault(data.call_id, _Call(data.tool))
            if data.idempotency_key != idempotency_key(run_id, data.call_id):
                audit.fail(f"{where}: tool_started carries key {data.idempotency_key}")
            if data.attempt != c.attempt + 1:
                audit.fail(f"{where}: {data.call_id} attempt {data.attempt} follows attempt {c.attempt}")
            if c.phase == "open":  # recovery re-runs an interrupted attempt
                if data.tool not in RERUNNABLE:
                    audit.fail(f"{where}: non-idempotent {data.tool} {data.call_id} re-run without reconciliation")
                elif not died_or_never_ran(data.call_id, c.attempt):
                    audit.fail(f"{where}: {data.call_id} attempt {c.attempt} ran in a live process yet was re-run")
                else:
                    audit.reruns += 1
            elif c.phase == "retry":
                audit.operator_retries += 1
            elif c.phase != "none":
                audit.fail(f"{where}: {data.call_id} started again while {c.phase}")
            c.attempt, c.phase = data.attempt, "open"
            intents.add((run_id, data.call_id, data.attempt))
        elif isinstance(data, ToolCompleted):
            c = calls.setdefault(data.call_id, _Call(data.tool))
            if c.phase == "open":
                count = len(executed(data.call_id, c.attempt))
                live = [e for e in executed(data.call_id, c.attempt) if e.incarnation not in dead]
                if count != 1 and not (c.tool in READ_ONLY and count > 1 and len(live) <= 1):
                    audit.fail(f"{where}: {data.call_id} attempt {c.attempt} completed but ran {count} times")
                audit.completed.add((run_id, data.call_id, c.attempt))
            elif c.phase != "none":  # "none": a result with no execution (bad arguments, unknown tool)
                audit.fail(f"{where}: tool_completed for {data.call_id} while {c.phase}")
            c.phase = "done"
        elif isinstance(data, ToolOutcomeUnknown):
            c = calls.get(data.call_id) or _Call(data.tool)
            if c.phase != "open":
                audit.fail(f"{where}: tool_outcome_unknown for {data.call_id}, which is {c.phase}, not in flight")
            elif c.tool in RERUNNABLE:
                audit.fail(f"{where}: tool_outcome_unknown for rerunnable {c.tool} {data.call_id}")
            elif not died_or_never_ran(data.call_id, c.attempt):
                audit.fail(f"{where}: {data.call_id} attempt {c.attempt} completed in a live process, yet unknown")
            elif executed(data.call_id, c.attempt):
                audit.unknown_ran += 1
            else:
                audit.unknown_never_ran += 1
            c.phase = "unknown"
        elif isinstance(data, ToolReconciled):
            c = calls.get(data.call_id) or _Call("?")
            if c.phase != "unknown":
                audit.fail(f"{where}: tool_reconciled for {data.call_id}, which is {c.phase}")
            c.phase = "retry" if data.retry else "done"
        elif isinstance(data, ToolDenied):
            calls.setdefault(data.call_id, _Call(data.tool)).phase = "done"
    for call, c in calls.items():
        if c.phase in ("open", "retry") and events and events[-1].type in ("run_completed",):
            audit.fail(f"{run_id}: {call} is {c.phase} in a completed run")
