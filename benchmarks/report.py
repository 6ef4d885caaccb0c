"""Turn benchmarks/results.json into benchmarks/RESULTS.md: each target met or missed, then the figures.

    benchmarks/.peers/bin/python benchmarks/report.py       # run.py calls it after every run

Every workload's section says when it ran, on which machine and trees, how loaded the machine
was (the 1-minute load average, lowest and highest while it ran) and the command that ran it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS_MD = HERE / "RESULTS.md"


def render(results: dict[str, Any]) -> str:
    workloads: dict[str, Any] = results.get("workloads", {})
    lines = [
        "# Benchmark results",
        "",
        "Written by `benchmarks/report.py` from `benchmarks/results.json`; do not edit by hand.",
        "What each workload measures, and how to run it: `benchmarks/README.md`.",
        "",
        "## Targets",
        "",
        "| target | workload | tree | measured | limit | |",
        "|---|---|---|---:|---:|---|",
    ]
    for name, entry in workloads.items():
        for tree, verdicts in entry.get("targets", {}).items():
            for t in verdicts:
                quick = " (--quick)" if entry.get("quick") else ""
                mark = "met" if t["met"] else "**missed**"
                lines.append(f"| {t['name']} | {name}{quick} | {tree} | {t['value']:.3g} | {t['limit']:.3g} | {mark} |")
    skipped = [f"`{name}` ({entry['skipped']})" for name, entry in workloads.items() if "skipped" in entry]
    if skipped:
        lines += ["", "Skipped: " + "; ".join(skipped) + "."]
    for name, entry in workloads.items():
        lines += ["", *section(name, entry)]
    return "\n".join(lines) + "\n"


def section(name: str, entry: dict[str, Any]) -> list[str]:
    lines = [f"## `{name}` — {entry.get('about', '')}", ""]
    if "skipped" in entry:
        return [*lines, f"Skipped: {entry['skipped']}."]
    machine = entry.get("machine", {})
    load = entry.get("load", {})
    lines += [
        f"- When: {entry['when']}, {entry.get('seconds', 0):.0f} s"
        + (" — `--quick`: smoke figures, not for quoting" if entry.get("quick") else ""),
        f"- Machine: {machine.get('cpu', '?')}; {machine.get('python', '?')}; {machine.get('system', '?')}",
        f"- Load average (1 min) while it ran: {load.get('min', float('nan')):.1f} to {load.get('max', float('nan')):.1f}",
        "- Trees: " + "; ".join(f"{tree} = {where}" for tree, where in entry["trees"].items()),
        f"- Command: `{entry['command']}`",
        "- Rounds: " + ", ".join(f"{tree} {len(rows)}" for tree, rows in entry["rounds"].items()),
    ]
    for error in entry.get("errors", []):
        lines.append(f"- Failed: {error}")
    for tree, verdicts in entry.get("targets", {}).items():
        for t in verdicts:
            lines.append(
                f"- Target ({tree}): {t['name']}: {t['value']:.3g} against {t['limit']:.3g}, "
                f"{'met' if t['met'] else '**missed**'} ({t['how']})"
            )
    figures: dict[str, dict[str, Any]] = entry.get("figures", {})
    trees = list(figures)
    if trees:
        keys = list(dict.fromkeys(k for tree in trees for k in figures[tree]))
        lines += ["", "| figure | " + " | ".join(trees) + " |", "|---|" + "---:|" * len(trees)]
        for key in keys:
            cells = [cell(figures[tree].get(key)) for tree in trees]
            lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return lines


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if value != value:  # nan
        return "–"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def write(results: dict[str, Any]) -> None:
    RESULTS_MD.write_text(render(results))


if __name__ == "__main__":
    write(json.loads((HERE / "results.json").read_text()))
