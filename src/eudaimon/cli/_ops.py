"""`eudaimon runs approve|deny|reconcile|fork|gc|resume`: acting on runs from outside their loop
(`fork`, which asks first, in `_fork`).

All but `resume` need only the store: a human can decide for a run days later, from a machine
that never ran the agent. `resume` needs the agent (its model and tools) to go on.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from eudaimon.cli._common import (
    RunArgument,
    StoreOption,
    default_store_url,
    environ,
    exit_for,
    fail,
    journal_url,
    load_agent,
    make_default_directory,
    out,
    resolve_store_url,
    run_async,
    shown_url,
    with_store,
)
from eudaimon.cli._escape import shown
from eudaimon.cli._fork import fork
from eudaimon.cli._render import call_text, status_text
from eudaimon.cli._tree import TreeView
from eudaimon.core.errors import DeadlinePassed
from eudaimon.core.messages import JsonObject, ToolCall
from eudaimon.core.state import RunState, Status
from eudaimon.runtime.process import operations
from eudaimon.runtime.process.engines import open_engine
from eudaimon.runtime.process.leases import lease_ttl_s
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore, Lease

if TYPE_CHECKING:  # `eudaimon --help` loads no tools (and no pydantic)
    from eudaimon.runtime.loop.config import ApprovalPolicy
    from eudaimon.tools import Tool

CallArgument = Annotated[str, typer.Argument(help="The tool call id, as `eudaimon runs show RUN` lists it.")]
ByOption = Annotated[str | None, typer.Option("--by", help="Who decides (default: your login name).")]
NoteOption = Annotated[str | None, typer.Option("--note", help="Why, for the journal.")]
AgentOption = Annotated[
    str, typer.Option("--agent", help="MODULE:ATTR naming the Agent (or a function returning one) that runs it.")
]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "": 86400}
_ASK_ENGINE_S = 10.0
"""How long the CLI waits for an engine to say whether it drives a run."""


def register(runs: typer.Typer) -> None:
    """Add these commands to the `runs` group."""
    runs.command("approve")(approve)
    runs.command("deny")(deny)
    runs.command("reconcile")(reconcile)
    runs.command("fork")(fork)  # asks first: see `_fork`
    runs.command("gc")(gc)
    runs.command("resume")(resume)


ArgumentsOption = Annotated[
    str | None,
    typer.Option(
        "--arguments",
        help="A JSON object: run the call with these arguments instead (checked against the tool's schema).",
    ),
]


def approve(
    run_id: RunArgument,
    call_id: CallArgument,
    store: StoreOption = None,
    by: ByOption = None,
    note: NoteOption = None,
    arguments: ArgumentsOption = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="MODULE:ATTR naming the Agent whose tool schema and approval policy check --arguments (default: "
            "the schema the journal holds, if any; the run checks them again, policy included, before the call runs).",
        ),
    ] = None,
) -> None:
    """Approve a tool call that waits for a human; `runs resume` then runs it (with --arguments,
    with those instead of the ones shown)."""
    edited: JsonObject | None = None
    if arguments is not None:
        try:
            parsed = json.loads(arguments)
        except ValueError as exc:
            fail(f"--arguments is not JSON ({exc}); pass a JSON object, e.g. --arguments '{{\"amount\": 50}}'")
        if not isinstance(parsed, dict):
            fail(f"--arguments must be a JSON object, got {type(parsed).__name__}")
        edited = parsed
    loaded = load_agent(agent) if agent else None
    tools = loaded.tools if loaded is not None else None
    _decide(
        run_id, call_id, True, store, by, note, edited, tools, loaded.approval_policy if loaded is not None else None
    )


def deny(
    run_id: RunArgument, call_id: CallArgument, store: StoreOption = None, by: ByOption = None, note: NoteOption = None
) -> None:
    """Deny a tool call that waits for a human; the model is told when the run resumes."""
    _decide(run_id, call_id, False, store, by, note)


def _decide(
    run_id: str,
    call_id: str,
    approved: bool,
    store: str | None,
    by: str | None,
    note: str | None,
    arguments: JsonObject | None = None,
    tools: Mapping[str, Tool] | None = None,
    policy: ApprovalPolicy | None = None,
) -> None:
    url = resolve_store_url(store)
    who = by or _login()

    async def decide(journal: EventStore) -> tuple[DeadlinePassed | None, Decided]:
        tool = None
        if arguments is not None and tools is not None:
            progress = (await load_state(journal, run_id)).calls.get(call_id)
            tool = tools.get(progress.call.name) if progress is not None else None
        try:
            await operations.approve(
                journal, run_id, call_id, approved, by=who, note=note, arguments=arguments, tool=tool, policy=policy
            )
        except DeadlinePassed as exc:  # the deadline's own decision is journaled: say where the run is now
            return exc, await _decided(journal, run_id)
        return None, await _decided(journal, run_id)

    refused, after = run_async(with_store(url, decide))
    if refused is not None:
        fail(str(refused), then=lambda: _after_decision(after, url))
    verdict = "approved" if approved else "denied"
    if arguments is not None:
        verdict += f" with the arguments {json.dumps(arguments, ensure_ascii=False)}"
    out().print(shown(f"{verdict} call {call_id} of run {run_id}" + (f" (by {who})" if who else "")))
    _after_decision(after, url)


def reconcile(
    run_id: RunArgument,
    call_id: CallArgument,
    store: StoreOption = None,
    output: Annotated[
        str | None, typer.Option(help="The result the call really had, as the model should see it.")
    ] = None,
    retry: Annotated[bool, typer.Option("--retry", help="Run the call again instead.")] = False,
    by: ByOption = None,
) -> None:
    """Settle a call whose outcome is unknown (it started and its process stopped): give the
    output it had, or ask for it to be retried.

    "No effect seen" is not proof that the call did not happen while the process that started
    it may still be alive (stopped, paused, partitioned): make sure it is gone, or that the
    system the tool changes refuses its stale writes (`ToolContext.fencing_token`), before
    `--retry`."""
    if (output is None) == (not retry):
        fail("give exactly one of --output TEXT or --retry")
    url = resolve_store_url(store)
    who = by or _login()

    async def settle(journal: EventStore) -> Decided:
        await operations.reconcile(journal, run_id, call_id, output=output, retry=retry, by=who)
        return await _decided(journal, run_id)

    after = run_async(with_store(url, settle))
    out().print(shown(f"reconciled call {call_id} of run {run_id}: " + ("retry" if retry else "output recorded")))
    if retry:
        out().print(
            shown(
                "  note: no effect seen is not proof while the process that started the call may still be alive",
                "yellow",
            )
        )
    _after_decision(after, url)


def gc(
    older_than: Annotated[
        str, typer.Option("--older-than", help="Age of the last event: 30d, 12h, 45m, 90s, 2w (a bare number is days).")
    ],
    store: StoreOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be deleted; delete nothing.")] = False,
) -> None:
    """Delete finished runs (completed, failed, cancelled, over budget) not updated for a while."""
    age = parse_duration(older_than)
    url = resolve_store_url(store)
    doomed = run_async(with_store(url, lambda journal: operations.gc(journal, age, dry_run=dry_run)))
    console = out()
    for run_id in doomed:
        console.print(shown(run_id))
    verb = "would delete" if dry_run else "deleted"
    console.print(Text(f"{verb} {len(doomed)} finished run(s) older than {older_than}", style="bold"))


def resume(run_id: RunArgument, agent: AgentOption, store: StoreOption = None) -> None:
    """Continue a run from its journal with its agent: after a crash, an approval or a reconciliation."""
    url = resolve_store_url(store)
    make_default_directory(url)
    with environ("EUDAIMON_STORE", url):
        built = load_agent(agent)

    async def work() -> RunState:
        try:
            await built.resume(run_id)
            return await built.state(run_id)
        finally:
            await built.store.close()

    state = run_async(work())
    console = out()
    console.print(Text("run ", style="bold") + shown(run_id) + Text(" ") + status_text(state.status))
    if state.output is not None:
        console.print(shown(state.output))
    if state.error is not None:
        console.print(shown(state.error, "red"))
    print_waiting(state, journal_url(built.store, url))
    exit_for(state.status.value)


def parse_duration(text: str) -> timedelta:
    match = _DURATION.match(text)
    if match is None:
        fail(f"--older-than {text!r} is not a duration; write e.g. 30d, 12h, 45m, 90s or 2w")
    return timedelta(seconds=float(match.group(1)) * _UNIT_S[match.group(2)])


Decided = tuple[RunState, bool | str | None]
"""A run after a decision, and whether the engine driving it drives it now (a reason when it
could not say; None for a run no engine drives)."""


async def _decided(journal: EventStore, run_id: str) -> Decided:
    """The run after a decision and, for an engine's run, whether the engine drives it now,
    asked on the event loop the decision was sent on: the Temporal client a second loop would
    open can abort the process as it exits (its threads outlive the interpreter's teardown)."""
    state = await load_state(journal, run_id)
    return state, (await engine_drives(state) if state.engine else None)


async def engine_drives(state: RunState) -> bool | str:
    """Whether the engine named in the run's journal drives it now; why not known, if not."""
    try:
        return await asyncio.wait_for(open_engine(state.engine).drives(state.run_id), _ASK_ENGINE_S)
    except Exception as exc:  # the engine away or not installed: said, and the rest is shown
        return str(exc) or f"no answer in {_ASK_ENGINE_S:g} s"


def _after_decision(after: Decided, url: str) -> None:
    state, drives = after
    print_waiting(state, url)
    if state.engine:
        _on_engine(state, drives, url)
    elif not state.status.is_paused:
        _resume_by(
            f"  a server serving {state.agent} on this store goes on with it at its next recovery sweep (every "
            f"{lease_ttl_s():g} s, EUDAIMON_LEASE_TTL_S); or now, here:",
            state,
            url,
        )


def _resume_by(why: str, state: RunState, url: str) -> None:
    """Say why the run needs a resume, then the command that resumes it."""
    out().print(shown(why))
    out().print(
        shown(f"  eudaimon runs resume {state.run_id} --agent MODULE:ATTR{_store_flag(url)}", "cyan"), soft_wrap=True
    )


def _on_engine(state: RunState, drives: bool | str | None, url: str) -> None:
    """How a run an engine drives goes on: by itself while the engine drives it; when nothing
    there does (a fork, a run journaled while the engine was away), a resume starts it."""
    if isinstance(drives, str):
        out().print(shown(f"  driven on {state.engine}, which could not say whether it drives the run now: {drives}"))
    elif drives:
        out().print(shown(f"  the run goes on by itself on {state.engine}", "cyan"))
    elif state.status is Status.RUNNING:
        _resume_by(
            f"  nothing on {state.engine} drives it now; a resume starts it there (a server serving "
            f"{state.agent} on this store does at its next recovery sweep):",
            state,
            url,
        )


def print_running(
    state: RunState, url: str, drivers: Mapping[str, Lease] | None = None, engine: bool | str | None = None
) -> None:
    """For a run that neither ended nor waits, how it goes on. The journal reads `running` until
    something drives the run again, whether its process is at work or was killed; `drivers`
    (`runtime.process.drivers`: None when the store cannot tell) says which, and `engine`
    (`engine_drives`) for a run an engine drives."""
    if state.status is not Status.RUNNING:
        return
    console = out()
    if state.engine:
        _on_engine(state, engine, url)
        return
    resume = shown(f"  eudaimon runs resume {state.run_id} --agent MODULE:ATTR{_store_flag(url)}", "cyan")
    driver = drivers.get(state.run_id) if drivers is not None else None
    if driver is not None:
        console.print(shown(f"running: driven now by {driver.owner}, which holds its lease"))
        return
    if drivers is None:
        console.print(
            shown(
                "running: a process drives it; if that process has ended, a server serving its agent on this store "
                "takes it over, or:"
            )
        )
    else:
        console.print(
            shown(
                "running, but no process drives it now (none holds its lease: the one that drove it ended or "
                "stalled). A server serving its agent on this store takes it over, or:",
                "yellow",
            )
        )
    console.print(resume, soft_wrap=True)


def print_waiting(state: RunState, url: str, tree: TreeView | None = None) -> None:
    """For a paused run, what it waits for and the command that decides it; with its `tree`,
    the calls its child runs wait for, which are decided on this run."""
    console = out()
    flag = _store_flag(url)
    if state.status is Status.AWAITING_APPROVAL:
        for call in tree.awaiting_approval if tree is not None else state.awaiting_approval():
            console.print(
                shown(f"awaiting approval: {call.id} {call_text(ToolCall(call.id, call.name, call.arguments))}")
            )
            progress = state.calls.get(call.id)
            if progress is not None and progress.deadline is not None:
                then = "the run is cancelled" if progress.on_timeout == "cancel" else "the call is denied"
                deadline = progress.deadline.isoformat(timespec="seconds")
                if progress.deadline <= datetime.now(UTC):
                    console.print(
                        shown(
                            f"  the deadline passed at {deadline}: {then} as the run goes on (a server on this "
                            f"store, or `eudaimon runs resume`); a decision now is refused"
                        )
                    )
                    continue
                console.print(shown(f"  deadline: {deadline} (then {then})"))
            console.print(shown(f"  eudaimon runs approve {state.run_id} {call.id}{flag}", "cyan"), soft_wrap=True)
    elif state.status is Status.WAITING:
        for call in state.waiting_calls():
            wake = state.calls[call.id].wake_at
            console.print(
                shown(f"waiting: {call.id} {call.name} until {wake.isoformat(timespec='seconds') if wake else '?'}")
            )
    elif state.status is Status.AWAITING_RECONCILIATION:
        for call in tree.outcome_unknown if tree is not None else state.unknown_outcomes():
            console.print(shown(f"outcome unknown: {call.id} {call.name}"))
            console.print(
                shown(f"  eudaimon runs reconcile {state.run_id} {call.id} --output TEXT | --retry{flag}", "cyan"),
                soft_wrap=True,
            )


def _store_flag(url: str) -> str:
    return "" if url == default_store_url() else f" --store {shown_url(url)}"


def login_name() -> str | None:
    """Who acts, when `--by` is not given: the login name, if the system has one."""
    return _login()


def _login() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in containers without a passwd entry
        return None
