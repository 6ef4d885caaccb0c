"""A Temporal-owned schedule from the two other doors: `eudaimon schedules add --temporal URL`
(and `list`, `remove`) and `POST /v1/schedules` on a server whose agent has a `TemporalEngine`
(the schedule becomes a Temporal Schedule without being asked)."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest
from fleet_agent import make
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode
from typer.testing import CliRunner

from eudaimon.cli import app as cli
from eudaimon.runtime.process.schedules import temporal_schedule_id
from eudaimon.server import create_app
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine


def _cli(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(cli, list(args), env={"COLUMNS": "250", "NO_COLOR": "1"})
    return done.exit_code, done.output


async def _gone(client: Client, schedule_id: str) -> bool:
    try:
        await client.get_schedule_handle(temporal_schedule_id(schedule_id)).describe()
    except RPCError as exc:
        return exc.status is RPCStatusCode.NOT_FOUND
    return False


async def test_schedules_add_temporal_from_the_cli_creates_lists_and_removes_the_temporal_schedule(
    client: Client, temporal_target: str, task_queue: str, store_url: str
) -> None:
    """Invariant: `schedules add --temporal URL` makes a Temporal Schedule; `list --json` shows
    the engine and Temporal's next action time; `remove` deletes it; a URL that is not
    temporal:// and a bad --catch-up are refused with what to give."""
    url = TemporalEngine(temporal_target, task_queue=task_queue).url
    code, said = await asyncio.to_thread(
        _cli, "schedules", "add", "fleet", "--cron", "0 9 * * *", "--input", "hi", "--id", "cli-sched",
        "--temporal", url, "--catch-up", "none", "--store", store_url,
    )  # fmt: skip
    assert code == 0, said
    described = await client.get_schedule_handle(temporal_schedule_id("cli-sched")).describe()
    assert described.schedule.policy.catchup_window.total_seconds() == 60  # --catch-up none
    code, said = await asyncio.to_thread(_cli, "schedules", "list", "--json", "--store", store_url)
    [row] = [json.loads(line) for line in said.splitlines() if line.strip()]
    assert row["engine"] == url and row["catch_up"] == "none"
    assert row["next_run_at"] == described.info.next_action_times[0].isoformat()
    code, said = await asyncio.to_thread(_cli, "schedules", "list", "--store", store_url)
    assert "Temporal" in said
    code, said = await asyncio.to_thread(_cli, "schedules", "remove", "cli-sched", "--store", store_url)
    assert code == 0 and await _gone(client, "cli-sched")

    code, said = await asyncio.to_thread(
        _cli, "schedules", "add", "fleet", "--cron", "0 9 * * *", "--input", "hi", "--temporal", "localhost:7233",
        "--store", store_url,
    )  # fmt: skip
    assert code == 1 and "temporal://HOST:PORT/QUEUE" in said
    code, said = await asyncio.to_thread(
        _cli, "schedules", "add", "fleet", "--cron", "0 9 * * *", "--input", "hi", "--temporal", url,
        "--catch-up", "all", "--store", store_url,
    )  # fmt: skip
    assert code == 1 and "--catch-up is `latest` or `none`" in said


@pytest.mark.parametrize("with_engine", [True, False])
async def test_a_schedule_added_over_http_for_a_temporal_agent_is_a_temporal_schedule(
    client: Client, temporal_target: str, task_queue: str, store_url: str, with_engine: bool
) -> None:
    """Invariant: `POST /v1/schedules` for an agent served with a `TemporalEngine` keeps a schedule
    naming that engine and creates its Temporal Schedule; for an agent without one, neither."""
    store = open_store(store_url)
    engine = TemporalEngine(temporal_target, task_queue=task_queue)
    agent = make(store=store, engine=engine) if with_engine else make(store=store)
    application = create_app(agent, store, recover=False, fire_schedules=False)
    sid = f"http-{int(with_engine)}"
    transport = httpx2.ASGITransport(app=application)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        answer = await http.post(
            "/v1/schedules", json={"agent": "fleet", "cron": "0 9 * * *", "input": "hi", "schedule_id": sid}
        )
        assert answer.status_code == 201, answer.text
        assert answer.json()["engine"] == (engine.url if with_engine else "")
        assert await _gone(client, sid) is not with_engine
        assert (await http.request("DELETE", f"/v1/schedules/{sid}", json={})).status_code == 204
    assert await _gone(client, sid)
    await agent.aclose()
    await store.close()
