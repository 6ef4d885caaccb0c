"""A run is its journal: another process lists it and folds it to the very same state."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from cli_support import Journal

import eudaimon
from eudaimon.cli._render import state_to_dict

_WRITER = textwrap.dedent(
    """
    import asyncio, json, sys
    from eudaimon import Agent, Message, ToolCall, tool
    from eudaimon.cli._render import state_to_dict
    from eudaimon.models import ScriptedModel

    @tool(effect="read")
    async def add(a: int, b: int) -> int:
        '''Add two numbers.'''
        return a + b

    async def main() -> None:
        model = ScriptedModel([
            Message.assistant("Adding.", [ToolCall("c1", "add", {"a": 1, "b": 2}), ToolCall("c2", "add", {"a": 3, "b": 4})]),
            "1+2 is 3 and 3+4 is 7.",
        ])
        agent = Agent(model, tools=[add], name="adder", store=sys.argv[1], system_prompt="Add.")
        response = await agent.prompt("add things", thread_id="t-1")
        state = await agent.state(response.run_id)
        await agent.store.close()
        print(json.dumps(state_to_dict(state)))

    asyncio.run(main())
    """
)


def _python(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # The eudaimon under test, by an absolute path: a relative PYTHONPATH would not survive `cwd`.
    # 80 columns, as a small terminal (and pytest-xdist's workers) set: the list must lose no column.
    env = {**os.environ, "PYTHONPATH": str(Path(eudaimon.__file__).resolve().parents[1]), "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_a_run_written_by_one_process_folds_identically_in_another(
    tmp_path: Path, store_url: str, journal: Journal
) -> None:
    """Durability across processes: the state the writer held when its process ended equals
    the fold of the file in this process (status, messages with their ids, usage, next_seq),
    and the CLI in a third process lists the run."""
    script = tmp_path / "writer.py"
    script.write_text(_WRITER)

    written = _python(str(script), store_url, cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    live = json.loads(written.stdout)

    [run_id] = journal.run_ids()
    folded = state_to_dict(journal.state(run_id))
    assert run_id == live["run_id"]
    for field in ("status", "messages", "usage", "next_seq", "steps", "thread_id", "output"):
        assert folded[field] == live[field], field
    assert folded["status"] == "completed"

    listed = _python("-m", "eudaimon", "runs", "list", "--store", store_url, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert run_id in listed.stdout
    assert "adder" in listed.stdout


def test_the_demo_run_by_a_subprocess_is_folded_identically_by_the_cli_and_this_process(
    tmp_path: Path, store_url: str, journal: Journal
) -> None:
    """The demo's journal, written by the `eudaimon` process, folds to one state whoever reads
    it: `runs state --json` in another process and `RunState.from_events` here agree."""
    demo = _python("-m", "eudaimon", "demo", "--store", store_url, "--pace", "0", "--approve", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    [run_id] = journal.run_ids()

    shown = _python("-m", "eudaimon", "runs", "state", run_id, "--store", store_url, "--json", cwd=tmp_path)

    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == state_to_dict(journal.state(run_id))
