"""Run eudaimon's benchmarks: every workload by name, each round in a fresh subprocess per tree.

    benchmarks/setup.sh                                            # once: benchmarks/.peers
    benchmarks/.peers/bin/python benchmarks/run.py                 # every workload, then RESULTS.md
    benchmarks/.peers/bin/python benchmarks/run.py peers step --quick
    benchmarks/.peers/bin/python benchmarks/run.py concurrent --src base=../base/src --src mine=src --rounds 3

Rounds alternate the trees (`--src NAME=PATH`, default this checkout's `src`), the starting tree
rotating, so their figures are side by side under the same load. Each workload file measures one
thing (`measure(quick)` gives its figures, `targets(figures)` its verdicts, from the medians of
the rounds). Results go to benchmarks/results.json (merged: a workload run alone replaces its
own entry only), and `report.py` turns that into benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import platform
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import _harness as h
import report

RESULTS_JSON = h.HERE / "results.json"

WORKLOADS: dict[str, str] = {
    "peers": "peers_loop",
    "step": "step_cost",
    "concurrent": "concurrent_runs",
    "process_lateness": "process_lateness",
    "provider": "provider_step",
    "postgres": "postgres_step",
    "imports": "import_cost",
    "server": "server_load",
    "inspector": "inspector_pages",
    "memory": "memory_turn",
    "pricing": "pricing_cache",
    "resume": "resume_latency",
    "runs_listing": "runs_listing",
    "delegation": "delegation",
    "temporal": "temporal_step",
    "temporal_timer": "temporal_timer_lateness",
    "fleet": "fleet",
    "fleet_two_workers": "fleet_two_workers",
    "cancel": "cancel_latency",
    "append": "append_cost",
    "extensions": "extensions",
    "datasource": "datasource_step",
    "history_size": "history_size",
    "read_commits": "read_step_commits",
}
"""Each workload's name on the command line, and the module (in benchmarks/) that measures it."""


def load(name: str) -> ModuleType | None:
    """The workload's module, or None where it is absent (`process_lateness.py` lands separately)."""
    try:
        return importlib.import_module(WORKLOADS[name])
    except ModuleNotFoundError as exc:
        if exc.name == WORKLOADS[name]:
            return None
        raise


def child(name: str, quick: bool) -> None:
    """One round of one workload, in this process: its figures as JSON on stdout's last line."""
    module = load(name)
    assert module is not None
    try:
        figures = module.measure(h.SRC, quick) if name == "process_lateness" else module.measure(quick)
        eudaimon = sys.modules.get("eudaimon")
        if eudaimon is not None and not Path(eudaimon.__file__ or "").is_relative_to(h.SRC):
            raise RuntimeError(f"measured the eudaimon at {eudaimon.__file__}, not the tree at {h.SRC}")
        print(json.dumps({"figures": flatten(figures)}))
    except h.Skip as skip:
        print(json.dumps({"skipped": str(skip)}))


def flatten(figures: dict[str, Any], prefix: str = "") -> dict[str, float | str]:
    """Nested dicts become "outer / inner" keys; numbers and short strings are kept."""
    out: dict[str, float | str] = {}
    for key, value in figures.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, f"{name} / "))
        elif isinstance(value, bool):
            out[name] = float(value)
        elif isinstance(value, int | float | str):
            out[name] = value
    return out


def default_targets(figures: dict[str, float]) -> list[h.Target]:
    """For a module without `targets`: every p99 figure in ms against the timer target, 20 ms."""
    return [h.Target(f"{key} ≤ 20 ms", value, 20.0, key) for key, value in figures.items() if "p99" in key]


class LoadWatch:
    """The 1-minute load average, sampled every 5 s while a workload runs: how busy the machine was."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(5.0):
                return

    def __enter__(self) -> LoadWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])


def commit_of(src: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True).stdout.strip()

    head = git("log", "-1", "--format=%h")
    if not head:
        return "not a git checkout"
    dirty = " (uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    return f"{git('rev-parse', '--abbrev-ref', 'HEAD')}@{head}{dirty}"


def machine() -> dict[str, str]:
    cpu = platform.machine()
    with contextlib.suppress(OSError, StopIteration):
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        cpu = next(line.split(":", 1)[1].strip() for line in lines if line.startswith("model name"))
    return {
        "cpu": f"{cpu}, {os.cpu_count()} logical cores",
        "python": f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})",
        "system": f"{platform.system()} {platform.release()}",
    }


def run_workload(name: str, trees: dict[str, Path], rounds: int, quick: bool) -> dict[str, Any]:
    module = load(name)
    started = time.perf_counter()
    entry: dict[str, Any] = {
        "about": (module.__doc__ or "").strip().splitlines()[0] if module else "",
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": shlex.join(["benchmarks/.peers/bin/python", "benchmarks/run.py", *sys.argv[1:]]),
        "trees": {tree: f"{src} ({commit_of(src)})" for tree, src in trees.items()},
        "machine": machine(),
        "quick": quick,
        "rounds": {},
        "errors": [],
    }
    if module is None:
        entry["skipped"] = f"benchmarks/{WORKLOADS[name]}.py is not in this checkout"
        print(f"{name}: skipped: {entry['skipped']}", flush=True)
        return entry
    print(f"{name}: {entry['about']}", flush=True)
    rounds = rounds or (1 if quick else getattr(module, "ROUNDS", 1))
    with LoadWatch() as watch:
        for r in range(rounds):
            for tree in h.rotate(list(trees), r):
                got = run_round(name, trees[tree], quick)
                if "skipped" in got:
                    entry["skipped"] = got["skipped"]
                    print(f"  skipped: {got['skipped']}", flush=True)
                    break
                if "error" in got:
                    entry["errors"].append(f"{tree}, round {r + 1}: {got['error']}")
                    print(f"  {tree} round {r + 1} failed: {got['error']}", flush=True)
                    continue
                entry["rounds"].setdefault(tree, []).append(got["figures"])
            if "skipped" in entry:
                break
    entry["seconds"] = time.perf_counter() - started
    entry["load"] = {"min": min(watch.samples), "max": max(watch.samples)}
    entry["figures"] = {tree: medians(rows) for tree, rows in entry["rounds"].items()}
    judge = getattr(module, "targets", default_targets if name == "process_lateness" else lambda _: [])
    entry["targets"] = {}
    for tree, figures in entry["figures"].items():
        try:
            entry["targets"][tree] = [{**asdict(t), "met": t.met} for t in judge(figures)]
        except (KeyError, ZeroDivisionError) as exc:
            entry["errors"].append(f"{tree}: no verdict, a figure is missing ({exc!r})")
    for tree, verdicts in entry["targets"].items():
        for t in verdicts:
            print(f"  {tree}: {t['name']}: {t['value']:.3g} ({'met' if t['met'] else 'MISSED'})", flush=True)
    print(f"  {entry['seconds']:.0f} s, load average {entry['load']['min']:.1f}-{entry['load']['max']:.1f}", flush=True)
    return entry


def run_round(name: str, src: Path, quick: bool) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__)), "--child", name, *(["--quick"] if quick else [])]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=h.tree_env(src), cwd=h.HERE, timeout=1800)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after 30 minutes"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": f"exit status {proc.returncode} (its traceback is above)"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def medians(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the rounds (a text figure: the last round's)."""
    out: dict[str, Any] = {}
    for key in rows[0]:
        values = [row[key] for row in rows if key in row]
        out[key] = h.median(values) if all(isinstance(v, float | int) for v in values) else values[-1]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="*", metavar="workload", help=f"any of: {', '.join(WORKLOADS)}")
    parser.add_argument("--quick", action="store_true", help="small N, one round: a smoke run, not for quoting")
    parser.add_argument("--src", action="append", default=[], metavar="NAME=PATH", help="a source tree (repeat)")
    parser.add_argument(
        "--rounds", type=int, default=0, help="rounds per workload (default: each its own; 1 with --quick)"
    )
    parser.add_argument("--no-report", action="store_true", help="leave RESULTS.md alone")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.quick)
        return
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    trees = {"this": h.SRC} if not args.src else {}
    for spec in args.src:
        tree, _, path = spec.partition("=")
        trees[tree] = Path(path).resolve()
    results = json.loads(RESULTS_JSON.read_text()) if RESULTS_JSON.exists() else {}
    results.setdefault("workloads", {})
    for name in args.workloads or WORKLOADS:
        results["workloads"][name] = run_workload(name, trees, args.rounds, args.quick)
        RESULTS_JSON.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    if not args.no_report:
        report.write(results)
        print(f"wrote {report.RESULTS_MD.relative_to(h.REPO)}", flush=True)


if __name__ == "__main__":
    main()
