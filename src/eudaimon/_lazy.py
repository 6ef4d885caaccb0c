"""Public names imported on first use (PEP 562), written once: as the imports type checkers read.

A package lists its lazy names as imports under `if TYPE_CHECKING:`, where mypy and IDEs read
them; `lazy(__name__, __file__)` reads that same block (the way `lazy_loader.attach_stub` of
Scientific Python's SPEC 1 reads a stub) and returns the package's `__getattr__` and `__dir__`.
So `import eudaimon` loads none of them, a command that only prints its help never pays for
the agent, pydantic or an SDK, and a name is never written in a second list that could drift.
The block is parsed the first time a lazy name (or `__all__`) is asked for, not at import.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from functools import cache
from typing import Any


def lazy(
    package: str, source: str, *, extra: str | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose `source` (its `__file__`) imports its lazy
    names under `if TYPE_CHECKING:`. A package that imports some names itself writes its own
    `__all__` (mypy reads it); else `__all__` is the lazy names. With `extra`, a missing
    third-party package is a `MissingExtra` naming the `pip install` line."""

    @cache
    def homes() -> dict[str, str]:
        from importlib.abc import InspectLoader  # here: `import eudaimon` stays cheap
        from pathlib import Path

        # The loader's `get_source`, not `open`: Temporal's workflow sandbox refuses file reads.
        loader = sys.modules[package].__loader__
        text = loader.get_source(package) if isinstance(loader, InspectLoader) else None
        return typed_homes(text or Path(source).read_text(), package)

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            value: Any = list(homes())
        else:
            home = homes().get(name)
            if home is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            with _needs(extra, f"{package}.{name}"):
                module = importlib.import_module(home)
            value = module if home == f"{package}.{name}" else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        """The public names, loaded or not (a plain `dir()` would miss those not yet imported)."""
        exported: list[str] = getattr(sys.modules[package], "__all__")  # noqa: B009 (may be lazy)
        return sorted(exported)

    return __getattr__, __dir__


def typed_homes(source: str, package: str) -> dict[str, str]:
    """Each name imported under `if TYPE_CHECKING:` in `source`, and the module it comes from
    (`from PACKAGE import sub as sub`: the submodule itself), in the order written."""
    import ast

    tree = ast.parse(source)
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    homes: dict[str, str] = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                name = alias.asname or alias.name
                homes[name] = f"{package}.{name}" if node.module == package else node.module
    return homes


def _needs(extra: str | None, feature: str) -> AbstractContextManager[None]:
    if extra is None:
        return nullcontext()
    from eudaimon._extras import needs  # only packages behind an extra pay for its import

    return needs(extra, feature)
