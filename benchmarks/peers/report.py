"""Tables, target verdicts and the machine description, as Markdown (printed and written to
benchmarks/RESULTS.md)."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

TARGET_MEMORY_RATIO = 1 / 20
FLAT_RATIO = 1.5
TARGET_DURABLE_RATIO = 1 / 8
TARGET_COMMITS = 2.0
TARGET_STORAGE_RATIO = 2.0
TARGET_EXPONENT = 1.1

PEER_LABEL = {
    "eudaimon": "eudaimon",
    "langgraph": "LangGraph",
    "pydantic_ai": "Pydantic AI",
    "openai_agents": "OpenAI Agents SDK",
}


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine(versions: dict[str, str], fsync_us: float | None, source: str | None = None) -> list[str]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in _read("/proc/cpuinfo").splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or platform.machine(),
    )
    mem = next(
        (int(line.split()[1]) for line in _read("/proc/meminfo").splitlines() if line.startswith("MemTotal:")), 0
    )
    fs = _filesystem(str(REPO / "benchmarks"))
    return [
        f"- CPU: {cpu}, {os.cpu_count()} logical cores; RAM {mem / 1024 / 1024:.1f} GiB",
        f"- OS: {platform.system()} {platform.release()}; disk for SQLite files: {fs}"
        + (f"; one 512-byte write + fsync: {fsync_us:.0f} µs (median)" if fsync_us else ""),
        f"- Python {platform.python_version()} ({platform.python_implementation()})",
        "- Packages: " + "; ".join(f"{v}" for v in versions.values()),
        f"- eudaimon source: {source or git_state()}",
        f"- Load average (1, 5, 15 min) when this was written: {_read('/proc/loadavg').split(' ')[:3]}",
    ]


def noise_lines(res: dict[str, Any]) -> list[str]:
    """The machine is shared: how busy other processes kept it while each workload ran."""
    parts = [
        f"{k}: {v['noise']['others_share']:.0%}"
        + (f" (I/O stall {v['noise']['io_stall_share']:.0%})" if v["noise"].get("io_stall_share", -1) >= 0 else "")
        for k, v in res.items()
        if isinstance(v, dict) and "noise" in v
    ]
    if not parts:
        return []
    worst = max(v["noise"]["others_share"] for v in res.values() if isinstance(v, dict) and "noise" in v)
    warn = (
        " **Other processes were busy during this run: treat the medians with care and compare the best-of "
        "columns, or run again on a quiet machine.**"
        if worst > 0.10
        else ""
    )
    return [
        f"- CPU used by other processes while each workload ran (share of all cores; in brackets the share of the "
        f"time some task waited on I/O, from /proc/pressure/io, our own fsyncs included): {', '.join(parts)}.{warn}"
    ]


def git_state() -> str:
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "src"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"commit {head}" + (
        f" plus uncommitted changes in {len(dirty.splitlines())} file(s) under src/" if dirty else ""
    )


def _filesystem(path: str) -> str:
    best = ("", "?", "?")
    for line in _read("/proc/mounts").splitlines():
        parts = line.split()
        if len(parts) >= 3 and path.startswith(parts[1]) and len(parts[1]) >= len(best[0]):
            best = (parts[1], parts[2], parts[0])
    return f"{best[1]} ({best[2]} on {best[0]})"


def _f(x: float, digits: int = 0) -> str:
    if x >= 100 or digits == 0:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def _ratio(e: float, p: float) -> str:
    if p <= 0:
        return "–"
    r = e / p
    return f"{r:.3f} (1/{1 / r:.1f})" if r < 1 else f"{r:.2f}"


# -- tables ------------------------------------------------------------------------------------


def tables(res: dict[str, Any]) -> list[str]:
    out: list[str] = []
    if "w1" in res:
        w = res["w1"]["rows"]
        e = w["eudaimon"]["us"]
        out += [
            "### (1) Construction of an agent with one tool",
            "",
            f"Median of {res['w1']['rounds']} rounds, frameworks alternating. The tool is a plain async function.",
            "",
            "| framework | µs (median) | µs (best) | eudaimon ÷ this |",
            "|---|---:|---:|---:|",
        ]
        for fw, row in w.items():
            out.append(f"| {PEER_LABEL[fw]} | {_f(row['us'], 1)} | {_f(row['us_min'], 1)} | {_ratio(e, row['us'])} |")
        out.append("")
    if "w2" in res:
        w = res["w2"]
        ks = sorted(w["by_k"])
        e = {k: w["by_k"][k]["eudaimon"]["us_per_step"] for k in ks}
        rounds = ", ".join(f"K={k}: {w['rounds'][k]}" for k in ks)
        out += [
            "### (2) Sequential tool loop, in memory: µs per step",
            "",
            "A run of K steps = K model calls, K−1 of which call one async tool; time of `run` / K "
            f"(agent built outside the timing; medians of {rounds} rounds). "
            f"`marginal` = (T(K={ks[-1]}) − T(K={ks[-2]})) / {ks[-1] - ks[-2]}: the cost of one more step, "
            "fixed per-run costs excluded. Every timed run follows a `gc.collect()` of the whole process, "
            "the four frameworks loaded, which leaves the CPU caches cold: a short run pays most for that "
            "(`peers/cold_start.py` measures what it costs eudaimon).",
            "",
            "| config | "
            + " | ".join(f"K={k}" for k in ks)
            + " | marginal | "
            + " | ".join(f"eudaimon ÷ this, K={k}" for k in ks)
            + " |",
            "|---|" + "---:|" * (2 * len(ks) + 1),
        ]
        for key, title in w["titles"].items():
            vals = [w["by_k"][k][key]["us_per_step"] for k in ks]
            out.append(
                f"| {title} | "
                + " | ".join(_f(v, 1) for v in vals)
                + f" | {_f(_marginal(w, key), 1)} | "
                + " | ".join(_ratio(e[k], w["by_k"][k][key]["us_per_step"]) for k in ks)
                + " |"
            )
        out.append("")
    if "w3" in res:
        w = res["w3"]
        e = w["rows"]["eudaimon"]["us"]
        out += [
            f"### (3) One turn with {w['n']} parallel tool calls: µs per run",
            "",
            f"Two model calls, {w['n']} async tool calls between them; median of {w['rounds']} rounds.",
            "",
            "| config | µs (median) | µs (best) | eudaimon ÷ this |",
            "|---|---:|---:|---:|",
        ]
        for key, row in w["rows"].items():
            out.append(f"| {w['titles'][key]} | {_f(row['us'])} | {_f(row['us_min'])} | {_ratio(e, row['us'])} |")
        out.append("")
    if "w4" in res:
        w = res["w4"]
        marks = w["marks"]
        out += [
            f"### (4) One thread of {marks[-1]} turns: bytes on disk",
            "",
            "Each turn: a 100-byte question, one tool call returning 4,096 bytes, a 2,048-byte answer; "
            "the model sees the whole thread every turn. Payload = the sum of those bytes. "
            "Measured with every writer closed: `PRAGMA wal_checkpoint(TRUNCATE)` from a fresh connection, "
            "then main file + `-wal` (no VACUUM; `-shm` not counted). eudaimon = its journal (`SqliteStore`), "
            "the history read back from it by `JournalMemory`, one file; LangGraph = `SqliteSaver`'s one file. "
            "Exponent = least-squares slope of log(bytes) on log(turns).",
            "",
            "| framework | " + " | ".join(f"after {m}" for m in marks) + f" | ÷ payload at {marks[-1]} | exponent |",
            "|---|" + "---:|" * (len(marks) + 2),
            "| payload | " + " | ".join(f"{w['payload'][m]:,}" for m in marks) + " | 1.00 | 1.00 |",
        ]
        for key, row in w["rows"].items():
            sizes = row["sizes"]
            out.append(
                f"| {PEER_LABEL[key]} | "
                + " | ".join(f"{sizes[m]['file']:,}" for m in marks)
                + f" | {sizes[marks[-1]]['file'] / w['payload'][marks[-1]]:.2f} | {row['exponent']:.2f} |"
            )
        e, lg = w["rows"].get("eudaimon"), w["rows"].get("langgraph")
        if e and lg:
            out.append(
                "| eudaimon ÷ LangGraph | "
                + " | ".join(f"{e['sizes'][x]['file'] / lg['sizes'][x]['file']:.3f}" for x in marks)
                + " | | |"
            )
        out.append("")
        e = w["rows"].get("eudaimon")
        if e:
            by_type = e["by_type"]
            events = sum(n for t, n in by_type.items() if not t.startswith("("))
            out.append(
                f"- eudaimon at {marks[-1]} turns: event payloads {events:,} B (`run_started` "
                f"{by_type.get('run_started', 0):,} B: its history is ranges of message numbers), texts stored once "
                f"{by_type.get('(texts, stored once)', 0):,} B, history messages stored once "
                f"{by_type.get('(messages, stored once)', 0):,} B; the rest of the file is SQLite's pages and indexes."
            )
        for key, row in w["rows"].items():
            parts = ", ".join(f"{t}: {n:,}" for t, n in sorted(row["by_type"].items(), key=lambda kv: -kv[1]))
            out.append(
                f"- {PEER_LABEL[key]} bytes by record kind at {marks[-1]} turns: {parts}; "
                f"{row['seconds']:.1f} s for the {marks[-1]} turns."
            )
        out.append("")
    if "w5" in res:
        w = res["w5"]
        out += [
            f"### (5) Concurrent runs in one process, {w['latency_ms']:.0f} ms model latency",
            "",
            "Each run: question → one tool call → answer (two model calls, each `asyncio.sleep(0.05)`), all "
            "started at once with `asyncio.gather`; each (framework, N) in a fresh subprocess, one agent shared "
            "by all runs (OpenAI Agents: a shallow `agent.clone()` per run, see below). RSS from /proc/self/status: "
            "peak = max(VmHWM, sampled VmRSS) − VmRSS before; retained = VmRSS after (and a gc.collect()) − before. "
            "Loop lag: a ticker awaiting `asyncio.sleep(0.01)` and recording how late it wakes.",
            "",
            "| framework | N | completion s | KiB/run peak | KiB/run retained | lag max ms | lag p99 ms | lag avg ms "
            "| ticks | eudaimon ÷ this (time) | eudaimon ÷ this (KiB/run) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        rows = w["rows"]
        for key in sorted(rows, key=lambda k: (rows[k]["n"], list(PEER_LABEL).index(rows[k]["fw"]))):
            r = rows[key]
            if "error" in r:
                out.append(f"| {PEER_LABEL[r['fw']]} | {r['n']:,} | {r['error']} | | | | | | | | |")
                continue
            e = rows.get(f"eudaimon:{r['n']}", {})
            rt = _ratio(e["seconds"], r["seconds"]) if "seconds" in e else "–"
            rm = _ratio(e["peak_kib_per_run"], r["peak_kib_per_run"]) if "peak_kib_per_run" in e else "–"
            out.append(
                f"| {PEER_LABEL[r['fw']]} | {r['n']:,} | {r['seconds']:.2f} | {r['peak_kib_per_run']:.1f} | "
                f"{r['retained_kib_per_run']:.1f} | {r['lag_max_ms']:,.0f} | {r['lag_p99_ms']:,.0f} | "
                f"{r['lag_avg_ms']:,.1f} | {r['ticks']} | {rt} | {rm} |"
            )
        out.append("")
    if "w6" in res:
        w = res["w6"]
        e = w["rows"]["eudaimon"]["us_per_step"]
        out += [
            f"### (6) Durable loop on SQLite, fsync on every commit: µs per step (K={w['k']})",
            "",
            f"Fresh database file per run on {'the repository disk'}; schema created outside the timing; "
            f"median of {w['rounds']} rounds. One fsync on this disk costs ~{w['fsync_us']:.0f} µs. "
            "Commits: eudaimon's `store.commit_count`; LangGraph's `SqliteSaver.cursor(transaction=True)` "
            "contexts (one `conn.commit()` each), or `aiosqlite` `commit()` calls.",
            "",
            "| config | µs/step (median) | µs/step (best) | commits/step | synchronous | eudaimon ÷ this |",
            "|---|---:|---:|---:|---|---:|",
        ]
        for key, row in w["rows"].items():
            out.append(
                f"| {w['titles'][key]} | {_f(row['us_per_step'])} | {_f(row['us_per_step_min'])} | "
                f"{row['commits_per_step']:.2f} | {row['synchronous']} | {_ratio(e, row['us_per_step'])} |"
            )
        out.append("")
    if "w7" in res:
        w = res["w7"]
        e = w["rows"]["eudaimon"]["us_per_delta"]
        out += [
            f"### (7) Streaming: µs per text delta ({w['n']:,} deltas in one answer)",
            "",
            'eudaimon `prompt_stream` (TextDelta); LangGraph `astream(stream_mode="messages")`; Pydantic AI '
            "`run_stream` + `stream_text(delta=True, debounce_by=None)`; OpenAI Agents `run_streamed` + "
            f"`stream_events()` (ResponseTextDeltaEvent). Whole run / deltas; median of {w['rounds']} rounds.",
            "",
            "| framework | µs per delta | run ms | eudaimon ÷ this |",
            "|---|---:|---:|---:|",
        ]
        for fw, row in w["rows"].items():
            out.append(
                f"| {PEER_LABEL[fw]} | {row['us_per_delta']:.2f} | {row['run_ms']:.1f} | {_ratio(e, row['us_per_delta'])} |"
            )
        out.append("")
    return out


def _marginal(w: dict[str, Any], key: str) -> float:
    ks = sorted(w["by_k"])
    if len(ks) < 2:
        return float("nan")
    a, b = ks[-2], ks[-1]
    ta = w["by_k"][a][key]["run_ms"] * 1e3
    tb = w["by_k"][b][key]["run_ms"] * 1e3
    return (tb - ta) / (b - a)


# -- targets -----------------------------------------------------------------------------------


def targets(res: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target: name, met (bool or None when not measured), and the numbers behind it."""
    out: list[dict[str, Any]] = []
    if "w2" in res:
        w = res["w2"]
        ks = sorted(w["by_k"])
        worst = 0.0
        detail = []
        for k in ks:
            row = w["by_k"][k]
            peers = {key: v["us_per_step"] for key, v in row.items() if key != "eudaimon"}
            fastest = min(peers, key=peers.__getitem__)
            r = row["eudaimon"]["us_per_step"] / peers[fastest]
            worst = max(worst, r)
            detail.append(
                f"K={k}: {row['eudaimon']['us_per_step']:.1f} vs {w['titles'][fastest]} "
                f"{peers[fastest]:.1f} µs/step = 1/{1 / r:.1f}"
            )
        need = TARGET_MEMORY_RATIO
        out.append(
            {
                "key": "memory_ratio",
                "name": "in-memory per-step ≤ 1/20 of the fastest peer",
                "met": worst <= need,
                "numbers": "; ".join(detail)
                + (f" (needs ≤ 1/20 = {need:.3f}; worst {worst:.3f}, {worst / need:.2f}× the allowed)"),
            }
        )
        vals = [w["by_k"][k]["eudaimon"]["us_per_step"] for k in ks]
        flat = vals[-1] / vals[0]
        marg = _marginal(w, "eudaimon")
        out.append(
            {
                "key": "memory_flat",
                "name": f"in-memory per-step flat from K={ks[0]} to K={ks[-1]} (K={ks[-1]} ÷ K={ks[0]} ≤ {FLAT_RATIO})",
                "met": flat <= FLAT_RATIO,
                "numbers": ", ".join(f"K={k}: {v:.1f}" for k, v in zip(ks, vals, strict=True))
                + f" µs/step; ratio {flat:.2f}; marginal step (K={ks[-2]}→{ks[-1]}) {marg:.1f} µs",
            }
        )
    if "w6" in res:
        w = res["w6"]
        e = w["rows"]["eudaimon"]
        lgs = {k: v for k, v in w["rows"].items() if k.startswith("lg_")}
        fastest = min(lgs, key=lambda k: lgs[k]["us_per_step"])
        r = e["us_per_step"] / lgs[fastest]["us_per_step"]
        others = "; ".join(
            f"{w['titles'][k]}: {v['us_per_step']:.0f} (ratio 1/{v['us_per_step'] / e['us_per_step']:.1f})"
            for k, v in lgs.items()
        )
        out.append(
            {
                "key": "durable_ratio",
                "name": "durable SQLite per-step ≤ 1/8 of LangGraph's SQLite saver",
                "met": r <= TARGET_DURABLE_RATIO,
                "numbers": f"eudaimon {e['us_per_step']:.0f} µs/step vs the fastest LangGraph config "
                f"({w['titles'][fastest]}) {lgs[fastest]['us_per_step']:.0f} = 1/{1 / r:.1f} "
                f"(needs ≤ 1/8, i.e. ≤ {lgs[fastest]['us_per_step'] / 8:.0f} µs/step; "
                f"{r / TARGET_DURABLE_RATIO:.2f}× the allowed); best-of-rounds: eudaimon "
                f"{e['us_per_step_min']:.0f} vs {min(v['us_per_step_min'] for v in lgs.values()):.0f} = "
                f"1/{min(v['us_per_step_min'] for v in lgs.values()) / e['us_per_step_min']:.1f}. "
                f"All medians: {others}. " + _floor(w, lgs[fastest]["us_per_step"]),
            }
        )
        out.append(
            {
                "key": "durable_commits",
                "name": "≤ 2 commits per step",
                "met": e["commits_per_step"] <= TARGET_COMMITS,
                "numbers": f"eudaimon {e['commits_per_step']:.2f} commits/step at K={w['k']}"
                + (
                    f" = {w['eudaimon_commits_split']['per_step']:.2f} per step + "
                    f"{w['eudaimon_commits_split']['per_run']:.0f} per run (snapshots); fsynced commits only: "
                    "the 3 lease transactions of a run (run lease taken, thread lease taken and given up) "
                    "commit without an fsync"
                    if "eudaimon_commits_split" in w
                    else ""
                )
                + " (LangGraph: "
                + ", ".join(f"{v['commits_per_step']:.2f}" for v in lgs.values())
                + ")",
            }
        )
    if "w4" in res:
        w = res["w4"]
        e = w["rows"]["eudaimon"]
        m = w["marks"][-1]
        ratio = e["sizes"][m]["file"] / w["payload"][m]
        lg = w["rows"].get("langgraph")
        lgtxt = (
            (
                f"; LangGraph {lg['sizes'][m]['file']:,} B = {lg['sizes'][m]['file'] / w['payload'][m]:.2f}× payload, "
                f"exponent {lg['exponent']:.2f}"
            )
            if lg
            else ""
        )
        out.append(
            {
                "key": "storage_ratio",
                "name": f"storage after {m} turns ≤ 2× payload",
                "met": ratio <= TARGET_STORAGE_RATIO,
                "numbers": f"eudaimon {e['sizes'][m]['file']:,} B vs payload {w['payload'][m]:,} B = {ratio:.2f}× "
                f"(needs ≤ 2×; {ratio / TARGET_STORAGE_RATIO:.2f}× the allowed){lgtxt}",
            }
        )
        out.append(
            {
                "key": "storage_exponent",
                "name": "storage growth exponent ≤ 1.1",
                "met": e["exponent"] <= TARGET_EXPONENT,
                "numbers": f"eudaimon exponent {e['exponent']:.2f} (used pages: {e['exponent_used']:.2f})" + lgtxt,
            }
        )
    if "w5" in res:
        rows = res["w5"]["rows"]
        big = max((r["n"] for r in rows.values()), default=0)
        e = rows.get(f"eudaimon:{big}", {})
        ok = "seconds" in e
        out.append(
            {
                "key": "concurrency",
                "name": f"{big:,} concurrent runs complete, RSS per run and loop lag reported",
                "met": ok,
                "numbers": (
                    f"eudaimon: {big:,} runs in {e['seconds']:.2f} s, {e['peak_kib_per_run']:.1f} KiB/run peak, "
                    f"loop lag max {e['lag_max_ms']:,.0f} ms / avg {e['lag_avg_ms']:,.1f} ms"
                    if ok
                    else f"eudaimon: {e.get('error', 'not run')}"
                ),
            }
        )
    return out


def _floor(w: dict[str, Any], lg_us: float) -> str:
    if "commit_floor_us" not in w:
        return f"fsync ~{w['fsync_us']:.0f} µs"
    probe = w["commit_floor_us"]
    cheapest = min(probe.values())
    floor = 2 * cheapest
    return (
        "Floor on this disk: the cheapest durable SQLite commit (one row, WAL, synchronous=FULL) takes "
        f"{probe['growing']:.0f} µs while it lengthens the WAL and {probe['reused']:.0f} µs writing over blocks "
        f"the WAL already has, so 2 commits/step cost ≥ {floor:.0f} µs/step before any work = "
        f"1/{lg_us / floor:.1f} of LangGraph" + (" — the target is below that floor" if floor > lg_us / 8 else "")
    )


def verdict_lines(ts: list[dict[str, Any]]) -> list[str]:
    lines = ["| target | verdict | numbers |", "|---|---|---|"]
    for t in ts:
        v = "MET" if t["met"] else "MISSED"
        lines.append(f"| {t['name']} | **{v}** | {t['numbers']} |")
    return lines
