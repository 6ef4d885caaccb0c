"""Invariant: a journal the CLI cannot read is one line that names the run or the path and says
what to do (exit 1, no traceback); a read command never creates a journal or its directory, and
reads a journal it may not write; a writer never creates a missing directory.

Bugs: `runs show` printed tracebacks on a fold-level corruption, a bad SQLite path and a
read-only journal (issue 14); `runs list --store sqlite:///typo/x.db` created the directories
and an empty database and said "no runs" (issue 15)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import Invoke


def _one_line_error(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    assert "Traceback" not in output
    return lines[0]


def test_a_fold_level_corruption_is_one_line_naming_the_run_and_seq(
    cli: Invoke, store_url: str, demo_run: str, db_path: Path
) -> None:
    """Rows that parse but do not fold (the run's first row is not `run_started`) are reported
    with the run, the seq and the command that prints the rows."""
    with contextlib.closing(sqlite3.connect(db_path)) as conn:
        type_, payload = conn.execute(
            "SELECT type, payload FROM events WHERE run_id = ? AND seq = 1", (demo_run,)
        ).fetchone()
        conn.execute("UPDATE events SET type = ?, payload = ? WHERE run_id = ? AND seq = 0", (type_, payload, demo_run))
        conn.commit()
    for command in ("show", "state"):
        result = cli("runs", command, demo_run, "--store", store_url)
        assert result.exit_code == 1
        line = _one_line_error(result.output)
        assert demo_run in line and "seq 0" in line and f"runs events {demo_run} --json" in line


@pytest.mark.parametrize(
    "command",
    [
        ["runs", "list"],
        ["runs", "show", "run_x"],
        ["runs", "events", "run_x"],
        ["runs", "state", "run_x"],
        ["threads", "list"],
        ["threads", "show", "t"],
    ],
)
def test_a_read_command_on_a_missing_journal_names_it_and_creates_nothing(
    cli: Invoke, tmp_path: Path, command: list[str]
) -> None:
    """A typo'd path is an error naming it; no directory and no file appear."""
    missing = tmp_path / "typo" / "deeper" / "x.db"
    result = cli(*command, "--store", f"sqlite:///{missing}")
    assert result.exit_code == 1
    line = _one_line_error(result.output)
    assert str(missing) in line and "check the path" in line
    assert not (tmp_path / "typo").exists()


def test_a_path_under_a_file_is_one_line(cli: Invoke, tmp_path: Path) -> None:
    """A path whose parent is a file (FileNotFoundError/NotADirectoryError before) is one line."""
    (tmp_path / "file.db").write_text("not a directory")
    url = f"sqlite:///{tmp_path / 'file.db' / 'x.db'}"
    result = cli("runs", "show", "run_x", "--store", url)
    assert result.exit_code == 1
    assert "is a file, not a directory" in _one_line_error(result.output)
    written = cli("demo", "--pace", "0", "--store", url)
    assert written.exit_code == 1 and "Traceback" not in written.output
    assert written.output.strip().splitlines()[-1].startswith("error: ")


def test_a_writer_does_not_create_a_missing_directory(cli: Invoke, tmp_path: Path) -> None:
    """`eudaimon demo` into a directory that does not exist fails naming it, and creates nothing."""
    result = cli("demo", "--pace", "0", "--store", f"sqlite:///{tmp_path / 'nowhere' / 'runs.db'}")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "mkdir -p" in result.output.strip().splitlines()[-1]
    assert not (tmp_path / "nowhere").exists()


def test_the_default_journal_directory_is_created_by_a_writer(cli: Invoke, tmp_path: Path) -> None:
    """The one exception: the user data directory of the default journal."""
    home = tmp_path / "home"
    result = cli("demo", "--pace", "0", env={"XDG_DATA_HOME": str(home), "EUDAIMON_STORE": None, "HOME": str(home)})
    assert result.exit_code == 0, result.output
    assert list(home.rglob("runs.db"))


@contextlib.contextmanager
def _unwritable_copy(db: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of the journal, in a directory of its own, that this process cannot write: modes
    0444/0555, or for root (whom modes do not stop) the immutable attribute (`chattr +i`)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    copy = folder / "runs.db"
    shutil.copy(db, copy)
    root = os.geteuid() == 0
    chattr = shutil.which("chattr") or ""
    if root and not chattr:
        pytest.skip("running as root without chattr: no way to make a file read-only for this process")
    if root:
        subprocess.run([chattr, "+i", str(copy), str(folder)], check=True)
    else:
        copy.chmod(0o444)
        folder.chmod(0o555)
    try:
        with pytest.raises(PermissionError):
            copy.open("ab").close()
        yield copy
    finally:
        if root:
            subprocess.run([chattr, "-i", str(copy), str(folder)], check=True)
        else:
            folder.chmod(0o755)
            copy.chmod(0o644)


def test_a_read_only_journal_can_be_read(cli: Invoke, demo_run: str, db_path: Path, tmp_path: Path) -> None:
    """Every read command works on a journal its reader may not write (`mode=ro`), and leaves
    it as it was; a write to it is one line."""
    with _unwritable_copy(db_path, tmp_path) as copy:
        before = sorted(p.name for p in copy.parent.iterdir())
        url = f"sqlite:///{copy}"
        for args in (
            ["runs", "list"],
            ["runs", "show", demo_run],
            ["runs", "events", demo_run],
            ["runs", "state", demo_run, "--at", "2"],
            ["threads", "list"],
        ):
            result = cli(*args, "--store", url)
            assert result.exit_code == 0, (args, result.output)
        assert demo_run in cli("runs", "list", "--store", url).output
        assert "completed" in cli("runs", "show", demo_run, "--store", url).output
        assert sorted(p.name for p in copy.parent.iterdir()) == before
        refused = cli("runs", "fork", demo_run, "--at", "1", "--yes", "--store", url)
        assert refused.exit_code == 1
        assert str(copy) in _one_line_error(refused.output.strip().splitlines()[-1])  # after the fork's warning
