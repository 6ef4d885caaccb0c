"""The run and call a tool is serving, for tools that start runs of their own.

An agent used as a tool journals its child run in its parent's store, links it to the parent's
call, and spends from the parent's budget; a handoff hands over the parent's history. They
read all that here, set by the runtime around each call, so `ToolContext` stays what a plain
tool needs.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from eudaimon.core.state import RunState
from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.stores.base import EventStore


@dataclass(frozen=True, slots=True)
class CallScope:
    store: EventStore
    state: RunState
    """The calling run's state, live: read it during the call, never keep it."""
    call_id: str
    budget_usd_left: float | None = None
    budget_tokens_left: int | None = None
    cancel: CancellationToken | None = None
    """The calling run's token: a child run stops when its parent is cancelled."""


RUNS_A_CHILD = "_eudaimon_runs_a_child"
"""Set on the function of a tool that starts a child run (an agent used as a tool, a handoff):
a runtime that gives a call its scope only when the call needs one (a Temporal tool activity)
looks for it."""

current_call: ContextVar[CallScope | None] = ContextVar("eudaimon_current_call", default=None)


def child_run_id(parent_run_id: str, call_id: str) -> str:
    """The id of the run a call starts (an agent used as a tool, a handoff): derived, so that
    calling again after a crash finds the same child."""
    return f"{parent_run_id}.{call_id}"
