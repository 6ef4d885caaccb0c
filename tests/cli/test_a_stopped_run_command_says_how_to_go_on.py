"""`eudaimon run` stopped by Ctrl-C (SIGINT) or a service manager (SIGTERM) stops its process, not
the run: the run's id was printed before its first model call, the journal keeps the run where
it was, and the command prints how to resume or cancel it; `runs resume` then finishes it.
Before, a stopped `eudaimon run` printed nothing: the run read `running` with no one driving it,
and its id was known only from `runs list`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cli_support import Journal

import eudaimon
from eudaimon.core.state import Status

_AGENT = textwrap.dedent(
    """
    import asyncio, os
    from eudaimon import Agent, Message
    from eudaimon.models import FunctionModel
    from eudaimon.stores import MemoryStore

    async def think(request):
        if os.environ.get("SLOW_MODEL") == "1":
            await asyncio.sleep(600)
        return Message.assistant("thought it through")

    thinker = Agent(FunctionModel(think, model_id="thinker"), name="thinker", memory=None)
    forgetful = Agent(FunctionModel(think, model_id="thinker"), name="forgetful", memory=None, store=MemoryStore())
    """
)


def _env(tmp_path: Path, slow: bool) -> dict[str, str]:
    src = str(Path(eudaimon.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{tmp_path}", "COLUMNS": "200", "NO_COLOR": "1",
            "SLOW_MODEL": "1" if slow else "0"}  # fmt: skip


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_stopped_run_command_leaves_the_run_resumable_and_says_so(
    tmp_path: Path, store_url: str, journal: Journal, stop: signal.Signals, code: int
) -> None:
    (tmp_path / "thinking.py").write_text(_AGENT)
    command = [sys.executable, "-m", "eudaimon", "run", "thinking:thinker", "think", "--store", store_url]
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=_env(tmp_path, slow=True), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stdout is not None
    first = proc.stdout.readline()  # printed before the first model call
    found = re.fullmatch(r"run (run_\w+)\n", first)
    assert found, first
    run_id = found.group(1)
    for _ in range(600):  # the model call has begun: the run is journaled and in flight
        if any(e.type == "model_attempt_started" for e in journal.events(run_id)):
            break
        time.sleep(0.05)
    proc.send_signal(stop)
    rest, _ = proc.communicate(timeout=60)

    assert proc.returncode == code, rest
    assert f"{stop.name}: this process stopped; run {run_id} stays where its journal ends" in rest
    assert f"eudaimon runs resume {run_id} --agent thinking:thinker --store {store_url}\n" in rest
    assert f"eudaimon runs cancel {run_id} --store {store_url}\n" in rest
    assert journal.state(run_id).status is Status.RUNNING

    resumed = subprocess.run(
        [sys.executable, "-m", "eudaimon", "runs", "resume", run_id, "--agent", "thinking:thinker", "--store", store_url],
        cwd=tmp_path, env=_env(tmp_path, slow=False), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert journal.state(run_id).status is Status.COMPLETED
    assert journal.state(run_id).output == "thought it through"


def test_a_stopped_run_on_a_store_in_memory_says_it_is_gone(tmp_path: Path) -> None:
    """Invariant: with nothing journaled anywhere, no command to resume is offered."""
    (tmp_path / "thinking.py").write_text(_AGENT)
    command = [sys.executable, "-m", "eudaimon", "run", "thinking:forgetful", "think"]
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=_env(tmp_path, slow=True), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stdout is not None
    run_id = proc.stdout.readline().removeprefix("run ").strip()
    time.sleep(1.0)  # into the model call: nothing tells this test when, the journal being in memory
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=60)

    assert proc.returncode == 130, rest
    assert f"SIGINT: run {run_id} stopped; its store was in memory, so it is gone." in rest
    assert "runs resume" not in rest
