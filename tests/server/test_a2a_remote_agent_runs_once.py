"""A remote A2A agent as a tool does its work once: an eudaimon agent calls another eudaimon
server's agent over A2A, its server is killed -9 mid-call, and on resume the call sends the
same message id again, which the remote recognises: no second task, the first one followed to
its end, its id journaled with the call."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

from _a2a_support import A2AServer
from _server_support import KEYS, OPERATOR, VIEWER, wait_until

from eudaimon import Agent, Message, ToolCall
from eudaimon.a2a import A2AAgent
from eudaimon.core.codec import event_to_dict
from eudaimon.core.messages import Role
from eudaimon.models import ScriptedModel


@contextlib.contextmanager
def _caller_of_remote(tmp_path: Path, caller_agent: str) -> Iterator[tuple[A2AServer, A2AServer]]:
    """(caller, remote): a remote ticker (0.3 s a tick) and a caller server whose agent
    `caller_agent` asks it over A2A; both stopped at the end, however the test ends."""
    remote = A2AServer(tmp_path / "remote.db", agents=("_server_agents:ticker",), env={"EUDAIMON_TEST_STEP_S": "0.3"})
    remote.start()
    caller = A2AServer(
        tmp_path / "caller.db",
        agents=(f"_a2a_agents:{caller_agent}",),
        args=(),
        env={"EUDAIMON_TEST_A2A_REMOTE": remote.agent_url("ticker")},
    )
    try:
        caller.start()
        yield caller, remote
    finally:
        caller.stop()
        remote.stop()


def test_a_caller_killed_mid_call_gets_the_same_remote_task_on_resume(tmp_path: Path) -> None:
    with (
        _caller_of_remote(tmp_path, "delegator") as (caller, remote),
        caller.client() as http,
        remote.client() as remote_http,
    ):
        run_id = http.post("/v1/agents/delegator/runs", json={"input": "ticks=6"}).json()["run_id"]

        def remote_runs() -> list[str]:
            runs = remote_http.get("/v1/runs", params={"agent": "ticker"}).json()["runs"]
            return [r["run_id"] for r in runs]

        [task_id] = wait_until(remote_runs, "the remote task to start")
        wait_until(
            lambda: remote_http.get(f"/v1/runs/{task_id}").json()["status"] == "running",
            "the remote task to leave the queue",
        )
        caller.kill()  # mid-call: the remote task is working, the caller's call has no result
        assert remote_http.get(f"/v1/runs/{task_id}").json()["status"] == "running"
        caller.start()
        with caller.client() as again:

            def finished() -> dict[str, object] | None:
                run: dict[str, object] = again.get(f"/v1/runs/{run_id}").json()
                return run if run["status"] == "completed" else None

            run = wait_until(finished, "the caller's run to complete after its restart", tries=1200)
            events = again.get(f"/v1/runs/{run_id}/events").json()["events"]
        assert remote_runs() == [task_id], "the remote agent got a second task"
        started = [e for e in events if e["type"] == "tool_started"]
        assert len(started) == 2 and {e["idempotency_key"] for e in started} == {started[0]["idempotency_key"]}
        [completed] = [e for e in events if e["type"] == "tool_completed"]
        assert completed["output"].endswith(f"[A2A task {task_id}]")
        assert "Ticked 6 times" in completed["output"]
        assert "Ticked 6 times" in str(run["output"])


def test_a_remote_killed_mid_task_is_followed_through_its_restart(tmp_path: Path) -> None:
    """The remote server dies mid-task and comes back on the same store: the caller's call
    (never interrupted itself) follows the same task with GetTask/SubscribeToTask to its end;
    one call, one remote task."""
    with _caller_of_remote(tmp_path, "delegator") as (caller, remote):
        with caller.client() as http, remote.client() as remote_http:
            run_id = http.post("/v1/agents/delegator/runs", json={"input": "ticks=8"}).json()["run_id"]

            def remote_runs() -> list[str]:
                runs = remote_http.get("/v1/runs", params={"agent": "ticker"}).json()["runs"]
                return [r["run_id"] for r in runs]

            [task_id] = wait_until(remote_runs, "the remote task to start")
            remote.kill()
            remote.start()

            def finished() -> dict[str, object] | None:
                run: dict[str, object] = http.get(f"/v1/runs/{run_id}").json()
                return run if run["status"] in ("completed", "failed") else None

            run = wait_until(finished, "the caller's run to end", tries=1200)
            assert run["status"] == "completed", run
            events = http.get(f"/v1/runs/{run_id}/events").json()["events"]
        with remote.client() as remote_http:
            assert [r["run_id"] for r in remote_http.get("/v1/runs").json()["runs"]] == [task_id]
        assert [e["type"] for e in events].count("tool_started") == 1
        [completed] = [e for e in events if e["type"] == "tool_completed"]
        assert completed["output"].endswith(f"[A2A task {task_id}]") and "Ticked 8 times" in completed["output"]


async def test_the_remote_servers_keys_apply_and_a_refusal_is_a_result_the_model_reads(tmp_path: Path) -> None:
    """`headers=` carry the key: an operator's key gets the answer; a viewer's is refused (403),
    which the model reads as the call's error result, the run going on; no key is journaled."""
    remote = A2AServer(tmp_path / "remote.db", agents=("_server_agents:ticker",), env={"EUDAIMON_API_KEYS": KEYS})
    remote.start()
    try:
        results = {}
        for key in (OPERATOR, VIEWER):
            tool = A2AAgent(remote.agent_url("ticker"), headers={"Authorization": f"Bearer {key}"})
            caller = Agent(
                ScriptedModel([Message.assistant(tool_calls=[ToolCall("c1", "ticker", {"input": "ticks=1"})]), "ok"]),
                tools=[tool],
                store=f"sqlite:///{tmp_path / (key + '.db')}",
                memory=None,
            )
            response = await caller.prompt("ask")
            assert response.status == "completed"
            [result] = [m for m in response.messages if m.role is Role.TOOL]
            results[key] = result
            journal = json.dumps([event_to_dict(e) for e in await caller.store.load(response.run_id)])
            assert "Ticked" in journal or "403" in journal  # the journal read back holds the call's result
            assert key not in journal
        assert not results[OPERATOR].is_error and "Ticked 1 times" in results[OPERATOR].content
        assert results[VIEWER].is_error and "403" in results[VIEWER].content
    finally:
        remote.stop()


def test_declared_not_idempotent_a_call_cut_by_a_crash_is_an_unknown_outcome(tmp_path: Path) -> None:
    """`A2AAgent(..., idempotent=False)` is a plain WRITE: its caller killed mid-call is not
    sent again on resume; the call's outcome is unknown, for an operator to settle."""
    with _caller_of_remote(tmp_path, "strict_delegator") as (caller, remote):
        with caller.client() as http, remote.client() as remote_http:
            run_id = http.post("/v1/agents/strict_delegator/runs", json={"input": "ticks=6"}).json()["run_id"]

            def remote_runs() -> list[str]:
                runs = remote_http.get("/v1/runs", params={"agent": "ticker"}).json()["runs"]
                return [r["run_id"] for r in runs]

            [task_id] = wait_until(remote_runs, "the remote task to start")
            caller.kill()
            caller.start()
            with caller.client() as again:

                def waiting() -> dict[str, object] | None:
                    run: dict[str, object] = again.get(f"/v1/runs/{run_id}").json()
                    return run if run["status"] == "awaiting_reconciliation" else None

                wait_until(waiting, "the call's outcome to be unknown", tries=1200)
                events = again.get(f"/v1/runs/{run_id}/events").json()["events"]
            assert remote_runs() == [task_id]
        assert [e["type"] for e in events].count("tool_started") == 1
        assert [e["call_id"] for e in events if e["type"] == "tool_outcome_unknown"] == ["ask_1"]
