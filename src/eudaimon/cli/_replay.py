"""`eudaimon replay RUN_ID… | --where … --agent MODULE:ATTR`: recorded runs, run again by a
changed agent, side by side; a batch prints a table and writes JSON.

Nothing a replay does leaves the process but its model's calls: recorded results are served,
an unrecorded READ runs only with `--live-reads`, and no other call ever runs (`agent.replay`).
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from eudaimon.cli._common import (
    JsonOption,
    StoreOption,
    counted,
    environ,
    fail,
    load_agent,
    out,
    resolve_store_url,
    run_async,
)
from eudaimon.cli._escape import shown
from eudaimon.stores import index

if TYPE_CHECKING:
    from eudaimon.agent import Agent
    from eudaimon.runtime.process.replay import Replay

_WHERE_KEYS = ("q", "agent", "since", "until", "status", "version", "thread")


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)


def replay(
    run_ids: Annotated[list[str] | None, typer.Argument(help="Runs to replay (or pick them with --where).")] = None,
    agent: Annotated[
        str, typer.Option("--agent", help="MODULE:ATTR naming the changed Agent (or a function returning one).")
    ] = "",
    where: Annotated[
        str | None,
        typer.Option(
            help=f"Pick runs from the index: key=value pairs split by commas, keys {', '.join(_WHERE_KEYS)} "
            "(e.g. agent=support,since=2026-12-01)."
        ),
    ] = None,
    limit: Annotated[int, typer.Option(help="Replay at most this many runs picked by --where.")] = 50,
    live_reads: Annotated[bool, typer.Option("--live-reads", help="Run READ calls the original did not make.")] = False,
    evaluator: Annotated[
        list[str] | None, typer.Option(help="MODULE:ATTR of fn(original, replay) -> bool | float | str (repeat).")
    ] = None,
    output: Annotated[Path, typer.Option("--out", help="Where a batch writes its JSON.")] = Path("replays.json"),
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Replay recorded runs with a changed agent; show where each diverged, and score them."""
    if not agent:
        fail("--agent MODULE:ATTR is required: the agent to replay the runs with")
    if not run_ids and where is None:
        fail("name runs to replay, or pick them with --where (e.g. --where agent=support,since=2026-12-01)")
    url = resolve_store_url(store)
    with environ("EUDAIMON_STORE", url):
        replayer = load_agent(agent)
    evaluators = [_load(target) for target in evaluator or ()]

    async def work() -> tuple[list[Replay], float]:
        try:
            ids = list(run_ids or ()) or await _picked(replayer, where or "", limit)
            began = time.perf_counter()
            done = [await replayer.replay(run_id, live_reads=live_reads, evaluators=evaluators) for run_id in ids]
            return done, time.perf_counter() - began
        finally:
            await replayer.store.close()

    done, seconds = run_async(work())
    totals = summary(done, seconds)
    body = {"replays": [r.as_dict() for r in done], "summary": totals}
    if as_json:
        print(json.dumps(body, indent=2, default=str))
        return
    out().print(replay_table(done))
    out().print(shown(_summary_line(totals), newlines=False))
    if len(done) > 1:
        output.write_text(json.dumps(body, indent=2, default=str), encoding="utf-8")
        out().print(f"wrote {output}")


async def _picked(agent: Agent[Any, Any], where: str, limit: int) -> list[str]:
    fields: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in where.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in _WHERE_KEYS:
            fail(f"--where {part!r}: write key=value, keys {', '.join(_WHERE_KEYS)}")
        fields[key] = value
    try:
        since = index.parse_bound(fields["since"], end=False) if "since" in fields else None
        until = index.parse_bound(fields["until"], end=True) if "until" in fields else None
    except ValueError as exc:
        fail(f"--where: {exc}")
    query = index.RunQuery(
        limit=limit,
        q=fields.get("q"),
        agent=fields.get("agent"),
        status=fields.get("status"),
        version=fields.get("version"),
        thread_id=fields.get("thread"),
        since=since,
        until=until,
    )
    return [row.run_id for row in await index.query_runs(agent.store, query)]


def summary(done: list[Replay], seconds: float) -> dict[str, Any]:
    """A batch in numbers: how many diverged, tokens, cost, calls served and run live, time."""
    return {
        "replays": len(done),
        "completed": sum(1 for r in done if r.status == "completed"),
        "diverged": sum(1 for r in done if r.status == "diverged"),
        "differing": sum(1 for r in done if r.diverged_at is not None),
        "served": sum(r.served for r in done),
        "live_reads": sum(r.live_reads for r in done),
        "input_tokens": sum(r.usage.input_tokens for r in done),
        "output_tokens": sum(r.usage.output_tokens for r in done),
        "cost_usd": sum(r.cost_usd for r in done),
        "seconds": round(seconds, 3),
    }


def _summary_line(s: dict[str, Any]) -> str:
    return (
        f"{counted(s['replays'], 'replay')}: {s['completed']} completed, {s['diverged']} stopped (diverged), "
        f"{s['differing']} differ from their original; {counted(s['served'], 'call')} served from the journal, "
        f"{counted(s['live_reads'], 'live read')}; {s['input_tokens']}/{s['output_tokens']} tokens, "
        f"${s['cost_usd']:.6f}; {s['seconds']} s"
    )


def replay_table(done: list[Replay]) -> Table:
    table = Table(title="replays", title_justify="left")
    for name in ("original", "replay", "status", "diverged at", "would call", "scores"):
        table.add_column(name, overflow="fold")
    for r in done:
        would = ", ".join(f"{c.name}({json.dumps(c.arguments)})" for c in r.would_call)
        scores = ", ".join(f"{k}={v}" for k, v in r.scores.items())
        table.add_row(
            shown(r.of, newlines=False),
            shown(r.run_id, newlines=False),
            r.status,
            "-" if r.diverged_at is None else f"step {r.diverged_at}",
            shown(would or "-", newlines=False),
            shown(scores or "-", newlines=False),
        )
    return table


def _load(target: str) -> Callable[..., Any]:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        fail(f"--evaluator {target!r} is not MODULE:ATTR")
    found: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        found = getattr(found, part, None)
        if found is None:
            fail(f"module {module_name!r} has no attribute {attr!r}")
    if not callable(found):
        fail(f"--evaluator {target} is not a function")
    return found  # type: ignore[no-any-return]
