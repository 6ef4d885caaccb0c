"""`eudaimon demo` and `eudaimon run`: an agent streams live and leaves a complete journal."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import Invoke, Journal

from eudaimon.cli.demo import demo_agent, issue_refund, lookup_order, refund_policy
from eudaimon.core.events import ModelCalled, ToolStarted
from eudaimon.core.state import Status


def test_demo_streams_the_run_and_prints_its_whole_timeline(cli: Invoke, store_url: str, journal: Journal) -> None:
    """The demo runs offline to completion, shows text, calls and results as they stream, then
    a timeline with one row per journaled event and the command to inspect the run again."""
    result = cli("demo", "--store", store_url, "--pace", "0")

    assert result.exit_code == 0, result.output
    [run_id] = journal.run_ids()
    events = journal.events(run_id)
    out = result.output
    assert "Sorry to hear that!" in out
    assert '→ lookup_order({"order_id": "A-1042"})' in out
    assert "← issue_refund:" in out
    assert f"run {run_id} completed" in out
    for event in events:
        assert event.type in out
    assert f"{len(events)} events" in out
    assert f"eudaimon runs events {run_id} --store {store_url}" in out


def test_demo_journal_has_three_steps_a_parallel_batch_and_an_idempotent_write(demo_run: str, journal: Journal) -> None:
    """The demo exercises what it advertises: 3+ model iterations, one turn of two parallel
    READ calls whose intents are both journaled before either completes, and a WRITE that is
    idempotent (so it may be re-run after a crash)."""
    events = journal.events(demo_run)
    state = journal.state(demo_run)
    assert state.status is Status.COMPLETED
    assert state.steps >= 3
    first_call = next(e for e in events if isinstance(e.data, ModelCalled) and e.data.message.tool_calls)
    assert isinstance(first_call.data, ModelCalled)
    assert len(first_call.data.message.tool_calls) == 2
    after = [e.type for e in events[first_call.seq + 1 : first_call.seq + 5]]
    assert after == ["tool_started", "tool_started", "tool_completed", "tool_completed"]
    started = {e.data.tool for e in events if isinstance(e.data, ToolStarted)}
    assert started == {"lookup_order", "refund_policy", "issue_refund"}
    assert lookup_order.effect.value == refund_policy.effect.value == "read"
    assert issue_refund.effect.value == "write"
    assert issue_refund.idempotent
    assert state.cost_known
    assert state.cost_usd > 0


def test_demo_on_a_memory_store_says_the_journal_is_not_kept(cli: Invoke) -> None:
    """A demo on `memory:` still completes, and warns instead of printing a command that
    would find nothing."""
    result = cli("demo", "--store", "memory:", "--pace", "0")

    assert result.exit_code == 0, result.output
    assert "gone when the process exits" in result.output
    assert "eudaimon runs events" not in result.output


def test_run_imports_an_agent_factory_and_journals_to_the_store(cli: Invoke, store_url: str, journal: Journal) -> None:
    """`eudaimon run MODULE:ATTR` calls a zero-argument factory, streams the prompt, and an
    agent built without a store journals to `--store`."""
    result = cli("run", "eudaimon.cli.demo:demo_agent", "my headphones broke", "--store", store_url)

    assert result.exit_code == 0, result.output
    [run_id] = journal.run_ids()
    assert journal.state(run_id).input == "my headphones broke"
    assert "Done! I refunded $129.00" in result.output
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


def test_demo_agent_factory_builds_a_fresh_script_each_time() -> None:
    """Each demo agent owns its scripted model, so two demos in one process both complete."""
    first, second = demo_agent(), demo_agent()
    assert first.prompt_sync("a").status == "completed"
    assert second.prompt_sync("b").status == "completed"
