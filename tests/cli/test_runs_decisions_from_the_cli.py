"""`eudaimon runs approve|deny|reconcile|fork|gc|resume`: deciding for runs from outside their loop."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_support import Invoke, Journal

from eudaimon.core.events import ApprovalDecided, RunStarted
from eudaimon.core.state import Status

_PAYER = '''
from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import FunctionModel


@tool(effect="irreversible")
def send_wire(amount_usd: float) -> str:
    """Send money; irreversible, so a human approves each call."""
    return f"sent ${amount_usd:.2f}"


def answer(request):
    last = request.messages[-1]
    if last.role == "tool":
        return f"Result: {last.content}"
    return Message.assistant("Sending.", [ToolCall("wire", "send_wire", {"amount_usd": 5})])


def make():
    return Agent(FunctionModel(answer), tools=[send_wire], name="payer")
'''


@pytest.fixture
def payer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable agent module whose only tool needs approval; returns its MODULE:ATTR."""
    (tmp_path / "payer_agent.py").write_text(_PAYER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "payer_agent:make"


def _paused_run(cli: Invoke, store_url: str, payer: str, journal: Journal) -> str:
    result = cli("run", payer, "pay five dollars", "--store", store_url)
    assert result.exit_code == 0, result.output
    [run_id] = journal.run_ids()
    assert journal.state(run_id).status is Status.AWAITING_APPROVAL
    assert f"eudaimon runs approve {run_id} wire --store {store_url}" in result.output
    return run_id


def test_approve_then_resume_runs_the_call_in_a_later_invocation(
    cli: Invoke, store_url: str, payer: str, journal: Journal
) -> None:
    """Human approval survives the process: `run` pauses, `runs approve` journals the decision
    with who made it, `runs resume` executes the call and completes the run."""
    run_id = _paused_run(cli, store_url, payer, journal)

    approved = cli("runs", "approve", run_id, "wire", "--by", "alice", "--note", "ok", "--store", store_url)
    assert approved.exit_code == 0, approved.output
    decision = next(e.data for e in journal.events(run_id) if isinstance(e.data, ApprovalDecided))
    assert (decision.approved, decision.by, decision.note) == (True, "alice", "ok")
    assert f"eudaimon runs resume {run_id}" in approved.output
    # No process drives it now: the operator is told who goes on with it, and when.
    assert "goes on with it at its next recovery sweep (every 30 s" in " ".join(approved.output.split())

    resumed = cli("runs", "resume", run_id, "--agent", payer, "--store", store_url)
    assert resumed.exit_code == 0, resumed.output
    assert "Result: sent $5.00" in resumed.output
    assert journal.state(run_id).status is Status.COMPLETED


def test_deny_then_resume_tells_the_model_and_completes(
    cli: Invoke, store_url: str, payer: str, journal: Journal
) -> None:
    """A denied call never runs: after resume the model sees a denial as the call's result."""
    run_id = _paused_run(cli, store_url, payer, journal)

    assert cli("runs", "deny", run_id, "wire", "--store", store_url).exit_code == 0
    resumed = cli("runs", "resume", run_id, "--agent", payer, "--store", store_url)

    assert resumed.exit_code == 0, resumed.output
    state = journal.state(run_id)
    assert state.status is Status.COMPLETED
    assert "sent $" not in (state.output or "")
    assert "denied" in (state.output or "")


def test_a_call_is_decided_once(cli: Invoke, store_url: str, payer: str, journal: Journal) -> None:
    """A second decision on the same call is refused with exit 1 and nothing is appended."""
    run_id = _paused_run(cli, store_url, payer, journal)
    assert cli("runs", "approve", run_id, "wire", "--store", store_url).exit_code == 0
    before = len(journal.events(run_id))

    again = cli("runs", "deny", run_id, "wire", "--store", store_url)

    assert again.exit_code == 1
    assert "decided once" in again.output
    assert len(journal.events(run_id)) == before


def test_approving_an_unknown_call_exits_1(cli: Invoke, store_url: str, demo_run: str) -> None:
    """A call id the run never had is a clear error, not a traceback."""
    result = cli("runs", "approve", demo_run, "call_nope", "--store", store_url)

    assert result.exit_code == 1
    assert "call_nope" in result.output
    assert "Traceback" not in result.output


def test_reconcile_needs_exactly_one_of_output_or_retry(cli: Invoke, store_url: str, demo_run: str) -> None:
    """`reconcile` refuses an ambiguous request before touching the journal."""
    result = cli("runs", "reconcile", demo_run, "call_refund", "--store", store_url)

    assert result.exit_code == 1
    assert "exactly one of --output" in result.output


def test_fork_copies_the_prefix_into_a_new_run(cli: Invoke, store_url: str, demo_run: str, journal: Journal) -> None:
    """A fork's journal is the parent's events up to `--at`, its `run_started` naming the parent."""
    result = cli("runs", "fork", demo_run, "--at", "2", "--yes", "--store", store_url)

    assert result.exit_code == 0, result.output
    child = re.search(r"into (\S+)", result.output)
    assert child is not None
    events = journal.events(child.group(1))
    assert [e.type for e in events] == [e.type for e in journal.events(demo_run)[:3]]
    first = events[0].data
    assert isinstance(first, RunStarted)
    assert first.parent is not None
    assert (first.parent.run_id, first.parent.seq) == (demo_run, 2)


def test_gc_deletes_finished_runs_older_than_the_cutoff(
    cli: Invoke, store_url: str, demo_run: str, journal: Journal
) -> None:
    """`--dry-run` lists and keeps; without it the finished run is gone; a recent one is kept."""
    kept = cli("runs", "gc", "--older-than", "1d", "--store", store_url)
    assert kept.exit_code == 0, kept.output
    assert journal.run_ids() == [demo_run]

    dry = cli("runs", "gc", "--older-than", "0s", "--dry-run", "--store", store_url)
    assert demo_run in dry.output
    assert journal.run_ids() == [demo_run]

    real = cli("runs", "gc", "--older-than", "0s", "--store", store_url)
    assert real.exit_code == 0, real.output
    assert journal.run_ids() == []


def test_gc_rejects_a_duration_it_cannot_read(cli: Invoke, store_url: str) -> None:
    """A malformed `--older-than` is an error with examples, never 'delete everything'."""
    result = cli("runs", "gc", "--older-than", "soon", "--store", store_url)

    assert result.exit_code == 1
    assert "not a duration" in result.output


def test_approve_with_edited_arguments_runs_the_edit(cli: Invoke, store_url: str, payer: str, journal: Journal) -> None:
    """`runs approve --arguments JSON` journals the edit on `approval_decided` (checked against
    the agent's tool with `--agent`); `runs resume` runs the call with it."""
    run_id = _paused_run(cli, store_url, payer, journal)

    refused = cli(
        "runs",
        "approve",
        run_id,
        "wire",
        "--arguments",
        '{"amount_usd": "two"}',
        "--agent",
        payer,
        "--store",
        store_url,
    )
    assert refused.exit_code == 1 and "amount_usd" in refused.output
    assert not any(isinstance(e.data, ApprovalDecided) for e in journal.events(run_id))
    not_json = cli("runs", "approve", run_id, "wire", "--arguments", "{amount: 2}", "--store", store_url)
    assert not_json.exit_code == 1 and "--arguments is not JSON" in not_json.output

    approved = cli("runs", "approve", run_id, "wire", "--arguments", '{"amount_usd": 2}', "--store", store_url)
    assert approved.exit_code == 0, approved.output
    decision = next(e.data for e in journal.events(run_id) if isinstance(e.data, ApprovalDecided))
    assert decision.arguments == {"amount_usd": 2}
    resumed = cli("runs", "resume", run_id, "--agent", payer, "--store", store_url)
    assert "Result: sent $2.00" in resumed.output
