"""Starting runs and deciding for them over HTTP, against a real uvicorn server: approve,
reconcile, resume, fork, cancel; every decision journals the key's principal as `by`."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path

import httpx2
import pytest
from _server_support import HERE, Server, wait_until

from eudaimon import Message, ToolCall
from eudaimon.models import ChatRequest
from eudaimon.runtime.process import operations
from eudaimon.stores import SqliteStore


def _status(client: httpx2.Client, run_id: str, *wanted: str) -> dict[str, object]:
    def check() -> dict[str, object] | None:
        run = client.get(f"/v1/runs/{run_id}").json()
        return run if run["status"] in wanted else None

    return wait_until(check, f"run {run_id} to be {' or '.join(wanted)}")


def test_approve_with_a_note_then_the_run_completes(server: Server) -> None:
    """Invariant: a started run that calls an IRREVERSIBLE tool waits (`?wait=true` answers 200
    with the pending call); an approval journals who and why, and the server drives the run to
    completion."""
    with server.client() as client:
        started = client.post("/v1/agents/payer/runs?wait=true", json={"input": "pay 120 to ACME"})
        assert started.status_code == 200
        run = started.json()
        assert run["status"] == "awaiting_approval"
        [call] = run["pending_approvals"]
        assert call["tool"] == "send_wire" and call["arguments"] == {"amount_usd": 120.0, "to": "ACME"}
        decided = client.post(
            f"/v1/runs/{run['run_id']}/approvals/{call['call_id']}", json={"approved": True, "note": "invoice 7"}
        )
        assert decided.status_code == 200 and decided.json()["resumed"] is True
        done = _status(client, run["run_id"], "completed")
        assert done["output"] == "Done: sent $120.00 to ACME."
        assert done["decisions"] == [
            {
                **done["decisions"][0],
                "kind": "approval",
                "call_id": "wire_1",
                "by": "anonymous",
                "approved": True,
                "note": "invoice 7",
            }
        ]
        again = client.post(f"/v1/runs/{run['run_id']}/approvals/wire_1", json={"approved": False})
        assert again.status_code == 409


def test_deny_shows_the_model_an_error_and_the_run_goes_on(server: Server) -> None:
    """Invariant: a denial is journaled and the run continues with the denial as the tool's result."""
    with server.client() as client:
        run = client.post("/v1/agents/payer/runs?wait=true", json={"input": "pay 5 to EVE"}).json()
        client.post(f"/v1/runs/{run['run_id']}/approvals/wire_1", json={"approved": False, "note": "fraud"})
        done = _status(client, run["run_id"], "completed")
        assert "denied" in done["output"]
        assert done["decisions"][0]["approved"] is False


def test_wait_true_answers_when_the_run_ends(server: Server) -> None:
    """Invariant: `?wait=true` answers 200 with the finished run."""
    with server.client() as client:
        answer = client.post("/v1/agents/ticker/runs?wait=true", json={"input": "ticks=2"})
        assert answer.status_code == 200
        assert answer.json()["status"] == "completed" and answer.json()["steps"] == 3


def _charge_as_a_provider_sends_it(request: ChatRequest) -> Message | str:
    """`_server_agents._charge`, with the arguments as JSON text (a real provider's wire form)."""
    import _server_agents

    answer = _server_agents._charge(request)
    if isinstance(answer, str):
        return answer
    return Message.assistant(tool_calls=[ToolCall("charge_1", "charge_card", '{"amount_usd": 42}')])


async def _stranded_charge(db: Path) -> str:
    """A `charger` run stopped mid-call (its `tool_started` journaled, no result), as after a crash."""
    import _server_agents

    store = SqliteStore(str(db))
    agent = _server_agents.Agent(
        _server_agents.FunctionModel(_charge_as_a_provider_sends_it, "charger-model"),
        tools=[_server_agents.charge_card],
        name="charger",
        store=store,
    )
    run_id = f"stranded-{uuid.uuid4().hex[:8]}"
    task = asyncio.create_task(agent.prompt("charge it", run_id=run_id, thread_id=run_id))
    for _ in range(1000):
        events = await store.load(run_id)
        if events and events[-1].type == "tool_started":
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await store.close()
    return run_id


def test_an_unknown_outcome_is_reconciled_and_the_run_completes(fresh: Server) -> None:
    """Invariant: a WRITE call interrupted mid-call is not re-run: the recovering server marks its
    outcome unknown and shows the arguments the tool was started with (an object, not the model's
    JSON text); an operator's reconciliation (with the output it had) completes the run and
    journals `by`. Reconciling it again is 409; output and retry together are 422."""
    run_id = asyncio.run(_stranded_charge(fresh.db))
    fresh.start()
    with fresh.client() as client:
        waiting = _status(client, run_id, "awaiting_reconciliation")
        [call] = waiting["unknown_outcomes"]
        assert call["call_id"] == "charge_1" and call["arguments"] == {"amount_usd": 42}, call
        both = client.post(f"/v1/runs/{run_id}/reconcile/charge_1", json={"output": "x", "retry": True})
        assert both.status_code == 422 and "exactly one" in both.text
        settled = client.post(f"/v1/runs/{run_id}/reconcile/charge_1", json={"output": "charged $42.00 (bank says)"})
        assert settled.status_code == 200
        done = _status(client, run_id, "completed")
        assert done["output"] == "The card was charged: charged $42.00 (bank says)"
        assert [d["kind"] for d in done["decisions"]] == ["reconcile"]
        assert client.post(f"/v1/runs/{run_id}/reconcile/charge_1", json={"retry": True}).status_code == 409


def test_resume_continues_a_run_decided_elsewhere(tmp_path: Path) -> None:
    """Invariant: a decision made with the store alone (the CLI's way) is acted on by
    `POST /resume` (202), and the run completes. (A long lease TTL keeps the recovery sweep from
    resuming it first.)"""
    server = Server(tmp_path / "runs.db", env={"EUDAIMON_LEASE_TTL_S": "600"}).start()
    try:
        with server.client() as client:
            run_id = client.post("/v1/agents/payer/runs?wait=true", json={"input": "pay 9 to BOB"}).json()["run_id"]

            async def approve() -> None:
                store = SqliteStore(str(server.db))
                await operations.approve(store, run_id, "wire_1", True, by="cli-user")
                await store.close()

            asyncio.run(approve())
            assert client.get(f"/v1/runs/{run_id}").json()["status"] == "running"
            resumed = client.post(f"/v1/runs/{run_id}/resume", json={})
            assert resumed.status_code == 202
            done = _status(client, run_id, "completed")
            assert done["decisions"][0]["by"] == "cli-user"
            assert client.post(f"/v1/runs/{run_id}/resume", json={}).status_code == 409
    finally:
        server.stop()


def test_fork_at_an_event_is_a_new_run_from_there(server: Server) -> None:
    """Invariant: a fork at the approval request waits for its own approval and completes on its
    own; the parent's journal is untouched and the fork names its parent."""
    with server.client() as client:
        parent = client.post("/v1/agents/payer/runs?wait=true", json={"input": "pay 3 to ZED"}).json()
        client.post(f"/v1/runs/{parent['run_id']}/approvals/wire_1", json={"approved": True})
        parent_done = _status(client, parent["run_id"], "completed")
        # seq 0 run_queued, 1 run_started, 2 model_attempt_started, 3 model_called, 4 approval_requested
        forked = client.post(f"/v1/runs/{parent['run_id']}/fork", json={"at_seq": 4})
        assert forked.status_code == 201
        child = forked.json()
        assert child["parent"] == {"run_id": parent["run_id"], "seq": 4}
        assert child["status"] == "awaiting_approval" and child["event_count"] == 5
        client.post(f"/v1/runs/{child['run_id']}/approvals/wire_1", json={"approved": False, "note": "not twice"})
        assert "denied" in _status(client, child["run_id"], "completed")["output"]
        assert client.get(f"/v1/runs/{parent['run_id']}").json()["event_count"] == parent_done["event_count"]
        assert client.post(f"/v1/runs/{parent['run_id']}/fork", json={"at_seq": 999}).status_code == 409


def test_cancel_a_run_this_server_drives(server: Server) -> None:
    """Invariant: cancel of a live run driven here stops it at once; `run_cancelled` names who."""
    with server.client() as client:
        run = client.post("/v1/agents/ticker/runs", json={"input": "ticks=100000"}).json()
        cancelled = client.post(f"/v1/runs/{run['run_id']}/cancel", json={"reason": "runaway"})
        assert cancelled.status_code == 200
        assert cancelled.json()["status"] == "cancelled"
        assert cancelled.json()["decisions"][-1] | {"seq": 0, "at": ""} == {
            "kind": "cancel", "seq": 0, "at": "", "call_id": None, "by": "anonymous", "note": "runaway"
        }  # fmt: skip
        assert client.post(f"/v1/runs/{run['run_id']}/cancel", json={}).status_code == 409


DRIVER = """
import asyncio, sys
import _server_agents
from eudaimon import Agent
from eudaimon.stores import SqliteStore

async def main():
    store = SqliteStore(sys.argv[1])
    agent = Agent(_server_agents.ticker.model, tools=[_server_agents.tick], name="ticker", store=store, max_iterations=100000)
    try:
        await agent.prompt("ticks=100000", run_id=sys.argv[2])
    except Exception as exc:
        print(type(exc).__name__, flush=True)
    await store.close()

asyncio.run(main())
"""


def test_cancel_a_run_another_process_drives(server: Server) -> None:
    """Invariant: cancel of a run whose lease another process holds is 202 (requested); that
    process journals `run_cancelled` with the server's principal as `by`, and stops."""
    run_id = "elsewhere-1"
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(server.db), run_id], cwd=HERE, stdout=subprocess.PIPE, text=True
    )
    try:
        with server.client() as client:
            wait_until(lambda: client.get(f"/v1/runs/{run_id}").status_code == 200, "the other process's run")
            answer = client.post(f"/v1/runs/{run_id}/cancel", json={"reason": "stop the ticker"})
            assert answer.status_code == 202, (answer.text, client.get(f"/v1/runs/{run_id}").json(), driver.poll())
            assert answer.json()["cancel_requested"] is True
            done = _status(client, run_id, "cancelled")
            assert done["decisions"][-1]["by"] == "anonymous" and done["error"] == "stop the ticker"
        out, _ = driver.communicate(timeout=60)
        assert out.strip() == "Cancelled"
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        if driver.stdout is not None:
            driver.stdout.close()  # here: left to the collector, it fails a later test with a ResourceWarning
