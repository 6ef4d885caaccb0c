"""`eudaimon serve` opens its store before it says it serves: on a new machine the default
journal's directory is made (as every other writing command does), and a store that cannot be
opened is one clear error and exit 1 — before, the server came up, announced itself, and every
sweep (recovery, timers, schedules) logged a traceback every second.

Found trying the server as a new user would (no `eudaimon demo` run first: no data directory).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _server_support import free_port

from eudaimon import Agent
from eudaimon.errors import JournalError
from eudaimon.models import FunctionModel
from eudaimon.server import create_app

HERE = Path(__file__).parent


@contextlib.contextmanager
def _serve(home: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    """`eudaimon serve` of the payer with `home` as its user's home; killed if still up."""
    command = [sys.executable, "-c", "from eudaimon.cli import app; app()", "serve", "--agent", "_server_agents:payer"]
    env = {k: v for k, v in os.environ.items() if k != "EUDAIMON_STORE"}
    env |= {"PYTHONPATH": str(HERE), "XDG_DATA_HOME": str(home / "data"), "HOME": str(home)}
    with subprocess.Popen(
        [*command, "--port", str(free_port()), *args],
        cwd=HERE,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        try:
            yield server
        finally:
            server.kill()


def _ended(server: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return server.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        out, errors = server.communicate()
        return out, errors + "\n(still serving after 30 s)"


def test_the_default_store_is_made_on_a_new_machine_and_served(tmp_path: Path) -> None:
    """Invariant: with no `--store` and no data directory yet, `serve` makes the directory, opens
    the default journal and serves; no sweep fails."""
    with _serve(tmp_path) as server:
        banner = server.stdout.readline() + server.stdout.readline() if server.stdout else ""
        assert "eudaimon serves payer" in banner, banner
        assert (tmp_path / "data" / "eudaimon" / "runs.db").exists()
        server.terminate()
        _, errors = _ended(server)
        assert "failed" not in errors and "Traceback" not in errors, errors


def test_a_store_that_cannot_be_opened_is_one_error_before_the_banner(tmp_path: Path) -> None:
    """Invariant: a `--store` whose directory is missing exits 1 with the store's own error (what
    to create), without a banner or a traceback, and creates nothing."""
    missing = tmp_path / "no" / "such"
    with _serve(tmp_path, "--store", f"sqlite:///{missing / 'runs.db'}") as server:
        out, errors = _ended(server)
    assert server.returncode == 1, (out, errors)
    assert "eudaimon serves" not in out
    assert f"create it (mkdir -p {missing})" in errors, errors
    assert "Traceback" not in errors
    assert not missing.exists()


def test_a_database_that_refuses_is_one_error_without_its_password(tmp_path: Path) -> None:
    """Invariant: a PostgreSQL store nobody answers on exits 1 saying it cannot connect, with the
    DSN's password masked, before the banner."""
    port = free_port()  # nothing listens there
    with _serve(tmp_path, "--store", f"postgresql://postgres:hunter2-secret@127.0.0.1:{port}/nope") as server:
        out, errors = _ended(server)
    assert server.returncode == 1, (out, errors)
    assert "eudaimon serves" not in out
    assert "cannot connect to the PostgreSQL journal" in errors, errors
    assert "hunter2-secret" not in out + errors


async def test_an_app_whose_store_cannot_be_opened_does_not_start(tmp_path: Path) -> None:
    """Invariant: `create_app` embedded in another ASGI server fails its start (the lifespan)
    with the store's error, instead of serving while every sweep fails."""
    missing = tmp_path / "gone" / "runs.db"
    agent = Agent(FunctionModel(lambda request: "hi"), store=f"sqlite:///{missing}", name="a")
    app = create_app(agent)
    with pytest.raises(JournalError, match="does not exist"):
        async with app.router.lifespan_context(app):
            pass
    await agent.store.close()
