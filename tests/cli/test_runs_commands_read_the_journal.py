"""`eudaimon runs …`: every view is read from the journal, and every user error is one message."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_support import Invoke, Journal

from eudaimon.cli._render import cost_text, state_to_dict
from eudaimon.core.codec import event_from_json
from eudaimon.core.state import RunState


def test_runs_list_shows_the_run_with_its_status(cli: Invoke, store_url: str, demo_run: str) -> None:
    """A journaled run is listed with its agent, folded status and step count."""
    result = cli("runs", "list", "--store", store_url)

    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if demo_run in line)
    assert "refund-desk" in row
    assert "completed" in row


def test_runs_list_on_an_empty_journal_suggests_the_demo(cli: Invoke, store_url: str) -> None:
    """An empty store is not an error: it says so and how to fill it."""
    result = cli("runs", "list", "--store", store_url)

    assert result.exit_code == 0, result.output
    assert "No runs" in result.output
    assert "eudaimon demo" in result.output


def test_runs_show_prints_status_usage_cost_and_messages(
    cli: Invoke, store_url: str, demo_run: str, journal: Journal
) -> None:
    """`runs show` reports the folded facts of the run and every message of its conversation."""
    state = journal.state(demo_run)
    result = cli("runs", "show", demo_run, "--store", store_url)

    assert result.exit_code == 0, result.output
    out = result.output
    assert "completed" in out
    assert "refund-desk" in out
    assert f"{state.usage.input_tokens} in / {state.usage.output_tokens} out tokens" in out
    assert cost_text(state.cost_usd, state.cost_known) in out  # the inspector's money style
    assert "→ issue_refund(" in out
    assert "tool call_refund" in out
    assert "Hi! The headphones from order A-1042" in out


def test_runs_events_prints_one_timeline_row_per_event(
    cli: Invoke, store_url: str, demo_run: str, journal: Journal
) -> None:
    """The timeline lists every event in seq order with its type and time offset."""
    events = journal.events(demo_run)
    result = cli("runs", "events", demo_run, "--store", store_url)

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    rows = [line for line in lines if line.startswith("│") and line.split("│")[1].strip().isdigit()]
    assert len(rows) == len(events)
    for row, event in zip(rows, events, strict=True):
        assert row.split("│")[1].strip() == str(event.seq)
        assert event.type in row


def test_runs_events_json_prints_the_codec_rows(cli: Invoke, store_url: str, demo_run: str, journal: Journal) -> None:
    """`--json` prints exactly the codec's JSON lines: parsing them gives back the journal."""
    result = cli("runs", "events", demo_run, "--store", store_url, "--json")

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(json.loads(line)["v"] == 1 for line in lines)
    assert [event_from_json(line) for line in lines] == journal.events(demo_run)


def test_runs_state_at_0_is_the_fold_of_the_first_event(
    cli: Invoke, store_url: str, demo_run: str, journal: Journal
) -> None:
    """`runs state --at 0` is `RunState.from_events(events[:1])`: running, with the input only."""
    events = journal.events(demo_run)
    expected = RunState.from_events(events[:1])
    assert expected is not None

    shown = cli("runs", "state", demo_run, "--at", "0", "--store", store_url)
    as_json = cli("runs", "state", demo_run, "--at", "0", "--store", store_url, "--json")

    assert shown.exit_code == 0, shown.output
    assert "running" in shown.output
    assert "seq 0 (run_started)" in shown.output
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output) == state_to_dict(expected)
    assert json.loads(as_json.output)["next_seq"] == 1


def test_runs_state_mid_batch_shows_the_pending_calls(
    cli: Invoke, store_url: str, demo_run: str, journal: Journal
) -> None:
    """Time travel to just after an intent: the call is started and pending."""
    events = journal.events(demo_run)
    seq = next(e.seq for e in events if e.type == "tool_started")
    result = cli("runs", "state", demo_run, "--at", str(seq), "--store", store_url, "--json")

    assert result.exit_code == 0, result.output
    state = json.loads(result.output)
    assert state["status"] == "running"
    assert {p["id"] for p in state["pending"]} == {"call_case"}
    assert {c["status"] for c in state["calls"].values()} == {"started"}


def test_runs_state_without_at_is_the_final_state(cli: Invoke, store_url: str, demo_run: str, journal: Journal) -> None:
    """Without `--at`, the state is the fold of the whole journal."""
    result = cli("runs", "state", demo_run, "--store", store_url, "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == state_to_dict(journal.state(demo_run))


def test_runs_state_at_a_seq_past_the_end_exits_1(cli: Invoke, store_url: str, demo_run: str) -> None:
    """Asking for a seq the journal does not have is an error naming the valid range."""
    result = cli("runs", "state", demo_run, "--at", "999", "--store", store_url)

    assert result.exit_code == 1
    assert "--at 999 is outside them" in result.output


@pytest.mark.parametrize("command", [["show"], ["events"], ["events", "--json"], ["state", "--at", "0"]])
def test_an_unknown_run_exits_1_with_a_clear_message(cli: Invoke, store_url: str, command: list[str]) -> None:
    """An unknown run id is one line naming it, exit 1, no traceback."""
    result = cli("runs", command[0], "run_nope", *command[1:], "--store", store_url)

    assert result.exit_code == 1
    assert "no run 'run_nope'" in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_corrupt_row_exits_1_naming_the_run_and_seq(
    cli: Invoke, store_url: str, demo_run: str, db_path: Path
) -> None:
    """A row that does not parse is reported with its run and seq, never skipped or shown as a
    traceback; `runs list`, which reads the store's run index and folds no run, still lists it."""
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE events SET payload = '{broken' WHERE run_id = ? AND seq = 2", (demo_run,))
    conn.close()

    for command in (["show"], ["events"], ["state", "--at", "1"]):
        result = cli("runs", command[0], demo_run, *command[1:], "--store", store_url)
        assert result.exit_code == 1, command
        assert f"run {demo_run} seq 2" in result.output
        assert "Traceback" not in result.output
    listed = cli("runs", "list", "--store", store_url)
    assert listed.exit_code == 0
    assert demo_run[:20] in listed.output


def test_eudaimon_store_env_var_is_the_default_store(cli: Invoke, store_url: str, journal: Journal) -> None:
    """With no `--store`, every command uses `$EUDAIMON_STORE`: the demo writes there and
    `runs` reads from there."""
    env = {"EUDAIMON_STORE": store_url}
    demo = cli("demo", "--pace", "0", "--approve", env=env)
    assert demo.exit_code == 0, demo.output
    [run_id] = journal.run_ids()

    listed = cli("runs", "list", env=env)
    shown = cli("runs", "show", run_id, env=env)

    assert run_id in listed.output
    assert shown.exit_code == 0, shown.output
    assert "completed" in shown.output


def test_store_option_wins_over_the_env_var(cli: Invoke, store_url: str, demo_run: str, tmp_path: Path) -> None:
    """`--store` names the journal even when `$EUDAIMON_STORE` points elsewhere."""
    other = f"sqlite:///{tmp_path / 'other.db'}"
    result = cli("runs", "list", "--store", store_url, env={"EUDAIMON_STORE": other})

    assert demo_run in result.output


def test_without_store_or_env_the_default_is_runs_db_in_the_user_data_dir(
    cli: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fallback journal is `<user data dir>/eudaimon/runs.db` (XDG on Linux), so the
    demo and `runs list` meet there without any option."""
    data_home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_DATA_HOME", str(data_home))
    env: dict[str, str | None] = {"EUDAIMON_STORE": None, "XDG_DATA_HOME": str(data_home)}

    demo = cli("demo", "--pace", "0", env=env)
    listed = cli("runs", "list", env=env)

    assert demo.exit_code == 0, demo.output
    assert (data_home / "eudaimon" / "runs.db").exists()
    assert "refund-desk" in listed.output


def test_a_bad_store_url_exits_1_with_a_message(cli: Invoke) -> None:
    """An unsupported URL is a configuration error shown as one message, exit 1."""
    result = cli("runs", "list", "--store", "mongodb://localhost/runs")

    assert result.exit_code == 1
    assert "unsupported store URL" in result.output


def test_runs_list_says_own_for_a_runs_own_thread_and_shows_a_shared_thread_whole(
    cli: Invoke, store_url: str, tmp_path: Path
) -> None:
    """A run started over HTTP without a thread has one named after itself (`agent:run_id`),
    which at 100 columns the list cut to `…`: it says `own`; a thread runs share is whole."""
    import asyncio

    from eudaimon import Agent
    from eudaimon.core.run_index import own_thread
    from eudaimon.models import ScriptedModel

    async def play() -> None:
        agent = Agent(ScriptedModel(["one", "two"]), name="desk", store=store_url)
        await agent.prompt("hi", run_id="run-alone", thread_id=own_thread("desk", "run-alone"))
        await agent.prompt("hi", run_id="run-shared", thread_id="support-4711")

    asyncio.run(play())
    result = cli("runs", "list", "--store", store_url, env={"COLUMNS": "100"})

    assert result.exit_code == 0, result.output
    alone = next(line for line in result.output.splitlines() if "run-alone" in line)
    shared = next(line for line in result.output.splitlines() if "run-shared" in line)
    assert " own " in alone and "desk:run-alone" not in alone
    assert "support-4711" in shared
