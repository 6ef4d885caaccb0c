"""The A2A, AG-UI and MCP examples run offline, as written, and show what their pages promise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {
    "a2a_client.py": [
        "now TASK_STATE_WORKING",
        "answer: Your order A-17 shipped on Monday.",
        "GetTask: TASK_STATE_COMPLETED",
    ],
    "a2a_remote_tool.py": ["writer: Lisbon is home to about 550,000 people.", "[A2A task a2a_"],
    "ag_ui_stream.py": ["RUN_STARTED", "TOOL_CALL_RESULT", "RUN_FINISHED", "replays the journal: True"],
    "mcp_client.py": [
        "tool orders: Answers questions about orders. (read-only: True)",
        "progress: tool lookup_order runs",
        "answer: Your order A-17 shipped on Monday.",
        "sent again, the same run: True",
    ],
}


@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_example_runs_offline(example: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, example],
        cwd=ROOT / "examples",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for line in EXPECTED[example]:
        assert line in done.stdout, done.stdout
