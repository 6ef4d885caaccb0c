"""`eudaimon runs fork RUN --at SEQ` lists the WRITE and IRREVERSIBLE calls the parent ran after
the point and asks before forking, like the inspector's fork dialog: `--yes` for scripts; with
no terminal to ask on and no `--yes` it refuses, saying why, and forks nothing.

Before: fork and resume re-ran a completed refund with a new idempotency key, without a word.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from cli_support import Invoke, Journal

SRC = Path(__file__).resolve().parents[2] / "src"
AGENT = "eudaimon.cli.demo:demo_agent"


def test_without_a_terminal_and_without_yes_it_refuses_and_forks_nothing(
    cli: Invoke, store_url: str, demo_run: str, journal: Journal
) -> None:
    """Invariant: the calls with effects are listed; the answer says there is no terminal to
    ask on and names `--yes`; exit 1; the journal holds the parent alone."""
    result = cli("runs", "fork", demo_run, "--at", "2", "--store", store_url, "--agent", AGENT)
    assert result.exit_code == 1, result.output
    assert "WRITE issue_refund call_refund" in result.output and "WRITE open_case call_case" in result.output
    assert "lookup_order" not in result.output  # a READ tool: its agent says so
    assert "no terminal to ask on; pass --yes" in result.output
    assert journal.run_ids() == [demo_run]


def test_yes_forks_and_still_lists_what_may_run_again(
    cli: Invoke, store_url: str, demo_run: str, journal: Journal
) -> None:
    """Invariant: `--yes` forks at once, after listing the calls; without `--agent` a tool's
    effect is unknown, listed as such (a careful reader treats it as a write)."""
    result = cli("runs", "fork", demo_run, "--at", "2", "--yes", "--store", store_url)
    assert result.exit_code == 0, result.output
    assert "UNKNOWN issue_refund call_refund" in result.output and "pass --agent" in result.output
    assert len(journal.run_ids()) == 2


def test_nothing_to_warn_about_forks_without_asking(
    cli: Invoke, store_url: str, demo_run: str, journal: Journal
) -> None:
    """Invariant: a fork point after the last call with effects asks nothing."""
    last = len(journal.events(demo_run)) - 1
    result = cli("runs", "fork", demo_run, "--at", str(last), "--store", store_url)
    assert result.exit_code == 0, result.output
    assert "with effects" not in result.output and len(journal.run_ids()) == 2


def _at_a_terminal(store_url: str, run_id: str, answer: str) -> subprocess.CompletedProcess[str]:
    """`eudaimon runs fork` with a terminal as its stdin, `answer` typed at it."""
    leader, follower = pty.openpty()
    os.write(leader, answer.encode() + b"\n")
    command = [sys.executable, "-c", "from eudaimon.cli import app; app()", "runs", "fork", run_id, "--at", "2"]
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200", "NO_COLOR": "1"}
    try:
        return subprocess.run(
            [*command, "--store", store_url, "--agent", AGENT],
            stdin=follower, capture_output=True, text=True, env=env, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(leader)
        os.close(follower)


def test_at_a_terminal_it_asks_and_no_keeps_the_run_as_it_is(store_url: str, demo_run: str, journal: Journal) -> None:
    """Invariant: at a terminal the question is asked; "n" forks nothing, "y" forks."""
    refused = _at_a_terminal(store_url, demo_run, "n")
    assert refused.returncode == 1 and "fork anyway?" in refused.stdout, refused.stdout + refused.stderr
    assert "not forked" in refused.stderr and journal.run_ids() == [demo_run]
    forked = _at_a_terminal(store_url, demo_run, "y")
    assert forked.returncode == 0, forked.stdout + forked.stderr
    assert "forked" in forked.stdout and len(journal.run_ids()) == 2
