"""Fixtures for the CLI tests: a temporary SQLite journal and a way to invoke `eudaimon`."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import pytest
from cli_support import Invoke, Journal
from typer.testing import CliRunner, Result

from eudaimon.cli import app
from eudaimon.cli.demo import DEMO_INPUT, demo_agent


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
def demo_run(store_url: str, journal: Journal) -> str:
    """The demo agent's run, approved and completed in the temporary journal (in this process:
    `eudaimon demo` itself, with its worker processes, is tested in test_demo_shows_crash_resume_approval);
    return its run id."""

    async def play() -> str:
        agent = demo_agent(store_url)
        try:
            paused = await agent.prompt(DEMO_INPUT)
            [call] = paused.pending_approvals
            await agent.approve(paused.run_id, call.id, by="tests")
            done = await agent.resume(paused.run_id)
            assert done.status == "completed"
            return done.run_id
        finally:
            await agent.store.close()

    run_id = asyncio.run(play())
    assert journal.run_ids() == [run_id]
    return run_id
