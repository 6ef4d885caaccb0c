"""Every exception class eudaimon defines is an `EudaimonError` drawn in the tree of `eudaimon.core.errors`.

`except EudaimonError` is promised to catch everything eudaimon raises (DESIGN, core/errors.py),
so an error class outside the tree breaks that promise where it is raised — as `MCPToolError`,
`MCPConnectionLost`, `A2AToolError`, `ToolArgumentsError` and `BadCursor` did.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import eudaimon
import eudaimon.core.errors
from eudaimon.core.errors import EudaimonError, EudaimonWarning

SRC = Path(eudaimon.__file__).parent

SIGNALS = {
    "ModelRetry": "raised by user code (a tool, an output validator) to correct the model",
    "ToolSuspended": "raised by a tool to make the run wait",
    "RetryAfter": "raised by a tool to make its call wait durably and run again",
    "LoopSignal": "the base of the loop's own control-flow signals (runtime/loop/signals.py), never raised itself",
    "ContextRejected": "the loop's own control flow (runtime/loop/model_calls.py), never leaves the runtime",
    "OutcomeLost": "the loop's own control flow (runtime/loop/tool_calls.py), never leaves the runtime",
    "CallCancelled": "the loop's own control flow (runtime/loop/call_watch.py), never leaves the runtime",
    "StreamIncomplete": "a private module's (models/_sdk.py); raised as ModelResponseInvalid",
}
"""Exception classes that are not errors eudaimon raises to its user, and why."""
INTERNAL = {"LoopSignal", "ContextRejected", "OutcomeLost", "CallCancelled", "StreamIncomplete"}
"""The signals above that never reach user code, so the tree a user reads leaves them out."""


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every class named without a leading underscore, anywhere in src/eudaimon, that is an exception."""
    found: dict[str, type[BaseException]] = {}
    for path in sorted(SRC.rglob("*.py")):
        names = [n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef)]
        public = [n for n in names if not n.startswith("_")]
        if not public:
            continue
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        module = importlib.import_module(".".join(parts))
        for name in public:
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, BaseException):
                found[f"{module.__name__}.{name}"] = value
    return found


CLASSES = _exception_classes()


def test_every_exception_class_is_in_the_tree_or_a_named_signal() -> None:
    """Invariant: `except EudaimonError` catches every error eudaimon defines (signals excepted, by name)."""
    outside = sorted(
        qualified
        for qualified, cls in CLASSES.items()
        if not issubclass(cls, EudaimonError | EudaimonWarning) and cls.__name__ not in SIGNALS
    )
    assert not outside, f"make these EudaimonErrors (keeping their other bases) or name them in SIGNALS: {outside}"


def test_the_tree_drawn_in_core_errors_names_every_error() -> None:
    """Invariant: the docstring's tree is the whole tree — each error and signal appears in it."""
    doc = eudaimon.core.errors.__doc__ or ""
    drawn = {word.strip("│├└─ ()`:,") for line in doc.splitlines() for word in line.split()}
    missing = sorted(
        qualified
        for qualified, cls in CLASSES.items()
        if cls.__name__ not in drawn
        and (issubclass(cls, EudaimonError | EudaimonWarning) or cls.__name__ in SIGNALS)
        and cls.__name__ not in INTERNAL
    )
    assert not missing, f"draw these in eudaimon.core.errors' docstring: {missing}"


def test_the_errors_that_were_outside_are_now_caught_by_the_base() -> None:
    """Bug guarded: these were plain Exceptions/ValueErrors; they keep ValueError where they had it."""
    from eudaimon.a2a import A2AToolError
    from eudaimon.mcp import MCPToolError
    from eudaimon.mcp._errors import MCPConnectionLost
    from eudaimon.stores.index import BadCursor
    from eudaimon.tools import ToolArgumentsError

    for cls in (A2AToolError, MCPToolError, MCPConnectionLost, BadCursor, ToolArgumentsError):
        assert issubclass(cls, EudaimonError), cls
    assert issubclass(ToolArgumentsError, ValueError)
    assert issubclass(BadCursor, ValueError)
    assert len(CLASSES) > 40, "the walk found too few exception classes to be looking in the right place"
