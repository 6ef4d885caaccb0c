"""`runs list` and `runs show` tell a running run that a process drives from one whose process is
gone: the journal reads `running` either way, the run's lease does not.

A real `eudaimon run` process drives a run whose model call hangs; while it lives, `runs show`
names it (host:pid:…, the lease's owner) and `runs list` shows plain `running`. Killed with
SIGKILL it gives nothing up: once its lease lapses (`EUDAIMON_LEASE_TTL_S`, short here) the list
shows `running, no driver` and `runs show` says no process drives it, with the command that
resumes it. Before, both read `running` alike, and `runs show` hedged between the two.
On SQLite and on PostgreSQL: each store reads its leases without taking them.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import eudaimon
from support.databases import postgres_database

_AGENT = textwrap.dedent(
    """
    import asyncio
    from eudaimon import Agent, Message
    from eudaimon.models import FunctionModel

    async def hang(request):
        await asyncio.sleep(600)
        return Message.assistant("never")

    hanging = Agent(FunctionModel(hang, model_id="hanging"), name="hanging", memory=None)
    """
)
_LEASE_TTL_S = "1.5"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.db'}"
        return
    with postgres_database("eudaimon_drivers") as dsn:
        yield dsn


def _env(tmp_path: Path) -> dict[str, str]:
    src = str(Path(eudaimon.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{tmp_path}", "COLUMNS": "200", "NO_COLOR": "1",
            "EUDAIMON_LEASE_TTL_S": _LEASE_TTL_S}  # fmt: skip


def _eudaimon(tmp_path: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "eudaimon", *args], cwd=tmp_path, env=_env(tmp_path),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return done.stdout + done.stderr


def test_a_killed_runs_process_shows_as_no_driver_and_a_live_one_by_name(tmp_path: Path, url: str) -> None:
    (tmp_path / "hangs.py").write_text(_AGENT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "eudaimon", "run", "hangs:hanging", "wait", "--store", url],
        cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # printed before the first model call
        found = re.fullmatch(r"run (run_\w+)\n", first)
        assert found, first
        run_id = found.group(1)
        for _ in range(600):
            if "model_attempt_started" in _eudaimon(tmp_path, "runs", "events", run_id, "--store", url):
                break
            time.sleep(0.1)

        alive = _eudaimon(tmp_path, "runs", "show", run_id, "--store", url)
        assert re.search(rf"running: driven now by [^\s:]+:{proc.pid}:\S+, which holds its lease", alive), alive
        listed = _eudaimon(tmp_path, "runs", "list", "--store", url)
        assert run_id in listed and "running" in listed and "no driver" not in listed, listed
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)

    for _ in range(300):  # the lease lapses within its ttl of the kill; nothing gave it up
        listed = _eudaimon(tmp_path, "runs", "list", "--store", url)
        if "no driver" in listed:
            break
        time.sleep(0.2)
    assert re.search(rf"{run_id} .* running, no driver ", listed), listed
    assert "a server serving the run's agent on this store takes it over, or `eudaimon runs resume RUN_ID" in " ".join(
        listed.split()
    )
    gone = " ".join(_eudaimon(tmp_path, "runs", "show", run_id, "--store", url).split())
    assert "running, but no process drives it now (none holds its lease" in gone, gone
    assert f"eudaimon runs resume {run_id} --agent MODULE:ATTR --store" in gone, gone
    assert "driven now by" not in gone
