"""The design page (docs/concepts/design.md, once the README's "Design" section) draws
src/eudaimon as it is: every package and top-level module, and every sub-package, each with
one line; nothing that is not there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "eudaimon"


def drawn_tree(readme: str) -> set[str]:
    """The paths the tree block names, relative to src/eudaimon (`stores/sqlite/`, `cli.py`)."""
    design = readme
    block = re.search(r"```text\nsrc/eudaimon/\n(?P<body>.*?)```", design, re.S)
    assert block is not None, "the Design section draws no src/eudaimon/ tree"
    names: set[str] = set()
    parent = ""
    for line in block["body"].splitlines():
        indent = len(line) - len(line.lstrip(" "))
        entries: list[str] = []
        for token in line.split():  # the leading names; the description follows them
            if not token.endswith(("/", ".py")) or token == "/":
                break
            entries.append(token)
        if not entries:
            continue  # a description continued on its own line
        if indent == 2:
            names.update(entries)
            parent = entries[-1] if entries[-1].endswith("/") else ""
        elif indent == 4 and parent:
            names.update(parent + e for e in entries)
    return names


def real_tree() -> set[str]:
    names: set[str] = set()
    for entry in PACKAGE.iterdir():
        if entry.name == "__pycache__" or entry.name == "py.typed":
            continue
        if entry.is_dir():
            names.add(entry.name + "/")
            names.update(
                f"{entry.name}/{sub.name}/" for sub in entry.iterdir() if sub.is_dir() and sub.name != "__pycache__"
            )
        elif entry.suffix == ".py":
            names.add(entry.name)
    return names


def test_readme_design_tree_is_the_package() -> None:
    """Invariant: the drawn tree and src/eudaimon hold the same packages, sub-packages and
    top-level modules (a module moved or added without the design page fails here)."""
    drawn = drawn_tree((ROOT / "docs" / "concepts" / "design.md").read_text(encoding="utf-8"))
    real = real_tree()
    assert drawn - real == set(), f"the design page draws what src/eudaimon does not have: {sorted(drawn - real)}"
    assert real - drawn == set(), f"src/eudaimon has what the design page does not draw: {sorted(real - drawn)}"


def test_the_tree_parser_reads_nested_and_listed_entries() -> None:
    readme = (
        "## Design\n\n```text\nsrc/eudaimon/\n  core/   pure\n    sub/   nested\n  a.py  b.py\n       continued\n```\n"
    )
    assert drawn_tree(readme) == {"core/", "core/sub/", "a.py", "b.py"}
