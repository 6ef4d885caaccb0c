"""Every command's `--help` reads whole in an 80-column terminal: Rich cuts a help text it cannot
wrap (one long word) with "…", and what is cut is what the reader came for (`replay --where`
listed its keys as "q=…,agent=…,…,vers…" and never named `thread`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from cli_support import Invoke

from eudaimon.cli import app

CUT = re.compile(r"\w…")
"""A word Rich cut short; a help text's own "…" follows punctuation ("postgresql://…")."""


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def test_every_command_is_checked() -> None:
    assert ("replay",) in COMMANDS and ("runs", "approve") in COMMANDS and len(COMMANDS) > 20


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "eudaimon")
def test_help_is_never_cut_at_80_columns(cli: Invoke, path: tuple[str, ...]) -> None:
    """Invariant: no word of any `--help` is cut at 80 columns."""
    shown = cli(*path, "--help", env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    assert [line for line in shown.output.splitlines() if CUT.search(line)] == []
