"""Optional dependencies: which part needs which extra, and the error that names the fix.

The base install carries only what every run needs; providers, stores beyond SQLite, the
server, Temporal, MCP, OpenTelemetry and the price tables are extras (pyproject.toml). A module
that needs one imports its packages inside `needs(...)`, so a missing package surfaces as a
`MissingExtra` with the `pip install` line instead of a bare `ModuleNotFoundError`.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from eudaimon.core.errors import MissingExtra

__all__ = ["available", "needs", "require"]


@contextmanager
def needs(extra: str, feature: str) -> Iterator[None]:
    """Turn a third-party package missing inside the block into `MissingExtra(feature, extra)`.

    A missing eudaimon module is a bug, not a missing extra, and is left as it is.
    """
    try:
        yield
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] == "eudaimon":
            raise
        raise MissingExtra(feature, extra, exc.name) from exc


def available(module: str) -> bool:
    """Whether `module` can be imported, without importing it (a None in `sys.modules` blocks it)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(extra: str, feature: str, *modules: str) -> None:
    """Fail now, with the `pip install` line, when a package `feature` will import later is missing.

    For parts that import their SDK on first use (to keep `import eudaimon` cheap) but should
    refuse to be built without it.
    """
    for module in modules:
        if not available(module):
            raise MissingExtra(feature, extra, module)
