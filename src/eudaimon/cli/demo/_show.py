"""What `eudaimon demo` prints between its acts: the crash, the proof, the approval, the timeline.

Everything shown comes from the journal (and, beside it, the tools' own ledger of executions);
all of it passes through `shown`/`visible`, so a text a model or tool wrote is printed, never
obeyed by the terminal.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from eudaimon.cli._common import counted, shown_url
from eudaimon.cli._escape import shown
from eudaimon.cli._render import arguments_text, cost_text, status_text, timeline_table
from eudaimon.core.events import Event, ModelAttemptStarted, ToolCompleted, ToolStarted
from eudaimon.core.state import RunState
from eudaimon.tools import Tool


def eudaimon_command() -> str:
    """How the user runs `eudaimon` here: the console script they just installed when this
    process is it, else `python -m eudaimon` with this interpreter."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.stem == "eudaimon":
        found = shutil.which("eudaimon")
        if found is not None and argv0.exists() and os.path.samefile(found, argv0):
            return "eudaimon"
        return shlex.quote(str(argv0.resolve()) if argv0.exists() else str(argv0))
    found = shutil.which("eudaimon")
    if found is not None and Path(found).parent == Path(sys.executable).parent:
        return "eudaimon"  # the script of this very environment is on PATH
    return f"{shlex.quote(sys.executable)} -m eudaimon"


def act(console: Console, number: int, title: str) -> None:
    console.print()
    console.print(Rule(Text(f"{number}. {title}", style="bold"), align="left"))


def header(console: Console, url: str, run_id: str, tools: Sequence[Tool]) -> None:
    listed = ", ".join(f"{t.name} ({t.effect.value}{', idempotent' if t.idempotent else ''})" for t in tools)
    console.print(
        Text.assemble(
            ("eudaimon demo", "bold"),
            shown(f" — a refund desk on a scripted model (offline); run {run_id}", newlines=False),
            ("\njournal ", "dim"),
            shown(shown_url(url), newlines=False),
            ("\ntools   ", "dim"),
            shown(listed, newlines=False),
        ),
        soft_wrap=True,
    )


def kill_report(console: Console, pid: int, exit_code: int, tool: str) -> None:
    code = f"exit code {exit_code}" + (" = killed by SIGKILL" if exit_code == -9 else "")
    console.print(
        Text.assemble(
            ("  ✗ ", "bold red"),
            (f"killed worker pid {pid} with SIGKILL in the middle of {tool} ({code})", "red"),
        )
    )


def after_crash(console: Console, events: Sequence[Event]) -> None:
    """What the journal holds once the worker is dead: the intent of the call it was in, or,
    for a step of READ calls only (one commit, after its calls), the model call before it."""
    last = events[-1]
    line = Text.assemble(("  the journal ends at seq ", "dim"), str(last.seq), ("  ", "dim"), shown(last.type))
    if isinstance(last.data, ToolStarted):
        line.append(
            shown(
                f": {last.data.tool} attempt {last.data.attempt}, key {last.data.idempotency_key[:16]}…, no result",
                newlines=False,
            )
        )
    elif isinstance(last.data, ModelAttemptStarted):
        line.append(
            ": a step of READ calls commits once, after them, so nothing of the interrupted step is "
            "journaled; the next worker asks the model again and the READ runs again",
            "dim",
        )
    console.print(line, soft_wrap=True)


def executions(events: Sequence[Event], tool: str) -> list[ToolStarted]:
    """Every journaled execution (intent) of `tool`, in order."""
    return [e.data for e in events if isinstance(e.data, ToolStarted) and e.data.tool == tool]


def proof_table(events: Sequence[Event], ledger: Sequence[dict[str, Any]], tools: Sequence[Tool]) -> Table:
    """Per tool: how often the journal says it started and completed, and what the tool itself
    recorded (process ids, attempts, idempotency keys)."""
    table = Table(title="What ran, and how often", title_justify="left")
    for column in ("tool", "effect", "journal: started / completed", "executions seen by the outside world"):
        table.add_column(column)
    for tool in tools:
        started = executions(events, tool.name)
        completed = [e for e in events if isinstance(e.data, ToolCompleted) and e.data.tool == tool.name]
        seen = [
            f"attempt {row['attempt']} in pid {row['pid']}, key {str(row['key'])[:16]}…"
            for row in ledger
            if row["tool"] == tool.name
        ]
        effect = tool.effect.value + (", idempotent" if tool.idempotent else "")
        table.add_row(
            shown(tool.name),
            effect,
            f"{len(started)} / {len(completed)}",
            shown("\n".join(seen) or "—"),
        )
    return table


def verdicts(console: Console, events: Sequence[Event], ledger: Sequence[dict[str, Any]]) -> None:
    """The two claims of the demo, in one line each: the WRITE checked against the journal, the
    READ against what the tool itself recorded (a READ may run before its intent is durable)."""
    case = executions(events, "open_case")
    order = [row for row in ledger if row["tool"] == "lookup_order"]
    once = len(case) == 1
    console.print(
        Text.assemble(
            ("  ✓ " if once else "  ✗ ", "bold green" if once else "bold red"),
            f"open_case (a plain WRITE) ran {'once' if once else f'{len(case)} times'}: it completed before the crash, "
            "so the resumed run read its result from the journal instead of opening a second case",
        )
    )
    keys = {str(row["key"]) for row in order}
    pids = [row["pid"] for row in order]
    same = len(order) == 2 and len(keys) == 1 and len(set(pids)) == 2
    console.print(
        Text.assemble(
            ("  ✓ " if same else "  ✗ ", "bold green" if same else "bold red"),
            f"lookup_order (a READ) was interrupted and ran again: in pids {pids}, with the same idempotency key ",
            shown(", ".join(sorted(keys)), "bold"),
        ),
        soft_wrap=True,
    )


def approval_panel(console: Console, call_id: str, tool: str, arguments: Any, reason: str) -> None:
    body = Text.assemble(
        shown(f"{tool}({arguments_text(arguments)})", "bold"),
        ("\ncall ", "dim"),
        shown(call_id),
        ("   why ", "dim"),
        shown(reason or "the approval policy asked"),
    )
    console.print(Panel(body, title="A human's approval is needed", title_align="left", border_style="yellow"))


def undecided(console: Console, command: str, run_id: str, call_id: str, url: str, *, terminal: bool) -> None:
    """The run waits: say how to decide it (the flags, or the commands any process may run)."""
    store = f" --store {shlex.quote(shown_url(url))}"
    why = (
        "No answer, so the run waits." if terminal else "Not on a terminal (stdin and stdout), so the demo cannot ask."
    )
    console.print(
        Text(
            f"{why} Pass --approve or --deny ({command} demo --approve), or decide this run yourself:",
            style="yellow",
        ),
        soft_wrap=True,
    )
    for line in (
        f"  {command} runs approve {run_id} {call_id}{store}",
        f"  {command} runs resume {run_id} --agent eudaimon.cli.demo:demo_agent{store}",
    ):
        console.print(shown(line, "cyan"), soft_wrap=True)


def timeline(console: Console, events: Sequence[Event], state: RunState) -> None:
    console.print(timeline_table(events, title=f"The journal of {state.run_id}: {counted(len(events), 'event')}"))
    console.print(
        Text.assemble(
            ("status ", "bold"),
            status_text(state.status),
            f"   steps {state.steps}   tokens {state.usage.input_tokens} in / {state.usage.output_tokens} out"
            f"   cost {cost_text(state.cost_usd, state.cost_known)}",
        )
    )


def inspect_hint(console: Console, command: str, run_id: str, url: str) -> None:
    store = f" --store {shlex.quote(shown_url(url))}"
    console.print(Text("\nInspect it with:", style="bold"))
    for sub in (f"runs show {run_id}", f"runs events {run_id}", f"runs state {run_id} --at 2"):
        console.print(shown(f"  {command} {sub}{store}", "cyan"), soft_wrap=True)
