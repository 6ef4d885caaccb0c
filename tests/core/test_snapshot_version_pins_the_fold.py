"""A snapshot is a `RunState` written out; it is only valid for the fold that wrote it.

Nothing else ties `FOLD_VERSION` to `RunState`'s fields and to what `apply` does, so this test
pins a fingerprint of both next to the version. Change a field, or `apply` and the helpers it
calls, without bumping `FOLD_VERSION` (in `eudaimon/core/codec.py`), and it fails: old
snapshots would silently decode into a state the new fold would never produce. On a bump, pin
the new fingerprint below and write the new snapshot fixtures
(`python tests/journal/test_snapshots_beside_journals.py`).
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import hashlib
import inspect
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from eudaimon.core import state as state_module
from eudaimon.core.codec import FOLD_VERSION
from eudaimon.core.events import CallRef, FailureKind, ParentRef, ToolRecord
from eudaimon.core.messages import Message, ToolCall, Usage
from eudaimon.core.state import BudgetLimit, CallProgress, CallStatus, RunState, Status

PINNED = {
    2: "f5eee3718ccb6f50",
    3: "3e4264db856ce558",
    4: "5ec30f5a1db22583",
    5: "a98f6d405c990dd4",
    6: "4dec61deba7665b6",
    7: "d31bed549c15477a",
    8: "527b600c0cca85f2",
}
"""FOLD_VERSION -> the fingerprint of the RunState shape and fold that version writes."""

SHAPES: tuple[type, ...] = (
    RunState,
    CallProgress,
    BudgetLimit,
    ParentRef,
    CallRef,
    ToolRecord,
    Message,
    ToolCall,
    Usage,
)
"""Every dataclass a snapshot holds."""
ENUMS: tuple[type[enum.Enum], ...] = (Status, CallStatus, FailureKind)
FOLD: tuple[Callable[..., Any], ...] = (
    RunState.from_events,
    RunState.apply,
    RunState._derived_id,
    RunState._bill,
    RunState._set_call,
    RunState._settle,
    RunState._refresh_batch,
    RunState._end,
    state_module._with_id,
    state_module.finish_correction,
)
"""`apply` and everything it calls to write the state."""


def _code(fn: Callable[..., Any]) -> str:
    """The function's syntax tree without docstrings: comments and formatting do not count."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined, index]
    # Python 3.13 leaves empty fields out of dumps unless asked: ask, so versions agree.
    options: dict[str, Any] = {"show_empty": True} if sys.version_info >= (3, 13) else {}
    return ast.dump(tree, include_attributes=False, **options)


def fingerprint(
    shapes: Sequence[type] = SHAPES, enums: Sequence[type[enum.Enum]] = ENUMS, fold: Sequence[Callable[..., Any]] = FOLD
) -> str:
    parts = [f"{cls.__name__}:" + ",".join(f"{f.name}:{f.type}" for f in dataclasses.fields(cls)) for cls in shapes]
    parts += [f"{e.__name__}:" + ",".join(f"{m.name}={m.value}" for m in e) for e in enums]
    parts += [_code(fn) for fn in fold]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def test_the_snapshot_version_changes_whenever_the_state_or_its_fold_does() -> None:
    """Bug: snapshots could drift from the fold silently. The fingerprint of RunState's fields and
    of `apply` is pinned for each FOLD_VERSION; a change to either without a new version fails."""
    assert FOLD_VERSION in PINNED, f"FOLD_VERSION {FOLD_VERSION} has no pinned fingerprint; pin {fingerprint()!r}"
    assert fingerprint() == PINNED[FOLD_VERSION], (
        f"RunState or its fold changed (fingerprint {fingerprint()!r}) but FOLD_VERSION is still "
        f"{FOLD_VERSION}: bump FOLD_VERSION in eudaimon/core/codec.py, pin the new fingerprint here, "
        "and write the new snapshot fixtures"
    )


@dataclasses.dataclass
class _Grown(RunState):
    extra: int = 0


def _apply_differently(self: RunState, event: object) -> None:
    self.steps += 2


def _documented(self: RunState, event: object) -> None:
    """The same body as `_apply_differently`, with a docstring and a comment."""
    self.steps += 2  # a comment does not change what the fold does


def test_the_fingerprint_sees_a_new_field_a_changed_fold_and_a_new_enum_member() -> None:
    """The check can fail: a field added, `apply` rewritten, or a status added each change it,
    while a docstring or a comment does not."""
    base = fingerprint()
    assert fingerprint(shapes=(_Grown, *SHAPES[1:])) != base
    assert fingerprint(fold=(_apply_differently, *FOLD[1:])) != base
    grown = enum.StrEnum("Status", {m.name: m.value for m in Status} | {"PAUSED": "paused"})  # type: ignore[misc]
    assert fingerprint(enums=(grown, *ENUMS[1:])) != base

    assert _code(_documented).replace("_documented", "f") == _code(_apply_differently).replace(
        "_apply_differently", "f"
    )
