"""`eudaimon serve` and `eudaimon worker`, once started, exempt their start-up objects from
collections and run full collections ten times more rarely: a full collection stops every timer
on the loop for as long as it walks the runs in flight (benchmarks/process_lateness.py)."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import gc
from eudaimon.cli._collector import FULL_EVERY, freeze_start_up

young, middle, full = gc.get_threshold()
frozen = freeze_start_up()
assert frozen > 1000, frozen  # the imports, at least
assert gc.get_threshold() == (young, middle, FULL_EVERY), gc.get_threshold()
assert FULL_EVERY >= 10 * full, (FULL_EVERY, full)
print("ok")
"""


def test_start_up_objects_are_frozen_and_full_collections_are_rarer() -> None:
    """In a process of its own: the collector's settings are process-wide."""
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
