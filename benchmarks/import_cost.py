"""What starting eudaimon costs: `import eudaimon`, `eudaimon --help`, beside `import pydantic_ai` and `import agents`.

Each figure is a fresh interpreter, started again in every round; the cases alternate within a
round (the first rotating), so load on a shared machine falls on all of them alike; medians of
the rounds, with `python -c pass` (the interpreter alone) beside them. The peers are imported
when this interpreter has them (benchmarks/.peers).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from typing import Any

import _harness as h

ROUNDS = 1


def timed(argv: list[str], env: dict[str, str]) -> float:
    """Milliseconds from starting `argv` to its exit; it must succeed."""
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def measure(quick: bool) -> dict[str, Any]:
    python = sys.executable
    bare = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EUDAIMON_STORE")}
    tree = {**bare, "PYTHONPATH": str(h.SRC)}
    cases: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c pass": ([python, "-c", "pass"], bare),
        "import eudaimon": ([python, "-c", "import eudaimon"], tree),
        "from eudaimon import Agent": ([python, "-c", "from eudaimon import Agent"], tree),
        "eudaimon --help": (
            [python, "-c", "import sys; from eudaimon.cli import app; sys.exit(app())", "--help"],
            tree,
        ),
        "python -m eudaimon --help": ([python, "-m", "eudaimon", "--help"], tree),
    }
    for module in ("pydantic_ai", "agents"):
        if importlib.util.find_spec(module) is not None:
            cases[f"import {module} (peer)"] = ([python, "-c", f"import {module}"], bare)
    for argv, env in cases.values():  # warm the OS caches and the .pyc files once
        timed(argv, env)
    times: dict[str, list[float]] = {label: [] for label in cases}
    rounds = 2 if quick else 5
    for r in range(rounds):
        for label in h.rotate(list(cases), r):
            times[label].append(timed(*cases[label]))
    return {f"{label} ms": h.median(values) for label, values in times.items()}
