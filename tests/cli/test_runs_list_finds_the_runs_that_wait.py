"""`eudaimon runs list` filters as `GET /v1/runs` does: an operator finds the runs that wait for
a person among many, by status, agent, text and creation date, from the run index alone."""

from __future__ import annotations

import asyncio

import pytest
from cli_support import Invoke

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ScriptedModel


@tool(effect="irreversible")
def pay(amount: int) -> str:
    """Pay.

    Args:
        amount: In cents.
    """
    return f"paid {amount}"


@pytest.fixture
def mixed_runs(store_url: str) -> None:
    """Runs of two agents: one waiting for approval, one completed, one more completed."""

    async def play() -> None:
        ask = Message.assistant(tool_calls=[ToolCall("c1", "pay", {"amount": 500})])
        payer = Agent(ScriptedModel([ask]), tools=[pay], name="payer", store=store_url)
        desk = Agent(ScriptedModel(["one", "two"]), name="desk", store=store_url)
        try:
            assert (await payer.prompt("refund order 4711", run_id="run-pay")).status == "awaiting_approval"
            await desk.prompt("where is parcel 99", run_id="run-parcel")
            await desk.prompt("hello", run_id="run-hello")
        finally:
            await payer.store.close()
            await desk.store.close()

    asyncio.run(play())


def _listed(output: str) -> set[str]:
    return {name for name in ("run-pay", "run-parcel", "run-hello") if name in output}


@pytest.mark.usefixtures("mixed_runs")
@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--status", "awaiting_approval"], {"run-pay"}),
        (["--status", "awaiting_approval", "--status", "completed"], {"run-pay", "run-parcel", "run-hello"}),
        (["--status", "completed", "--agent", "desk"], {"run-parcel", "run-hello"}),
        (["--agent", "payer"], {"run-pay"}),
        (["--search", "PARCEL"], {"run-parcel"}),
        (["--search", "pay"], {"run-pay"}),  # the tool's name is searched too
        (["--since", "2000-01-01", "--until", "9999-01-01"], {"run-pay", "run-parcel", "run-hello"}),
        (["--until", "2000-01-01"], set()),
    ],
)
def test_the_filters_list_only_the_runs_that_match_them(
    cli: Invoke, store_url: str, options: list[str], expected: set[str]
) -> None:
    result = cli("runs", "list", "--store", store_url, *options)

    assert result.exit_code == 0, result.output
    assert _listed(result.output) == expected
    if not expected:
        assert "No run matches those filters" in result.output
        assert "eudaimon demo" not in result.output  # the journal is not empty: no demo to suggest


@pytest.mark.usefixtures("mixed_runs")
@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--status", "pending"], "--status 'pending' is no run status; pass one of: queued, running"),
        (["--since", "last week"], "--since='last week' is not an ISO 8601 date or datetime; pass e.g. 2026-12-01"),
        (["--until", "9999-12-31"], "--until='9999-12-31' is out of range"),
        (["--limit", "0"], "--limit 0: show at least one run"),
    ],
)
def test_a_bad_filter_is_one_line_saying_what_to_pass(
    cli: Invoke, store_url: str, options: list[str], said: str
) -> None:
    result = cli("runs", "list", "--store", store_url, *options)

    assert result.exit_code == 1
    assert said in result.output
    assert "Traceback" not in result.output
