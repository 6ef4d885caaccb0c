"""`eudaimon runs approve --arguments` is an edit like any other: with `--agent` the agent's
approval policy judges it at once (DENY: exit 1 with the policy's word, nothing journaled);
without, it is recorded and the run's own policy denies it before the call runs. Numbers no
tool should get are refused either way. `runs events` and `runs show` say the edit."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import Invoke, Journal

from eudaimon.core.events import ApprovalDecided, ToolDenied, ToolStarted

_PAYER = '''
from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import FunctionModel
from eudaimon.tools import ToolPolicy


@tool(effect="irreversible")
def send_wire(amount_usd: float) -> str:
    """Send money."""
    return f"sent ${amount_usd:.2f}"


def limit(call, tool):
    return ToolPolicy.DENY if call.arguments.get("amount_usd", 0) > 1000 else ToolPolicy.REQUIRE_APPROVAL


def answer(request):
    last = request.messages[-1]
    if last.role == "tool":
        return f"Result: {last.content}"
    return Message.assistant("Sending.", [ToolCall("wire", "send_wire", {"amount_usd": 5})])


def make():
    return Agent(FunctionModel(answer), tools=[send_wire], name="payer", approval_policy=limit)
'''


@pytest.fixture
def payer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "limited_payer.py").write_text(_PAYER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "limited_payer:make"


def _paused(cli: Invoke, store_url: str, payer: str, journal: Journal) -> str:
    assert cli("run", payer, "pay", "--store", store_url).exit_code == 0
    [run_id] = journal.run_ids()
    return run_id


def test_with_agent_an_edit_the_policy_denies_exits_1_and_records_nothing(
    cli: Invoke, store_url: str, payer: str, journal: Journal
) -> None:
    run_id = _paused(cli, store_url, payer, journal)
    for edit in ('{"amount_usd": 5000}', '{"amount_usd": 1e999}', '{"amount_usd": ' + "9" * 401 + "}"):
        refused = cli("runs", "approve", run_id, "wire", "--arguments", edit, "--agent", payer, "--store", store_url)
        assert refused.exit_code == 1, refused.output
        assert "approval policy denies" in refused.output or "no tool accepts" in refused.output
    assert not any(isinstance(e.data, ApprovalDecided) for e in journal.events(run_id))


def test_without_agent_the_run_denies_the_edit_before_it_runs(
    cli: Invoke, store_url: str, payer: str, journal: Journal
) -> None:
    run_id = _paused(cli, store_url, payer, journal)
    assert (
        cli("runs", "approve", run_id, "wire", "--arguments", '{"amount_usd": 5000}', "--store", store_url).exit_code
        == 0
    )
    assert "amount_usd: 5 → 5000" in cli("runs", "events", run_id, "--store", store_url).output
    cli("runs", "resume", run_id, "--agent", payer, "--store", store_url)
    events = [e.data for e in journal.events(run_id)]
    assert not [e for e in events if isinstance(e, ToolStarted)]
    [denied] = [e for e in events if isinstance(e, ToolDenied)]
    assert "edited arguments" in denied.reason


def test_an_allowed_edit_is_said_by_runs_show(cli: Invoke, store_url: str, payer: str, journal: Journal) -> None:
    run_id = _paused(cli, store_url, payer, journal)
    edit = '{"amount_usd": 7}'
    assert (
        cli(
            "runs",
            "approve",
            run_id,
            "wire",
            "--arguments",
            edit,
            "--by",
            "ops",
            "--agent",
            payer,
            "--store",
            store_url,
        ).exit_code
        == 0
    )
    cli("runs", "resume", run_id, "--agent", payer, "--store", store_url)
    shown = cli("runs", "show", run_id, "--store", store_url).output
    assert "wire: send_wire edited by ops before it ran: amount_usd: 5 → 7" in shown
