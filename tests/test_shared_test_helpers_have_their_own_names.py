"""Test folders can be collected together in any order.

Test folders are not packages, so every `conftest.py` is imported as a module named `conftest`,
and `from conftest import X` in a test gets whichever folder's conftest came first: running
`pytest tests/telemetry tests/providers` failed to collect (`cannot import name 'FakeOpenAI'
from 'conftest' (tests/telemetry/conftest.py)`). What tests share beyond fixtures lives in a
module with a name of its own (`_fake_providers.py`, `_spans.py`, …).
"""

from __future__ import annotations

import ast
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
