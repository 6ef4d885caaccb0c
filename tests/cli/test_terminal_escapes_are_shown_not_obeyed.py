"""Invariant: text from a model or a tool (often untrusted web content) reaches the terminal
with its control characters spelled out, never obeyed, in every CLI view; and with its
brackets literal, never read as rich markup. An approver sees every argument of the call.

Bug (issue 14): `ESC[8m` hid text, `ESC[2K ESC[1A` rewrote lines and OSC set the title in
`runs show`, `runs state` and `runs events`, so an approver could be shown a doctored screen;
`runs events` cut approval arguments to 50 characters."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import Invoke, Journal

from eudaimon.core.state import Status

HIDE = "\x1b[8m"  # conceal what follows
REWRITE = "\x1b[2K\x1b[1A"  # erase the line, move up
TITLE = "\x1b]0;pwned\x07"  # OSC: set the window title
CSI8 = "\x9b31m"  # the 8-bit (C1) CSI
RLO = "\u202e"  # right-to-left override
MARKUP = "[bold red]FAKE[/bold red][link=https://evil.example]click[/link]"
EVIL = f"ok{HIDE}secret{REWRITE}{TITLE}{CSI8}\rover{RLO}txt {MARKUP}"
RAW = ("\x1b", "\x9b", "\x07", "\r", RLO)
LONG = "x" * 120 + "-END-OF-ARGUMENT"

_AGENT = f'''
from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import FunctionModel

EVIL = {EVIL!r}


@tool(effect="read")
def fetch(url: str) -> str:
    """Fetch a page (its content is the attacker's)."""
    return "page: " + EVIL


@tool(effect="irreversible")
def send_wire(to: str, memo: str) -> str:
    """Send money; a human approves each call."""
    return "sent"


def answer(request):
    tools = [m for m in request.messages if m.role == "tool"]
    if not tools:
        return Message.assistant("thinking " + EVIL, [ToolCall("c1" + EVIL, "fetch", {{"url": EVIL}})])
    return Message.assistant(
        "paying " + EVIL, [ToolCall("wire", "send_wire", {{"to": "acct " + EVIL, "memo": {LONG!r}}})]
    )


def make():
    return Agent(FunctionModel(answer), tools=[fetch, send_wire], name="evil" + EVIL)
'''


@pytest.fixture
def evil_run(
    cli: Invoke, store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, journal: Journal
) -> tuple[str, str]:
    """A run whose model text, tool output, call ids, agent name and approval arguments carry
    escapes and markup; it waits for approval. Returns its id and the streamed output of `run`."""
    (tmp_path / "evil_agent.py").write_text(_AGENT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = cli("run", "evil_agent:make", "go", "--store", store_url, "--thread", "th" + EVIL)
    assert result.exit_code == 0, result.output
    [run_id] = journal.run_ids()
    assert journal.state(run_id).status is Status.AWAITING_APPROVAL
    return run_id, result.output


def _assert_inert(output: str) -> None:
    for char in RAW:
        assert char not in output, f"{char!r} reached the terminal: {output!r}"
    assert "\\x1b[8m" in output  # spelled out, so the approver sees that it was there
    assert "[bold red]FAKE" in output  # markup is shown as written


@pytest.mark.parametrize(
    "command",
    [["runs", "show"], ["runs", "state"], ["runs", "state", "--at", "3"], ["runs", "events"]],
    ids=["show", "state", "state-at", "events"],
)
def test_every_run_view_spells_control_characters_out(
    cli: Invoke, store_url: str, evil_run: tuple[str, str], command: list[str]
) -> None:
    """`runs show`, `runs state` and `runs events` print the run without one raw control byte."""
    run_id, _ = evil_run
    result = cli(*command[:2], run_id, *command[2:], "--store", store_url)
    assert result.exit_code == 0, result.output
    _assert_inert(result.output)


def test_json_views_escape_what_json_leaves_raw(cli: Invoke, store_url: str, evil_run: tuple[str, str]) -> None:
    """`--json` output stays the same JSON, but C1 controls and bidi overrides are `\\u` escapes."""
    run_id, _ = evil_run
    for command in (["runs", "events", run_id, "--json"], ["runs", "state", run_id, "--json"]):
        result = cli(*command, "--store", store_url)
        assert result.exit_code == 0, result.output
        for char in RAW:
            assert char not in result.output
        assert "\\u009b" in result.output and "\\u202e" in result.output


def test_the_stream_of_run_and_the_waiting_hint_are_inert(evil_run: tuple[str, str]) -> None:
    """`eudaimon run` streams model text, tool calls and results, and names the call awaiting
    approval, all spelled out."""
    _, streamed = evil_run
    _assert_inert(streamed)
    assert "awaiting approval: wire send_wire(" in streamed


def test_threads_views_are_inert(cli: Invoke, store_url: str, evil_run: tuple[str, str]) -> None:
    """A thread id or agent name with escapes is spelled out by `threads list` and `threads show`."""
    listed = cli("threads", "list", "--store", store_url)
    assert listed.exit_code == 0, listed.output
    shown = cli("threads", "show", "th" + EVIL, "--store", store_url)
    assert shown.exit_code == 0, shown.output
    for output in (listed.output, shown.output):
        for char in RAW:
            assert char not in output


def test_runs_events_shows_every_argument_of_a_call_awaiting_approval(
    cli: Invoke, store_url: str, evil_run: tuple[str, str]
) -> None:
    """An approver reads the whole call: the end of a long argument is in the timeline."""
    run_id, _ = evil_run
    result = cli("runs", "events", run_id, "--store", store_url)
    assert result.exit_code == 0, result.output
    row = result.output[result.output.index("approval_requested") :]
    flat = "".join(line.strip("│ ") for line in row.splitlines())
    assert "-END-OF-ARGUMENT" in flat
