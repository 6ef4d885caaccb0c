"""`eudaimon demo`: a worker killed mid-tool, a resume in a new process, a human's approval.

The demo is run as a user runs it (`python -m eudaimon demo` in a subprocess, its own worker
processes under it); what it claims is then checked in the journal it left, read here by a
second, independent reader.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_support import Invoke, Journal
from rich.console import Console

import eudaimon
from eudaimon.cli.demo import demo_agent, issue_refund, lookup_order, open_case
from eudaimon.cli.demo._show import approval_panel, eudaimon_command
from eudaimon.core.events import ApprovalDecided, Event, ToolCompleted, ToolDenied, ToolStarted
from eudaimon.core.state import Status

_SRC = str(Path(eudaimon.__file__).resolve().parents[1])
"""The eudaimon these tests import, for the demo's processes (a relative PYTHONPATH would not
survive their working directory)."""


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "PYTHONPATH": _SRC}


def _demo(
    store_url: str, *flags: str, cwd: Path, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eudaimon", "demo", "--pace", "0", "--store", store_url, *flags],
        cwd=cwd,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env=_env(),
    )


def _started(events: list[Event], tool: str) -> list[ToolStarted]:
    return [e.data for e in events if isinstance(e.data, ToolStarted) and e.data.tool == tool]


def _completed(events: list[Event], tool: str) -> list[ToolCompleted]:
    return [e.data for e in events if isinstance(e.data, ToolCompleted) and e.data.tool == tool]


def test_demo_kills_a_worker_mid_tool_and_nothing_unsafe_runs_twice(
    tmp_path: Path, store_url: str, journal: Journal
) -> None:
    """Invariant: after the demo's worker is SIGKILLed in the middle of the READ, the resumed
    run never executes the plain WRITE again, re-runs the READ with the same idempotency key,
    and with --approve the refund runs once, decided by the flag."""
    result = _demo(store_url, "--approve", cwd=tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    [run_id] = journal.run_ids()
    events = journal.events(run_id)
    assert journal.state(run_id).status is Status.COMPLETED
    assert len(_started(events, "open_case")) == len(_completed(events, "open_case")) == 1
    # A step of READ calls commits once, after them: the killed run of the READ left no intent.
    [read] = _started(events, "lookup_order")
    assert len(_completed(events, "lookup_order")) == 1
    assert len(_started(events, "issue_refund")) == len(_completed(events, "issue_refund")) == 1
    [decided] = [e.data for e in events if isinstance(e.data, ApprovalDecided)]
    assert (decided.approved, decided.by) == (True, "eudaimon demo --approve")

    out = result.stdout
    assert "with SIGKILL in the middle of lookup_order (exit code -9" in out
    killed = re.search(r"killed worker pid (\d+) with SIGKILL", out)
    assert killed is not None
    ran = set(re.findall(r"attempt 1 in pid (\d+), key " + re.escape(read.idempotency_key[:16]), out))
    assert killed.group(1) in ran and len(ran) == 2  # the READ ran in the killed worker and again after
    assert f"with the same idempotency key {read.idempotency_key}" in out
    assert "Done! I refunded $129.00" in out
    for event in events:
        assert event.type in out
    assert f"The journal of {run_id}: {len(events)} events" in out
    assert f"-m eudaimon runs show {run_id} --store {store_url}" in out


def test_demo_with_deny_tells_the_model_and_never_refunds(tmp_path: Path, store_url: str, journal: Journal) -> None:
    """Invariant: a denial is journaled with who denied it, the refund never starts, and the
    run completes with the model told why."""
    result = _demo(store_url, "--deny", cwd=tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    [run_id] = journal.run_ids()
    events = journal.events(run_id)
    state = journal.state(run_id)
    assert state.status is Status.COMPLETED
    [decided] = [e.data for e in events if isinstance(e.data, ApprovalDecided)]
    assert (decided.approved, decided.by) == (False, "eudaimon demo --deny")
    assert [e.data.tool for e in events if isinstance(e.data, ToolDenied)] == ["issue_refund"]
    assert _started(events, "issue_refund") == []
    assert "did not approve" in (state.output or "")


def test_demo_without_a_terminal_or_a_flag_says_what_to_pass(tmp_path: Path, store_url: str, journal: Journal) -> None:
    """With stdin not a terminal and no flag, the demo cannot ask: it says to pass --approve or
    --deny, leaves the run waiting, and prints the commands that decide it, which work."""
    result = _demo(store_url, cwd=tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    [run_id] = journal.run_ids()
    assert journal.state(run_id).status is Status.AWAITING_APPROVAL
    assert "Not on a terminal (stdin and stdout), so the demo cannot ask" in result.stdout
    assert "Pass --approve or --deny" in result.stdout
    assert f"runs approve {run_id} call_refund --store {store_url}" in result.stdout

    commands = [line.strip() for line in result.stdout.splitlines() if f" runs approve {run_id}" in line]
    commands += [line.strip() for line in result.stdout.splitlines() if f" runs resume {run_id}" in line]
    for command in commands:  # the commands it prints decide and finish the run, as printed
        ran = subprocess.run(
            command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False, env=_env()
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
    assert len(commands) == 2
    assert journal.state(run_id).status is Status.COMPLETED


def test_demo_on_a_terminal_asks_the_human(tmp_path: Path, store_url: str, journal: Journal) -> None:
    """On a terminal the demo asks; the answer typed there decides, journaled as the user's."""
    leader, follower = pty.openpty()
    shown: list[bytes] = []

    def drain() -> None:  # the terminal's screen: read all the demo writes, so it never blocks
        with contextlib.suppress(OSError):
            while chunk := os.read(leader, 65536):
                shown.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        os.write(leader, b"y\n")  # typed ahead: the prompt reads it when it asks
        demo = subprocess.run(
            [sys.executable, "-m", "eudaimon", "demo", "--pace", "0", "--store", store_url],
            cwd=tmp_path,
            stdin=follower,
            stdout=follower,
            stderr=follower,
            timeout=180,
            check=False,
            env=_env(),
        )
    finally:
        os.close(follower)
        reader.join(timeout=10)
        os.close(leader)
    screen = b"".join(shown).decode(errors="replace")

    assert demo.returncode == 0, screen
    assert "Approve this refund?" in screen
    [run_id] = journal.run_ids()
    [decided] = [e.data for e in journal.events(run_id) if isinstance(e.data, ApprovalDecided)]
    assert decided.approved
    assert decided.by not in ("eudaimon demo --approve", None)
    assert journal.state(run_id).status is Status.COMPLETED


def test_demo_with_its_output_in_a_file_never_waits_for_an_answer(
    tmp_path: Path, store_url: str, journal: Journal
) -> None:
    """A terminal on stdin but the output going to a file (a CI script run from a shell): the
    question could not be seen, so the demo does not ask (and cannot hang); the run waits."""
    leader, follower = pty.openpty()
    try:
        result = _demo(store_url, cwd=tmp_path, stdin=follower)
    finally:
        os.close(follower)
        os.close(leader)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "Approve this refund?" not in result.stdout
    assert "Pass --approve or --deny" in result.stdout
    [run_id] = journal.run_ids()
    assert journal.state(run_id).status is Status.AWAITING_APPROVAL


def test_demo_refuses_a_memory_store_and_both_flags(cli: Invoke) -> None:
    """Workers share the run through the journal, so `memory:` (one process) is refused, as is
    --approve with --deny; each is one line, exit 1."""
    memory = cli("demo", "--store", "memory:", "--pace", "0")
    both = cli("demo", "--approve", "--deny", "--pace", "0")

    assert memory.exit_code == 1 and "memory: lives in one process" in memory.output
    assert both.exit_code == 1 and "exclude each other" in both.output
    assert "Traceback" not in memory.output + both.output


def test_inspect_commands_name_the_eudaimon_the_user_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as a console script not on PATH, the hint names that script's path; run otherwise,
    it names this interpreter with `-m eudaimon`."""
    script = tmp_path / "bin" / "eudaimon"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sys, "argv", [str(script), "demo"])
    assert eudaimon_command() == str(script)
    monkeypatch.setenv("PATH", str(script.parent))
    script.chmod(0o755)
    assert eudaimon_command() == "eudaimon"
    monkeypatch.setattr(sys, "argv", ["/somewhere/__main__.py", "demo"])
    assert eudaimon_command().endswith(" -m eudaimon")


def test_demo_journal_has_the_tools_it_advertises(demo_run: str, journal: Journal) -> None:
    """The demo exercises what it advertises: a plain WRITE, a READ, and an idempotent WRITE
    that waited for a human's approval because it is over the limit."""
    events = journal.events(demo_run)
    state = journal.state(demo_run)
    assert state.status is Status.COMPLETED
    assert state.steps == 4
    started = [e.data.tool for e in events if isinstance(e.data, ToolStarted)]
    assert started == ["open_case", "lookup_order", "issue_refund"]
    assert (open_case.effect.value, open_case.idempotent) == ("write", False)
    assert lookup_order.effect.value == "read"
    assert (issue_refund.effect.value, issue_refund.idempotent) == ("write", True)
    assert [e.type for e in events].count("approval_requested") == 1
    assert state.cost_known
    assert state.cost_usd > 0


def test_run_imports_an_agent_factory_and_journals_to_the_store(cli: Invoke, store_url: str, journal: Journal) -> None:
    """`eudaimon run MODULE:ATTR` calls a zero-argument factory, streams the prompt, and an
    agent built without a store journals to `--store`; the demo agent's refund then waits."""
    result = cli("run", "eudaimon.cli.demo:demo_agent", "my headphones broke", "--store", store_url)

    assert result.exit_code == 0, result.output
    [run_id] = journal.run_ids()
    assert journal.state(run_id).input == "my headphones broke"
    assert journal.state(run_id).status is Status.AWAITING_APPROVAL
    assert "issue_refund" in result.output
    assert f"eudaimon runs show {run_id} --store {store_url}" in result.output


def test_run_imports_an_agent_object_from_the_working_directory(
    cli: Invoke, store_url: str, journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module next to the user (not installed) is importable, and an `Agent` object works as
    well as a factory."""
    (tmp_path / "my_agents.py").write_text(
        "from eudaimon import Agent\n"
        "from eudaimon.models import ScriptedModel\n"
        "support = Agent(ScriptedModel(['Hello from a local module.']), name='local')\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))

    result = cli("run", "my_agents:support", "hi", "--store", store_url)

    assert result.exit_code == 0, result.output
    assert "Hello from a local module." in result.output
    [run_id] = journal.run_ids()
    assert journal.state(run_id).agent == "local"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_xyz:agent", "cannot import module 'no_such_module_xyz'"),
        ("eudaimon.cli.demo:nothing_here", "has no attribute 'nothing_here'"),
        ("eudaimon.cli.demo:DEMO_INPUT", "not an Agent"),
        ("eudaimon.cli.demo", "is not MODULE:ATTR"),
    ],
)
def test_run_with_a_bad_target_exits_1_with_a_message(cli: Invoke, store_url: str, target: str, message: str) -> None:
    """A target that names no agent is a clear one-line error and exit 1, not a traceback."""
    result = cli("run", target, "hi", "--store", store_url)

    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_demo_agent_answers_by_position_so_a_new_process_picks_up(store_url: str) -> None:
    """The demo's model answers by the conversation's position, not a counter: an agent built
    afresh (as a resuming worker builds it) continues the run where the journal stops."""
    first = demo_agent(store_url).prompt_sync("a")
    assert first.status == "awaiting_approval"
    second = demo_agent(store_url)  # built afresh, as a new process would

    async def finish() -> str:
        await second.approve(first.run_id, "call_refund", by="tests")
        done = await second.resume(first.run_id)
        await second.store.close()
        return done.final_text or ""

    assert asyncio.run(finish()).startswith("Done! I refunded $129.00")


def test_the_approval_the_demo_shows_spells_out_terminal_controls() -> None:
    """What the approver is shown comes from the journal: a control sequence in the arguments
    or the reason is printed spelled out, never sent to the terminal."""
    console = Console(file=io.StringIO(), width=200, force_terminal=False)
    approval_panel(console, "c1", "issue_refund", {"reason": "ok\x1b[8m hidden"}, "why\u202e")
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b" not in printed and "\u202e" not in printed
    assert "\\u001b[8m hidden" in printed and "why\\u202e" in printed
