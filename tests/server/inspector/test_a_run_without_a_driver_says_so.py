"""A running run's page, the runs list and the API say whether a process drives it: the journal reads
`running` alike for a run whose process is at work and one whose process was killed; the run's
lease does not.

A real `eudaimon run` process, on the inspector's store, drives a run of an agent the server does
not serve (so the server's recovery never takes it over) whose model call hangs. While it lives,
the answer's `driver` names it (host:pid:…, its lease's owner) and the page shows it; killed with
SIGKILL, it gives nothing up, and once its lease lapses (`EUDAIMON_LEASE_TTL_S`, short here) the
answer's `driver` is null and the open page, with no event to follow, says by itself that no
process drives the run; so do the runs list (`no_driver` in `GET /v1/runs`) and its page.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx2
from _server_support import OPERATOR, Server
from playwright.sync_api import Page, expect

import eudaimon

_AGENT = textwrap.dedent(
    """
    import asyncio
    from eudaimon import Agent, Message
    from eudaimon.models import FunctionModel

    async def hang(request):
        await asyncio.sleep(600)
        return Message.assistant("never")

    hanging = Agent(FunctionModel(hang, model_id="hanging"), name="hanging", memory=None)
    """
)


def _view(server: Server, run_id: str, *, found: bool = True) -> dict[str, object]:
    """The run's answer; with `found=False`, `{}` while the store has no run of that id yet."""
    with httpx2.Client(base_url=server.url, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=30) as client:
        answer = client.get(f"/v1/runs/{run_id}")
        if answer.status_code == 404 and not found:
            return {}
        assert answer.status_code == 200, answer.text
        return dict(answer.json())


def _listed(server: Server, run_id: str) -> dict[str, object]:
    """The run's row in `GET /v1/runs`."""
    with httpx2.Client(base_url=server.url, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=30) as client:
        answer = client.get("/v1/runs", params={"status": "running"})
        assert answer.status_code == 200, answer.text
        [row] = [row for row in answer.json()["runs"] if row["run_id"] == run_id]
        return dict(row)


def test_a_killed_driver_shows_as_no_driver_on_the_page_the_list_and_in_the_api(
    page: Page, inspector: Server, tmp_path: Path
) -> None:
    (tmp_path / "hangs.py").write_text(_AGENT)
    src = str(Path(eudaimon.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{tmp_path}", "EUDAIMON_LEASE_TTL_S": "1.5"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "eudaimon", "run", "hangs:hanging", "wait", "--store", inspector.store_url],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        found = re.fullmatch(r"run (run_\w+)\n", proc.stdout.readline())
        assert found
        run_id = found.group(1)
        for _ in range(600):  # its model call has begun: run_started, model_attempt_started (the id comes first)
            alive = _view(inspector, run_id, found=False)
            if int(str(alive.get("event_count", 0))) >= 2:
                break
            time.sleep(0.1)
        driver = alive["driver"]
        assert isinstance(driver, dict) and f":{proc.pid}:" in str(driver["owner"]), alive
        assert 0 < float(driver["lease_left_s"]) <= 1.5
        assert (alive["status"], alive["driven_here"], alive["driven_by_engine"]) == ("running", False, False)

        assert _listed(inspector, run_id)["no_driver"] is False
        page.goto(f"{inspector.url}/?status=running")
        expect(page.locator(f'tr[data-run="{run_id}"]')).to_contain_text("running")
        expect(page.get_by_test_id("no-driver")).to_have_count(0)

        page.goto(f"{inspector.url}/runs/{run_id}")
        expect(page.get_by_test_id("driver")).to_contain_text(f":{proc.pid}:")
        expect(page.get_by_test_id("no-driver")).to_have_count(0)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)

    expect(page.get_by_test_id("no-driver")).to_be_visible(timeout=20_000)  # no event: the page asks again
    expect(page.get_by_test_id("driver")).to_have_count(0)
    gone = _view(inspector, run_id)
    assert (gone["status"], gone["driver"]) == ("running", None), gone
    assert _listed(inspector, run_id)["no_driver"] is True

    page.goto(f"{inspector.url}/?status=running")
    expect(page.locator(f'tr[data-run="{run_id}"]').get_by_test_id("no-driver")).to_be_visible()
