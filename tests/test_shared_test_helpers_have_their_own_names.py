"""Test folders can be collected together in any order.

Test folders are not packages, so every `conftest.py` is imported as a module named `conftest`,
and `from conftest import X` in a test gets whichever folder's conftest came first: running
`pytest tests/telemetry tests/providers` failed to collect (`cannot import name 'FakeOpenAI'
from 'conftest' (tests/telemetry/conftest.py)`). What tests share beyond fixtures lives in a
module with a name of its own (`_fake_providers.py`, `_spans.py`, …).

The helpers of tests/server play three roles, and their names say which: `_<topic>_support.py`
(imported by tests), `_<topic>_agents.py` (served by a test server, by name) and
`_<topic>_app.py` (run as a program). Sample tools, agents and stores every folder uses are the
`support` package (tests/support).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).parent


def _names_conftest(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.module == "conftest"
    return isinstance(node, ast.Import) and any(alias.name == "conftest" for alias in node.names)


def _imports_of_conftest(path: Path) -> list[int]:
    return [node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if _names_conftest(node)]


def test_no_test_module_imports_a_conftest_by_name() -> None:
    offenders = [
        f"{path.relative_to(TESTS)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line in _imports_of_conftest(path)
    ]
    assert offenders == [], "move what these import into a helper module with its own name: " + ", ".join(offenders)


SERVER = TESTS / "server"
ROLES = {
    "support": "imported by the tests (or the served agents) beside it",
    "agents": "agents a test server loads by name (`eudaimon serve --agent _x_agents:NAME`)",
    "app": "an application a test runs as a program of its own (`python _x_app.py …`, uvicorn inside)",
}
"""The helper modules of tests/server, by the last word of their name: `_<topic>_<role>.py`."""


def helper_roles(folder: Path) -> dict[Path, str | None]:
    """Each module under `folder` that is neither a test nor a conftest, with the role its name
    says (None: a name that says none)."""
    roles: dict[Path, str | None] = {}
    for path in sorted(folder.rglob("*.py")):
        if path.name.startswith("test_") or path.name == "conftest.py":
            continue
        match = re.fullmatch(r"_[a-z0-9_]+_(support|agents|app)\.py", path.name)
        roles[path] = match[1] if match else None
    return roles


def plays_its_role(path: Path, role: str, sources: dict[Path, str]) -> bool:
    """Whether the module at `path` is used as its name says, by the other modules in `sources`."""
    module = path.stem
    others = [text for other, text in sources.items() if other != path]
    if role == "agents":
        return any(f"{module}:" in text for text in others)
    if role == "app":
        return 'if __name__ == "__main__":' in sources[path] and any(path.name in text for text in others)
    return any(re.search(rf"^\s*(from {module} import|import {module}\b)", text, re.M) for text in others)


def test_server_helpers_say_their_role_and_play_it() -> None:
    """Invariant: a helper under tests/server is `_<topic>_support.py`, `_<topic>_agents.py` or
    `_<topic>_app.py`, and is used as that: imported by tests, served by name, run as a program.
    (They were named three ways, `_x_support`, `x_agents`, `x_app` and `_backends`.)"""
    sources = {path: path.read_text(encoding="utf-8") for path in sorted(SERVER.rglob("*.py"))}
    misnamed = [str(path.relative_to(TESTS)) for path, role in helper_roles(SERVER).items() if role is None]
    assert misnamed == [], f"name these _<topic>_<role>.py, role one of {sorted(ROLES)}: {misnamed}"
    miscast = [
        f"{path.relative_to(TESTS)} ({ROLES[role]})"
        for path, role in helper_roles(SERVER).items()
        if role is not None and not plays_its_role(path, role, sources)
    ]
    assert miscast == [], "these are not used as their names say: " + ", ".join(miscast)


def test_the_role_check_sees_a_misnamed_and_a_miscast_helper(tmp_path: Path) -> None:
    (tmp_path / "_backends.py").write_text("")
    (tmp_path / "_ghost_agents.py").write_text("")
    (tmp_path / "test_x.py").write_text("import _backends\n")
    roles = helper_roles(tmp_path)
    assert roles == {tmp_path / "_backends.py": None, tmp_path / "_ghost_agents.py": "agents"}
    sources = {path: path.read_text() for path in tmp_path.glob("*.py")}
    assert not plays_its_role(tmp_path / "_ghost_agents.py", "agents", sources)
    (tmp_path / "test_x.py").write_text('SERVE = ("--agent", "_ghost_agents:one")\n')
    sources = {path: path.read_text() for path in tmp_path.glob("*.py")}
    assert plays_its_role(tmp_path / "_ghost_agents.py", "agents", sources)
