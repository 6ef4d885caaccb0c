"""`ThreadState`: the snapshot of a thread (`agent-state.txt`), derived from its finished runs.

Nothing here is bookkeeping of its own: every field is a fold over the thread's runs, each read
from that run's `RunState` (itself a fold over the journal), so a cached snapshot can always be
rebuilt and checked. `to_dict` / `from_dict` are its wire form; fields added after the first
version (`guardrail_retries`, `accumulated_cost_usd`, and `metadata`) default when absent, so
snapshots written by an older eudaimon stay readable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from eudaimon.core.events import FailureKind
from eudaimon.core.messages import Usage
from eudaimon.core.state import RunState, Status


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadState:
    """What a thread has accumulated over its runs. Immutable: `record` returns a new snapshot."""

    thread_id: str
    turn_count: int = 0
    """Finished runs (one per prompt)."""
    total_usage: Usage = field(default_factory=Usage)
    """Tokens of every model call of the thread, rejected answers and billed failures included."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Free-form, JSON-serializable data the application keeps with the thread."""
    created_at: datetime = field(default_factory=_now)
    guardrail_retries: int = 0
    """Consecutive output-guardrail rejections (RetryWithFeedback) across the thread's runs.
    Carried into the next run, so the loop's cap on rejections in a row binds across runs too;
    reset to 0 whenever an answer is accepted."""
    accumulated_cost_usd: float | None = None
    """USD of the thread's model calls, each priced at the model that served it, so a thread
    that changed models keeps the true sum. None until a run has a priced call."""

    def record(
        self,
        *,
        usage: Usage = Usage(),
        cost_usd: float | None = None,
        turns: int = 1,
        guardrail_rejections: int = 0,
        answer_accepted: bool = True,
    ) -> ThreadState:
        """The snapshot after one more finished run.

        Args:
            usage: The run's tokens.
            cost_usd: The run's priced cost; None when no call of the run was priced (that
                leaves the thread's cost as it was, None included).
            turns: Turns the run counts for.
            guardrail_rejections: Rejections in the run after its last accepted answer (all of
                them, if none was accepted).
            answer_accepted: Whether the run had an answer accepted; the consecutive count then
                restarts from the run's later rejections instead of adding to the carried one.
        """
        # An unpriced run leaves the cost unknown only if it was unknown; a priced one sums.
        cost = self.accumulated_cost_usd if cost_usd is None else (self.accumulated_cost_usd or 0.0) + cost_usd
        carried = 0 if answer_accepted else self.guardrail_retries
        return replace(
            self,
            turn_count=self.turn_count + turns,
            total_usage=self.total_usage + usage,
            accumulated_cost_usd=cost,
            guardrail_retries=carried + guardrail_rejections,
        )

    def record_run(self, run: RunState) -> ThreadState:
        """The snapshot after `run`, read from its folded state.

        The run's consecutive-rejection count is taken as the thread's: the fold seeds it from
        `run_started.guardrail_retries` (this snapshot's count, written when the run started)
        and resets it when an answer is accepted, so it already carries the thread's streak.
        A run that failed on the cap of rejected answers has paid for that streak: the next
        run of the thread starts from 0, or every later prompt would fail before its model call.

        Raises:
            ValueError: `run` has not finished; a paused run would be counted again when it does.
        """
        if not run.status.is_terminal:
            raise ValueError(f"run {run.run_id} is {run.status}; record a run in its thread only once it has finished")
        after = self.record(usage=run.usage, cost_usd=run.cost_usd if run.cost_known else None)
        capped = run.status is Status.FAILED and run.error_kind is FailureKind.OUTPUT_REJECTED
        return replace(after, guardrail_retries=0 if capped else run.guardrail_rejections)

    @classmethod
    def from_runs(
        cls, thread_id: str, runs: Iterable[RunState], *, created_at: datetime, metadata: Mapping[str, Any] = {}
    ) -> ThreadState:
        """Rebuild a thread's snapshot from its finished runs, oldest first."""
        state = cls(thread_id=thread_id, created_at=created_at, metadata=dict(metadata))
        for run in runs:
            state = state.record_run(run)
        return state

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form of the snapshot."""
        return {
            "thread_id": self.thread_id,
            "turn_count": self.turn_count,
            "total_usage": {
                "input_tokens": self.total_usage.input_tokens,
                "output_tokens": self.total_usage.output_tokens,
                "cached_tokens": self.total_usage.cached_tokens,
            },
            "metadata": dict(self.metadata),
            "created_at": self.created_at.isoformat(),
            "guardrail_retries": self.guardrail_retries,
            "accumulated_cost_usd": self.accumulated_cost_usd,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ThreadState:
        """A snapshot from `to_dict`'s form, or an older one without the newer fields.

        Raises:
            ValueError: a field every version writes is missing, or a field has the wrong type.
        """
        try:
            usage = data.get("total_usage") or {}
            created_at = data["created_at"]
            cost = data.get("accumulated_cost_usd")
            return cls(
                thread_id=str(data["thread_id"]),
                turn_count=int(data.get("turn_count", 0)),
                total_usage=Usage(
                    input_tokens=int(usage.get("input_tokens", 0)),
                    output_tokens=int(usage.get("output_tokens", 0)),
                    cached_tokens=int(usage.get("cached_tokens", 0)),
                ),
                metadata=dict(data.get("metadata") or {}),
                created_at=created_at if isinstance(created_at, datetime) else datetime.fromisoformat(created_at),
                guardrail_retries=int(data.get("guardrail_retries") or 0),
                accumulated_cost_usd=None if cost is None else float(cost),
            )
        except KeyError as exc:
            raise ValueError(f"thread snapshot has no {exc.args[0]!r} field: {dict(data)!r}") from exc
        except (TypeError, AttributeError) as exc:
            raise ValueError(f"thread snapshot is malformed ({exc}): {dict(data)!r}") from exc
