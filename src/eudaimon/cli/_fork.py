"""`eudaimon runs fork RUN --at SEQ`: asks first when the parent did something after that point.

A fork goes on from an earlier event as a new run: started, it may run again what its parent
ran after the fork point, with new idempotency keys, so a refund the parent made may be made
twice. Like the inspector's fork dialog, the command lists the WRITE and IRREVERSIBLE calls the
parent started after `--at` (and those whose effect it cannot know: a tool of no agent given,
treated as a write) and asks before forking. `--yes` is the answer for scripts; without a
terminal to ask on and without `--yes`, it refuses and says why.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

import typer

from eudaimon.cli._common import (
    RunArgument,
    StoreOption,
    default_store_url,
    fail,
    load_agent,
    out,
    resolve_store_url,
    run_async,
    shown_url,
    with_store,
)
from eudaimon.cli._escape import shown
from eudaimon.core.errors import RunNotFound
from eudaimon.core.events import RunStarted, ToolStarted
from eudaimon.runtime.process import operations
from eudaimon.stores.base import EventStore

CAREFUL = frozenset({"write", "irreversible", "unknown"})


@dataclass(frozen=True, slots=True)
class EffectCall:
    """A call the parent started after the fork point, and its tool's effect class."""

    call_id: str
    tool: str
    effect: str
    seq: int
    arguments: object


async def careful_calls(store: EventStore, run_id: str, at_seq: int, effects: Mapping[str, str]) -> list[EffectCall]:
    """The calls `run_id` started after `at_seq` whose tool is not known to only read: its effect
    from the journal's record of the tool (remote tools), else `effects` (an agent's tools),
    else `unknown`."""
    events = await store.load(run_id)
    if not events:
        raise RunNotFound(run_id)
    first = next((e.data for e in events[:2] if isinstance(e.data, RunStarted)), None)
    known = {record.name: record.effect for record in first.tools} if first is not None else {}
    found: dict[str, EffectCall] = {}
    for event in events:
        data = event.data
        if event.seq <= at_seq or not isinstance(data, ToolStarted) or data.call_id in found:
            continue
        effect = str(known.get(data.tool) or effects.get(data.tool) or "unknown")
        found[data.call_id] = EffectCall(data.call_id, data.tool, effect, event.seq, data.arguments)
    return [c for c in found.values() if c.effect in CAREFUL]


def interactive() -> bool:
    """Whether there is a person at a terminal to ask."""
    return sys.stdin.isatty()


def fork(
    run_id: RunArgument,
    at: Annotated[int, typer.Option("--at", help="The last seq of the parent the fork keeps.")],
    store: StoreOption = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Fork without asking, even when the parent ran calls with effects after --at."
        ),
    ] = False,
    agent: Annotated[
        str | None,
        typer.Option("--agent", help="MODULE:ATTR of the run's Agent, to know its tools' effects (else: unknown)."),
    ] = None,
) -> None:
    """Start a new run whose history is this run's up to `--at SEQ`; resume it to go on live.

    The WRITE and IRREVERSIBLE calls the parent ran after that point are listed first, and
    you are asked: a fork that is resumed may run them again. `--yes` skips the question."""
    url = resolve_store_url(store)
    effects = {name: tool.effect.value for name, tool in load_agent(agent).tools.items()} if agent else {}
    console = out()
    calls = run_async(with_store(url, lambda journal: careful_calls(journal, run_id, at, effects), read_only=True))
    if calls:
        console.print(
            shown(
                f"after seq {at}, run {run_id} ran {len(calls)} call(s) with effects; a resumed fork may run them "
                "again, with new idempotency keys:",
                "yellow",
            )
        )
        for call in calls:
            arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
            console.print(shown(f"  {call.effect.upper()} {call.tool} {call.call_id} (seq {call.seq}) {arguments}"))
        if any(call.effect == "unknown" for call in calls):
            console.print(
                shown("  (UNKNOWN: a tool whose effect no agent was given for; pass --agent MODULE:ATTR to know)")
            )
        if not yes:
            if not interactive():
                fail(
                    f"not forking: run {run_id} ran {len(calls)} call(s) with effects after seq {at} (listed above), "
                    "and there is no terminal to ask on; pass --yes to fork anyway"
                )
            if not typer.confirm("fork anyway?", default=False):
                fail("not forked")
    child = run_async(with_store(url, lambda journal: operations.fork(journal, run_id, at)))
    console.print(shown(f"forked {run_id} at seq {at} into {child}"))
    flag = "" if url == default_store_url() else f" --store {shown_url(url)}"
    console.print(shown(f"  eudaimon runs resume {child} --agent MODULE:ATTR{flag}", "cyan"), soft_wrap=True)
