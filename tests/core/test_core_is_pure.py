"""`eudaimon.core` is the functional core: no I/O, no clock, no randomness, no outward imports.

Replay depends on it: a fold that read the clock or a file could give a different state
from the same events.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import eudaimon.core

CORE = Path(eudaimon.core.__file__).parent
FORBIDDEN_MODULES = {
    "asyncio",
    "os",
    "random",
    "secrets",
    "socket",
    "sqlite3",
    "subprocess",
    "threading",
    "time",
    "uuid",
    "pathlib",
    "io",
    "shutil",
    "urllib",
    "http",
}
FORBIDDEN_CALLS = {"now", "utcnow", "today", "open", "uuid4", "random", "time", "monotonic", "perf_counter"}


def _modules() -> list[Path]:
    return sorted(CORE.glob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_core_module_has_no_effects(path: Path) -> None:
    """Invariant: core modules import no effectful module and call no clock, RNG or open()."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            names = []
        for name in names:
            root = name.split(".")[0]
            assert root not in FORBIDDEN_MODULES, f"{path.name} imports {name}"
            if root == "eudaimon":
                assert name.startswith("eudaimon.core"), f"{path.name} imports {name}: core must not depend outward"
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            assert called not in FORBIDDEN_CALLS, f"{path.name}:{node.lineno} calls {called}()"


def test_the_check_sees_violations(tmp_path: Path) -> None:
    """Invariant: the purity check itself fails on an effect (it is not vacuous)."""
    tree = ast.parse("import time\nfrom datetime import datetime\nx = datetime.now()\n")
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import)]
    assert imports[0].names[0].name in FORBIDDEN_MODULES
    assert isinstance(calls[0].func, ast.Attribute) and calls[0].func.attr in FORBIDDEN_CALLS
