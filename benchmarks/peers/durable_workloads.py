"""The durable workloads (8)-(12) — durable step, provider step, timer lateness, concurrency, PostgreSQL —
driven from compare.py through the benchmark scripts' own functions.

Each function here runs one script's measurement (`benchmarks/durable_step.py`,
`provider_step.py`, `loop_lateness.py`, `concurrent_runs.py`, `postgres_step.py`) and returns
plain data for `report_durable_workloads.py`. The measuring code stays in the scripts (run alone they
print the same figures); this module only schedules it inside one compare.py run, so that the
ratios are taken side by side with the peers' figures. Every run gets a fresh OS thread (or
subprocess) and a conversation thread of its own, and every script checks the work its runs did
before a figure is kept (the scripts raise on a mismatch).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
REPO = BENCH.parent
OUT = BENCH / "out"
"""Scratch space for database files: the repository's disk (not a tmpfs), gitignored."""
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

T = TypeVar("T")


def _env() -> dict[str, str]:
    """Subprocesses import eudaimon from this checkout, whatever venv runs them."""
    return {**os.environ, "PYTHONPATH": str(REPO / "src")}


def _on_thread(coro: Callable[..., Awaitable[T]], *args: Any) -> T:
    """`asyncio.run(coro(*args))` on a fresh OS thread (and so a fresh loop)."""
    import durable_step

    return durable_step.in_own_thread(lambda: asyncio.run(coro(*args)))  # type: ignore[arg-type]


def _last_json(proc: subprocess.CompletedProcess[str], what: str) -> dict[str, Any]:
    if proc.returncode != 0:
        tail = " / ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise RuntimeError(f"{what}: failed: {tail}")
    row: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return row


# -- (8) durable SQLite step vs one bare durable commit -----------------------------------------


def durable_step_vs_commit(k: int, rounds: int) -> dict[str, Any]:
    """durable_step.py's rounds: commit / all-READ loop / commit / WRITE loop / commit, each on its
    own thread; a step's ratio is over the commits taken just around its loop."""
    import durable_step as ds

    print(f"(8) durable SQLite step vs one durable commit, K={k}", flush=True)
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="durable-step-", dir=OUT) as tmp:
        root = Path(tmp)
        counter = iter(range(1_000_000))

        def fresh(name: str) -> Path:
            return root / f"{name}-{next(counter)}.db"

        def bare() -> float:
            return ds.in_own_thread(lambda: ds.bare_commits(fresh("bare"), ds.BARE_COMMITS))

        def loop(tool: str) -> Any:
            return ds.in_own_thread(lambda: asyncio.run(ds.one_loop(fresh(tool), k, tool)))

        loop("look")  # imports, caches
        commits: list[float] = []
        rows: dict[str, list[Any]] = {"read": [], "write": []}
        ratios: dict[str, list[float]] = {"read": [], "write": []}
        for r in range(rounds):
            before = bare()
            rows["read"].append(loop("look"))
            between = bare()
            rows["write"].append(loop("save"))
            after = bare()
            commits += [before, between, after]
            ratios["read"].append(rows["read"][-1].us_per_step / statistics.mean((before, between)))
            ratios["write"].append(rows["write"][-1].us_per_step / statistics.mean((between, after)))
            print(
                f"    round {r + 1}: commits {before:.0f}/{between:.0f}/{after:.0f} µs, READ step "
                f"{rows['read'][-1].us_per_step:.0f} µs ({ratios['read'][-1]:.2f} ×), WRITE step "
                f"{rows['write'][-1].us_per_step:.0f} µs ({ratios['write'][-1]:.2f} ×)",
                flush=True,
            )
    print(f"  [check] every loop completed after {k} steps with {k - 1} tool runs  OK", flush=True)
    out: dict[str, Any] = {"k": k, "rounds": rounds, "commit_us": statistics.median(commits)}
    for kind in ("read", "write"):
        out[kind] = {
            "us_per_step": statistics.median(x.us_per_step for x in rows[kind]),
            "us_per_step_min": min(x.us_per_step for x in rows[kind]),
            "ratio": statistics.median(ratios[kind]),
            "commits_per_step": max(x.commits_per_step for x in rows[kind]),
            "appends_per_step": max(x.appends_per_step for x in rows[kind]),
        }
    return out


# -- (9) a real provider's wire format, history 10/100/1000 --------------------------------------


def provider_overhead(ns: list[int], rounds: int) -> dict[str, Any]:
    """provider_step.py's measurement: OpenAIModel vs Pydantic AI's OpenAIChatModel against one
    zero-latency Chat Completions server (its own process); marginal step minus a raw POST."""
    import provider_step as ps

    from eudaimon.models._openai_convert import to_openai_messages

    print(f"(9) per-step overhead against a local OpenAI wire server, history {ns}", flush=True)
    runs = {"eudaimon": ps.eudaimon_run, "pydantic-ai": ps.pydantic_run}
    server = subprocess.Popen(
        [sys.executable, ps.__file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_env()
    )
    by_n: dict[int, dict[str, Any]] = {}
    try:
        assert server.stdout is not None
        base = f"http://127.0.0.1:{int(server.stdout.readline())}"
        for n in ns:
            body = json.dumps(
                {"messages": to_openai_messages(ps.eudaimon_history(n)), "model": "gpt-4o"},
                ensure_ascii=False,
                separators=(",", ":"),
            ).encode()
            for name, run in runs.items():  # warm up: imports, schema builds
                ps.timed_run(run, f"{base}/warm{name.replace('-', '')}/{ps.K1}/v1", n, ps.K1)
            raw: list[tuple[float, float]] = []
            samples: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
            for r in range(rounds):
                raw.append(ps.in_thread(functools.partial(ps.raw_calls, f"{base}/raw/1/v1", body, 20)))
                for name in list(runs) if r % 2 == 0 else list(reversed(runs)):
                    prefix, k2 = name.replace("-", ""), ps.K2[name]
                    short = ps.timed_run(runs[name], f"{base}/{prefix}/{ps.K1}/v1", n, ps.K1)
                    long = ps.timed_run(runs[name], f"{base}/{prefix}/{k2}/v1", n, k2)
                    samples[name].append(((long[0] - short[0]) / (k2 - ps.K1), (long[1] - short[1]) / (k2 - ps.K1)))
            row: dict[str, Any] = {
                "raw_wall_us": statistics.median(x[0] for x in raw) * 1e6,
                "raw_cpu_us": statistics.median(x[1] for x in raw) * 1e6,
            }
            for name in runs:
                row[name] = {
                    "wall_us": statistics.median(s[0] for s in samples[name]) * 1e6,
                    "cpu_us": statistics.median(s[1] for s in samples[name]) * 1e6,
                }
                row[name]["wall_overhead_us"] = row[name]["wall_us"] - row["raw_wall_us"]
                row[name]["cpu_overhead_us"] = row[name]["cpu_us"] - row["raw_cpu_us"]
            by_n[n] = row
            print(
                f"    n={n}: raw POST {row['raw_cpu_us']:.0f} µs CPU; "
                + ", ".join(f"{f} overhead {row[f]['cpu_overhead_us']:.0f} µs CPU a step" for f in runs),
                flush=True,
            )
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    print(
        "  [check] every run of both frameworks answered 'done' after K-1 `echo` calls (provider_step.timed_run)  OK",
        flush=True,
    )
    return {"ns": ns, "rounds": rounds, "k1": ps.K1, "k2": dict(ps.K2), "by_n": by_n}


# -- (10) a 10 ms timer on the loop of a durable SQLite journal ----------------------------------


def timer_lateness(rounds: int, seconds: float, runs: int) -> dict[str, Any]:
    """loop_lateness.py's children (idle / one zero-latency run at a time / `runs` runs × 6 calls at
    50 ms), each in a fresh subprocess, `rounds` times."""
    import loop_lateness as ll

    print(f"(10) 10 ms timer lateness on the loop of a durable SQLite journal, {rounds} rounds", flush=True)
    forwarded = ["--seconds", str(seconds), "--steps", "50", "--runs", str(runs), "--calls", "6", "--latency-ms", "50"]
    rows: dict[str, list[dict[str, Any]]] = {"idle": [], "one": [], "many": []}
    for r in range(rounds):
        for scenario in rows:
            cmd = [sys.executable, ll.__file__, "--child", scenario, *forwarded]
            proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), check=False)
            row = _last_json(proc, f"loop_lateness {scenario}")
            rows[scenario].append(row)
            print(f"    round {r + 1} {scenario}: p99 {row['p99_ms']:.1f} ms, max {row['max_ms']:.1f} ms", flush=True)
    print(f"  [check] every run completed its steps (loop_lateness raises otherwise): {runs} runs × 6 calls  OK")
    return {"rounds": rounds, "seconds": seconds, "runs": runs, "target_ms": ll.TARGET_P99_MS, "rows": rows}


# -- (11) 1,000 and 10,000 concurrent runs × 6 calls at 50 ms ------------------------------------


def concurrent(ns: list[int], stores: list[str], rounds: int) -> dict[str, Any]:
    """concurrent_runs.py's children: each (store, N) a fresh subprocess, every run its own thread."""
    import concurrent_runs as cr

    print(f"(11) concurrent runs × 6 calls at 50 ms, N={ns}, stores {stores}, {rounds} rounds", flush=True)
    env = {**_env(), "EUDAIMON_LEASE_TTL_S": "10"}
    rows: dict[str, list[dict[str, Any]]] = {}
    for r in range(rounds):
        order = [(s, n) for s in stores for n in ns]
        for store, n in order if r % 2 == 0 else list(reversed(order)):
            cmd = [sys.executable, cr.__file__, "--child", store, str(n), "--calls", "6", "--latency-ms", "50"]
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
            try:
                row = _last_json(proc, f"concurrent_runs {store} N={n}")
            except RuntimeError as exc:
                row = {"error": str(exc)}
            rows.setdefault(f"{store}:{n}", []).append(row)
            if "error" in row:
                print(f"    {store} N={n}: {row['error']}", flush=True)
                continue
            print(
                f"    {store} N={n}: {row['wall_s']:.2f} s, {row['cpu_us_per_step']:.0f} µs CPU/step, "
                f"timer p99 {row.get('late_p99_ms', float('nan')):.1f} ms, {row['failed']} failed",
                flush=True,
            )
    failed = sum(row.get("failed", 0) for rs in rows.values() for row in rs)
    errors = sum(1 for rs in rows.values() for row in rs if "error" in row)
    print(
        f"  [check] each run must answer after 5 tool results (concurrent_runs counts those that did not): "
        f"{failed} runs failed; {errors} of {len(order) * rounds} subprocesses gave no figure",
        flush=True,
    )
    return {"ns": ns, "stores": stores, "rounds": rounds, "calls": 6, "latency_ms": 50.0, "rows": rows}


# -- (12) PostgreSQL vs LangGraph's PostgresSaver -----------------------------------------------


def postgres(ks: list[int], repeat: int) -> dict[str, Any]:
    """postgres_step.py's measurement, each (store, K) on a fresh OS thread and loop; commits
    counted by the server for both frameworks."""
    import postgres_step as pg

    from eudaimon.stores import MemoryStore
    from eudaimon.stores.postgres import PostgresStore
    from eudaimon.stores.sqlite import SqliteStore

    print(f"(12) PostgreSQL vs LangGraph's PostgresSaver, K={ks}", flush=True)
    dsn = pg.DEFAULT_DSN
    tag = uuid.uuid4().hex[:12]
    schema, counted, lg_schema = f"eudaimon_bench_{tag}", f"eudaimon_bench_{tag}_n", f"eudaimon_bench_{tag}_lg"
    missing = pg.langgraph_missing()
    by_k: dict[int, dict[str, Any]] = {}
    OUT.mkdir(exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix="postgres-step-", dir=OUT) as tmp:
            for k in ks:
                row: dict[str, Any] = {}
                row["memory_us"], _ = _on_thread(pg.measure, MemoryStore, k, repeat)
                sqlite = functools.partial(SqliteStore, Path(tmp) / f"k{k}.db")
                row["sqlite_us"], row["sqlite_commits"] = _on_thread(pg.measure, sqlite, k, repeat)
                store = functools.partial(PostgresStore, dsn, schema=schema)
                row["postgres_us"], row["postgres_commits_store"] = _on_thread(pg.measure, store, k, repeat)
                row["postgres_commits_server"], _own = _on_thread(pg.eudaimon_pg_commits, dsn, counted, k)
                if missing is None:
                    row["langgraph_us"], row["langgraph_commits_server"] = _on_thread(
                        pg.measure_langgraph, dsn, lg_schema, k, repeat
                    )
                by_k[k] = row
                print(
                    f"    K={k}: postgres {row['postgres_us']:,.0f} µs/step, "
                    f"{row['postgres_commits_server']:.2f} commits/step; LangGraph "
                    + (
                        f"{row['langgraph_us']:,.0f} µs/step, {row['langgraph_commits_server']:.2f} commits/step"
                        if missing is None
                        else str(missing)
                    ),
                    flush=True,
                )
    finally:
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as conn:
            for name in (schema, counted, lg_schema):
                conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    print(f"  [check] every run made {ks} tool calls and answered 'done' (postgres_step asserts it)  OK", flush=True)
    return {"ks": ks, "repeat": repeat, "dsn": dsn.split("@")[-1], "langgraph_missing": missing, "by_k": by_k}
