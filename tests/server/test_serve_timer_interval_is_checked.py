"""`eudaimon serve --timer-interval SECONDS` sets how often deadlines, durable waits and schedule
slots are fired; a value a server cannot keep is refused with what to give, before anything binds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from _server_support import Server, free_port

from eudaimon import Agent
from eudaimon.errors import ConfigurationError
from eudaimon.models import FunctionModel
from eudaimon.server import create_app
from eudaimon.stores.memory import MemoryStore

HERE = Path(__file__).parent


def _serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from eudaimon.cli import app; app()", "serve", "--agent", "_server_agents:payer"]
    return subprocess.run(
        [*command, "--store", f"sqlite:///{tmp_path / 'r.db'}", "--port", str(free_port()), *args],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "PYTHONPATH": str(HERE)},
    )


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "inf", "7200"])
def test_a_timer_interval_out_of_range_is_refused_saying_the_range(tmp_path: Path, bad: str) -> None:
    """Invariant: `--timer-interval` of 0, below 0, NaN, infinite or above an hour exits 1 with
    the flag, the range (0.05 to 3600 seconds) and what it governs, without serving."""
    done = _serve(tmp_path, "--timer-interval", bad)
    assert done.returncode == 1, done.stderr
    assert "--timer-interval must be" in done.stderr
    assert "0.05 to 3600" in done.stderr or "number of seconds" in done.stderr
    assert "eudaimon serves" not in done.stdout


def test_a_timer_interval_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    """Invariant: a word for `--timer-interval` is refused by the CLI's parser, naming the flag."""
    done = _serve(tmp_path, "--timer-interval", "often")
    assert done.returncode == 2 and "--timer-interval" in done.stderr


def test_the_timer_interval_is_in_the_help() -> None:
    """Invariant: `serve --help` names the flag and what it governs."""
    done = subprocess.run(
        [sys.executable, "-c", "from eudaimon.cli import app; app()", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "COLUMNS": "200"},
    )
    assert "--timer-interval" in done.stdout and "approval deadlines" in done.stdout


def test_create_app_refuses_an_interval_out_of_range() -> None:
    """Invariant: `create_app(timer_interval_s=0)` and `schedule_interval_s=-1` raise a
    ConfigurationError naming the argument."""
    agent = Agent(FunctionModel(lambda request: "hi"), store=MemoryStore(), name="a")
    with pytest.raises(ConfigurationError, match=r"timer_interval_s must be from 0\.05 to 3600"):
        create_app(agent, timer_interval_s=0)
    with pytest.raises(ConfigurationError, match="schedule_interval_s must be from"):
        create_app(agent, schedule_interval_s=-1)


def test_a_server_started_with_a_timer_interval_serves(tmp_path: Path) -> None:
    """Invariant: a valid `--timer-interval 0.25` starts the server as usual."""
    server = Server(tmp_path / "runs.db", args=("--timer-interval", "0.25")).start()
    try:
        assert "eudaimon serves" in server.output()
    finally:
        server.stop()
