"""`examples/typed_agent.py` (checked by `mypy --strict` in the project's mypy run) also runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "typed_agent.py"


def test_typed_example_runs_offline() -> None:
    """Invariant: the typed example's deps reach its tool and its output is the typed Forecast."""
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Lisbon: 21.5°C, Mild and sunny.")
