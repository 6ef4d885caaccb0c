"""`eudaimon runs show`: the tree of runs below a run (agents as tools, handoffs), and the
calls anywhere in it that wait for a decision, decided on the run shown."""

from __future__ import annotations

from dataclasses import dataclass

from rich.markup import escape
from rich.text import Text
from rich.tree import Tree

from eudaimon.cli._render import status_text, usage_text
from eudaimon.core.state import CallStatus, PendingCall, RunState
from eudaimon.runtime.process.load_state import load_state
from eudaimon.runtime.process.tree import run_tree, waiting_calls
from eudaimon.stores.base import EventStore


@dataclass(frozen=True, slots=True)
class TreeView:
    runs: list[tuple[int, str, RunState]]
    awaiting_approval: list[PendingCall]
    outcome_unknown: list[PendingCall]

    @property
    def has_children(self) -> bool:
        return len(self.runs) > 1


async def load_tree(store: EventStore, state: RunState) -> TreeView:
    return TreeView(
        await run_tree(store, state),
        await waiting_calls(store, state, CallStatus.AWAITING_APPROVAL),
        await waiting_calls(store, state, CallStatus.UNKNOWN),
    )


async def parent_line(store: EventStore, state: RunState) -> str | None:
    """Where a child run hangs: its parent run and call."""
    if state.parent_call is None:
        return None
    ref = state.parent_call
    try:
        parent = await load_state(store, ref.run_id)
    except Exception:
        return f"child of {ref.run_id} (call {ref.call_id}; that run is gone)"
    return f"child of {ref.run_id} (agent {parent.agent!r}, call {ref.call_id})"


def render_tree(view: TreeView) -> Tree:
    """One line per run: agent, status, usage, and the call that started it."""
    nodes: list[Tree] = []
    root: Tree | None = None
    for depth, call_id, state in view.runs:
        label = Text.assemble(
            (state.run_id, "bold"),
            f"  {escape(state.agent)}  ",
            status_text(state.status),
            f"  {usage_text(state.usage)}",
            f"  via call {call_id}" if depth else "",
            f"  → handed off to {state.handed_off_to}" if state.handed_off_to else "",
        )
        if root is None:
            root = Tree(label)
            nodes = [root]
            continue
        del nodes[depth:]
        nodes.append(nodes[-1].add(label))
    assert root is not None
    return root
