"""Schedules are kept in the store and managed three ways that agree: `/v1/schedules` (operators
only: a viewer's key is refused), the `eudaimon schedules` command, and `runtime.process.schedules`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _server_support import OPERATOR, VIEWER, Server


def test_schedules_over_http_are_for_operators(keyed: Server) -> None:
    with keyed.client(VIEWER) as viewer:
        assert viewer.get("/v1/schedules").status_code == 403
        assert (
            viewer.post("/v1/schedules", json={"agent": "ticker", "cron": "0 9 * * 1-5", "input": "x"}).status_code
            == 403
        )
    with keyed.client(OPERATOR) as operator:
        body = {"agent": "ticker", "cron": "0 9 * * 1-5", "input": "ticks=1", "timezone": "Europe/Paris"}
        added = operator.post("/v1/schedules", json={**body, "schedule_id": "mornings"})
        assert added.status_code == 201, added.text
        shown = added.json()
        assert shown["id"] == "mornings" and shown["paused"] is False and shown["last_run_id"] is None
        assert shown["next_run_at"].endswith("+00:00")  # nine in Paris, given in UTC
        assert operator.post("/v1/schedules", json={**body, "schedule_id": "mornings"}).status_code == 422  # taken
        assert operator.post("/v1/schedules", json={**body, "cron": "61 * * * *"}).status_code == 422
        assert operator.post("/v1/schedules", json={**body, "timezone": "Mars/Olympus"}).status_code == 422
        assert operator.post("/v1/schedules", json={**body, "agent": "nobody"}).status_code == 422
        # `id` is what the answer calls it; a body naming it so was kept under a fresh id, the
        # field dropped without a word. A field the API does not know is refused, naming it.
        named = operator.post("/v1/schedules", json={**body, "id": "evenings"})
        assert named.status_code == 422 and "id" in named.text, named.text
        paused_too = operator.post("/v1/schedules/mornings/pause", json={"paused": True, "until": "monday"})
        assert paused_too.status_code == 422 and "until" in paused_too.text, paused_too.text
        paused = operator.post("/v1/schedules/mornings/pause", json={"paused": True})
        assert paused.status_code == 200 and paused.json()["paused"] is True and paused.json()["next_run_at"] is None
        listed = operator.get("/v1/schedules").json()["schedules"]
        assert [s["id"] for s in listed] == ["mornings"]
        assert operator.request("DELETE", "/v1/schedules/mornings", json={}).status_code == 204
        assert operator.request("DELETE", "/v1/schedules/mornings", json={}).status_code == 404
        assert operator.post("/v1/schedules/mornings/pause", json={}).status_code == 404
        assert operator.get("/v1/schedules").json()["schedules"] == []


def _cli(*args: str, store: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from eudaimon.cli import app; app()", "schedules", *args, "--store", store]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_schedules_command_adds_lists_pauses_and_removes(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    added = _cli("add", "ticker", "--cron", "*/5 * * * *", "--input", "ticks=1", "--id", "five", store=store)
    assert added.returncode == 0, added.stderr
    assert "schedule five" in added.stdout and "next run" in added.stdout
    bad = _cli("add", "ticker", "--cron", "every day", "--input", "x", store=store)
    assert bad.returncode == 1 and "not valid" in bad.stderr
    [row] = [json.loads(line) for line in _cli("list", "--json", store=store).stdout.splitlines()]
    assert row["id"] == "five" and row["cron"] == "*/5 * * * *" and row["next_run_at"]
    assert _cli("pause", "five", store=store).returncode == 0
    [row] = [json.loads(line) for line in _cli("list", "--json", store=store).stdout.splitlines()]
    assert row["paused"] is True and row["next_run_at"] is None
    assert "resumed" in _cli("pause", "five", "--resume", store=store).stdout
    assert _cli("remove", "five", store=store).returncode == 0
    gone = _cli("remove", "five", store=store)
    assert gone.returncode == 1 and "no schedule" in gone.stderr
    assert "No schedules" in _cli("list", store=store).stdout
