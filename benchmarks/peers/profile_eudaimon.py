"""Where eudaimon's time goes, for each workload whose target it missed (pyinstrument, sampling).

Each profile runs the eudaimon side of a workload under `pyinstrument.Profiler` (async_mode
disabled: the event loop's own frames are kept, so time the loop sits idle in `select` waiting
for the SQLite worker thread shows up as such) and reports, as % of the profiled wall time:

- *self*: time with the function at the top of the stack (where the CPU actually was);
- *inclusive*: time with the function anywhere on the stack (counted once per sample).

    benchmarks/.peers/bin/python benchmarks/peers/profile_eudaimon.py [construct|memory|memory_short|durable|concurrency|all]
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from pyinstrument import Profiler  # noqa: E402


def _key(frame: Any) -> str:
    path = frame.file_path or ""
    if "/site-packages/" in path:
        path = path.split("/site-packages/", 1)[1]
    elif "/src/eudaimon/" in path:
        path = "eudaimon/" + path.split("/src/eudaimon/", 1)[1]
    elif "/lib/python3" in path:
        path = "stdlib:" + path.rsplit("/", 1)[-1]
    else:
        path = path.rsplit("/", 1)[-1]
    return f"{frame.function} ({path}:{frame.line_no})"


def summarize(profiler: Profiler, top: int = 16) -> dict[str, Any]:
    session = profiler.last_session
    assert session is not None
    root = session.root_frame()
    total = root.time if root is not None else 0.0
    self_t: dict[str, float] = defaultdict(float)
    incl_t: dict[str, float] = defaultdict(float)

    def walk(frame: Any, stack: frozenset[str], parent: str = "") -> None:
        key = _key(frame)
        if (frame.file_path or "").startswith("<"):  # code made by exec: dataclass __init__ and friends
            key = f"{frame.function} (generated, called by {parent.split(' ')[0]})"
        real = [c for c in frame.children if not c.is_synthetic]  # "[self]" leaves are our own time
        own = frame.time - sum(c.time for c in real)
        if own > 0:
            self_t[key] += own
        if key not in stack:
            incl_t[key] += frame.time
        for child in real:
            walk(child, stack | {key}, key)

    if root is not None:
        walk(root, frozenset())
    pct = (lambda t: 100.0 * t / total) if total else (lambda t: 0.0)
    selfs = sorted(self_t.items(), key=lambda kv: -kv[1])[:top]
    eud = sorted(((k, v) for k, v in incl_t.items() if "eudaimon/" in k), key=lambda kv: -kv[1])[: top + 6]
    skip = (
        "eudaimon/",
        "stdlib:asyncio",
        "stdlib:base_events",
        "stdlib:events",
        "stdlib:runners",
        "runner",
        "fw_",
        "profile_eudaimon",
        "transcript",
    )
    other = sorted(
        ((k, v) for k, v in incl_t.items() if not any(s in k for s in skip) and "<module>" not in k),
        key=lambda kv: -kv[1],
    )[:8]
    return {
        "wall_s": total,
        "samples_interval_s": profiler.interval,
        "self": [(k, pct(v)) for k, v in selfs],
        "inclusive_eudaimon": [(k, pct(v)) for k, v in eud],
        "inclusive_other": [(k, pct(v)) for k, v in other],
    }


async def _memory_loop(k: int, runs: int) -> None:
    import fw_eudaimon as e
    from transcript import Loop

    t = Loop(k)
    agent = e.make(t, max_steps=k)  # built once, as the benchmark builds it outside the timing
    for _ in range(runs):
        await e.run(agent, t.question())


async def _construct(n: int) -> None:
    import fw_eudaimon as e

    for _ in range(n):
        e.construct()


async def _durable_loop(k: int, runs: int) -> None:
    import fw_eudaimon as e
    from transcript import Loop

    out = HERE.parent / "out"
    out.mkdir(parents=True, exist_ok=True)
    d = Path(tempfile.mkdtemp(prefix="profile-", dir=out))
    try:
        for i in range(runs):
            await e.durable_loop(Loop(k), d / f"p{i}.db", k)
    finally:
        shutil.rmtree(d, ignore_errors=True)


async def _concurrency(n: int, latency_s: float) -> None:
    import fw_eudaimon as e
    from transcript import PerRun

    agent = e.make(PerRun(), latency_s=latency_s)
    await asyncio.gather(*(e.run(agent, PerRun.question_for(i)) for i in range(n)))


def profile(which: str) -> dict[str, Any]:
    import fw_eudaimon as e
    from transcript import Loop

    asyncio.run(e.run(e.make(Loop(10), max_steps=10), "warm"))  # imports outside the profile
    jobs = {
        "memory": ("in-memory loop, K=1000, 10 runs (MemoryStore)", lambda: _memory_loop(1000, 10), 0.0002),
        "construct": ("construction of an agent with one tool, 500 times", lambda: _construct(500), 0.0002),
        "memory_short": (
            "in-memory loop, K=10, 300 runs (MemoryStore): the per-run fixed cost",
            lambda: _memory_loop(10, 300),
            0.0002,
        ),
        "durable": (
            "durable loop, K=100, 5 runs (SqliteStore, synchronous=full)",
            lambda: _durable_loop(100, 5),
            0.0002,
        ),
        "concurrency": (
            "10,000 concurrent runs, 50 ms model latency (MemoryStore)",
            lambda: _concurrency(10_000, 0.05),
            0.001,
        ),
    }
    title, factory, interval = jobs[which]
    profiler = Profiler(interval=interval, async_mode="disabled")
    profiler.start()
    asyncio.run(factory())
    profiler.stop()
    summary = summarize(profiler)
    summary["title"] = title
    return summary


def render(summary: dict[str, Any]) -> list[str]:
    lines = [
        f"**{summary['title']}** — {summary['wall_s']:.2f} s profiled, sampling every "
        f"{summary['samples_interval_s'] * 1e3:.1f} ms",
        "",
        "| self % | function (where the CPU was) |",
        "|---:|---|",
    ]
    lines += [f"| {p:.1f} | `{k}` |" for k, p in summary["self"]]
    lines += ["", "| inclusive % | eudaimon function (on the stack) |", "|---:|---|"]
    lines += [f"| {p:.1f} | `{k}` |" for k, p in summary["inclusive_eudaimon"]]
    lines += ["", "| inclusive % | library / stdlib function (on the stack) |", "|---:|---|"]
    lines += [f"| {p:.1f} | `{k}` |" for k, p in summary["inclusive_other"]]
    return [*lines, ""]


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    for name in ["construct", "memory", "memory_short", "durable", "concurrency"] if which == "all" else [which]:
        print("\n".join(render(profile(name))))
