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


@pytest.mark.parametrize(
    "group", [("runs",), ("threads",), ("schedules",), ()], ids=["runs", "threads", "schedules", "eudaimon"]
)
def test_a_command_list_reads_each_summary_as_written_not_as_its_source_lines(
    cli: Invoke, group: tuple[str, ...]
) -> None:
    """Invariant: in a group's list of commands each summary is its docstring's first paragraph as
    one text, wrapped by the terminal only (typer's "rich" mode kept the docstring's own line
    breaks there: "… (with --arguments," / "with those instead …" on a 200-column screen)."""
    command: Any = typer.main.get_command(app)
    for name in group:
        command = command.commands[name]
    shown = cli(*group, "--help", env={"COLUMNS": "250"})
    listed = {line.strip("│ ").split(" ", 1)[0]: line for line in shown.output.splitlines() if line.startswith("│ ")}
    for name, sub in command.commands.items():
        first = " ".join((sub.help or "").split("\n\n")[0].split()).replace("`", "")
        assert first and first in listed[name], (name, listed.get(name))
