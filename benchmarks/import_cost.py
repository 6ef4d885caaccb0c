"""What starting eudaimon costs: `import eudaimon`, `eudaimon --help`, `python -m eudaimon --help`,
beside `import pydantic_ai` and `import agents` (the OpenAI Agents SDK); and what `pip install
eudaimon` (the base install) brings: packages and size on disk.

Each figure is a fresh interpreter, started again in every round; the cases alternate within a
round, so load on a shared machine falls on all of them alike; the median of the rounds is
reported, with `python -c pass` (the interpreter alone) beside it. Several eudaimon sources can
be compared side by side, e.g. this checkout and main:

    git -C /path/to/main archive HEAD | tar -x -C /tmp/main
    .venv/bin/python benchmarks/import_cost.py --source before=/tmp/main --source after=. [--rounds 7] [--install]

The peers are imported with benchmarks/.peers/bin/python (benchmarks/peers/setup.sh makes it);
without it they are left out, and the report says so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PEERS = REPO / "benchmarks" / ".peers" / "bin" / "python"


def timed(argv: list[str], env: dict[str, str]) -> float:
    """Milliseconds from starting `argv` to its exit; it must succeed."""
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def cases(sources: dict[str, Path]) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Every command measured, by label: (argv, environment)."""
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EUDAIMON_STORE")}
    python = sys.executable
    script = str(Path(python).with_name("eudaimon"))
    out: dict[str, tuple[list[str], dict[str, str]]] = {"python -c pass": ([python, "-c", "pass"], base)}
    for label, root in sources.items():
        env = {**base, "PYTHONPATH": str(root / "src")}
        out[f"import eudaimon [{label}]"] = ([python, "-c", "import eudaimon"], env)
        out[f"from eudaimon import Agent [{label}]"] = ([python, "-c", "from eudaimon import Agent"], env)
        out[f"eudaimon --help [{label}]"] = ([script, "--help"], env)
        out[f"python -m eudaimon --help [{label}]"] = ([python, "-m", "eudaimon", "--help"], env)
    if PEERS.exists():
        out["import pydantic_ai (peers venv)"] = ([str(PEERS), "-c", "import pydantic_ai"], base)
        out["import agents (peers venv)"] = ([str(PEERS), "-c", "import agents"], base)
    return out


def measure(rounds: int, sources: dict[str, Path]) -> dict[str, list[float]]:
    todo = cases(sources)
    for argv, env in todo.values():  # warm the OS caches and the .pyc files once
        timed(argv, env)
    times: dict[str, list[float]] = {label: [] for label in todo}
    labels = list(todo)
    for r in range(rounds):
        print(f"round {r + 1}/{rounds}", file=sys.stderr, flush=True)
        shift = r % len(labels)  # rotate the order, so no case always runs first
        for label in labels[shift:] + labels[:shift]:
            times[label].append(timed(*todo[label]))
    return times


def install_footprint(root: Path, work: Path) -> tuple[int, float]:
    """(packages, MB on disk) of `pip install <root>` (no extras) into a fresh venv."""
    dist = work / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(dist), str(root)],
        check=True,
        capture_output=True,
    )
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    target = str(venv / "bin" / "python")
    wheel = next(dist.glob("eudaimon-*.whl"))
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", target, "install", "--quiet", str(wheel)],
        check=True,
        capture_output=True,
    )
    count = subprocess.run(
        [target, "-c", "import importlib.metadata as m; print(len(list(m.distributions())))"],
        check=True,
        capture_output=True,
        text=True,
    )
    site = next((venv / "lib").glob("python3*/site-packages"))
    size = sum(f.stat().st_size for f in site.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    return int(count.stdout), size / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7, help="0: only --install")
    parser.add_argument("--source", action="append", default=[], help="LABEL=DIR, a checkout to measure (repeat)")
    parser.add_argument("--install", action="store_true", help="also measure the base install of each source")
    args = parser.parse_args()
    pairs = [s.split("=", 1) for s in args.source] or [["this", str(REPO)]]
    sources = {label: Path(path).resolve() for label, path in pairs}

    if args.rounds > 0:
        report(measure(args.rounds, sources), args.rounds)
    if args.install:
        print("base install (pip install <wheel>, no extras) into a fresh venv:")
        for label, root in sources.items():
            work = Path(tempfile.mkdtemp(prefix="eudaimon-install-"))
            try:
                count, mb = install_footprint(root, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            print(f"  [{label}] {count} packages (eudaimon included), {mb:.1f} MB in site-packages (no .pyc)")


def report(times: dict[str, list[float]], rounds: int) -> None:
    print(f"median of {rounds} fresh interpreters each, cases alternating ({sys.version.split()[0]}):")
    width = max(map(len, times))
    for label, values in times.items():
        med = statistics.median(values)
        spread = f"{min(values):7.1f} .. {max(values):7.1f}"
        print(f"  {label:<{width}}  {med:7.1f} ms   (min .. max {spread})")
    if not PEERS.exists():
        print(f"  (peers left out: {PEERS} does not exist; benchmarks/peers/setup.sh makes it)")


if __name__ == "__main__":
    main()
