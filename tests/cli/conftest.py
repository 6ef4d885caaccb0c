"""Fixtures for the CLI tests: a temporary SQLite journal and a way to invoke `eudaimon`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from cli_support import Invoke, Journal
from typer.testing import CliRunner, Result

from eudaimon.cli import app


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """An empty journal (read commands never create one), in a directory of its own."""
    (tmp_path / "journal").mkdir()
    path = tmp_path / "journal" / "runs.db"
    assert Journal(path).run_ids() == []  # opening it for writing made its tables
    return path


@pytest.fixture
def store_url(db_path: Path) -> str:
    return f"sqlite:///{db_path}"


@pytest.fixture
def journal(db_path: Path) -> Journal:
    return Journal(db_path)


@pytest.fixture
def cli() -> Invoke:
    """Run the real CLI in-process, with wide output and no colour."""
    runner = CliRunner()

    def invoke(*args: str, env: Mapping[str, str | None] | None = None) -> Result:
        return runner.invoke(app, list(args), env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})

    return invoke


@pytest.fixture
def demo_run(cli: Invoke, store_url: str, journal: Journal) -> str:
    """Run the demo into the temporary journal; return its run id."""
    result = cli("demo", "--store", store_url, "--pace", "0")
    assert result.exit_code == 0, result.output
    runs = journal.run_ids()
    assert len(runs) == 1
    return runs[0]
