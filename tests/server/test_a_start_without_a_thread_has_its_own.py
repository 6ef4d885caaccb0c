"""Over HTTP a start without `thread_id` gets a thread of its own, unless the agent is served as
one shared conversation.

Bug: such a start joined `"{agent}:default"` on an agent with memory: every HTTP client saw the
others' history, and all such runs ran one at a time (300 starts took minutes). The `gated`
model waits for a gate the test opens, so "side by side" is shown by every run having begun
while none could end, not by timings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest
from _queue_support import Backend, QueueServer, all_completed, begun


def _start(client: httpx2.Client, text: str, **extra: Any) -> dict[str, Any]:
    answer = client.post("/v1/agents/gated/runs", json={"input": text, **extra})
    assert answer.status_code == 202, answer.text
    run: dict[str, Any] = answer.json()
    return run


def test_thread_less_starts_have_their_own_threads_and_run_side_by_side(tmp_path: Path) -> None:
    server = QueueServer(tmp_path / "runs.db", backend=Backend("sqlite", tmp_path)).start()
    try:
        with server.client() as client:
            runs = [_start(client, f"user-{n}") for n in range(4)]
            assert [r["thread_id"] for r in runs] == [f"gated:{r['run_id']}" for r in runs]
            lines = begun(server, *(f"user-{n}" for n in range(4)))  # all four at once, the gate shut
            assert not any(line.startswith("end") for line in lines)
            server.open_gate()
            done = all_completed(client, [r["run_id"] for r in runs])
            assert all(r["output"].endswith("(after 0 earlier turn(s))") for r in done)  # no one else's history
            again = client.post(
                "/v1/agents/gated/runs?wait=true", json={"input": "user-0 again", "thread_id": runs[0]["thread_id"]}
            ).json()
            assert again["output"] == "done: user-0 again (after 1 earlier turn(s))"  # its own thread goes on
            prompted = client.post("/prompt", json={"input": "by prompt", "agent": "gated"}).json()
            assert prompted["status"] == "completed"
            thread = client.get(f"/v1/runs/{prompted['run_id']}").json()["thread_id"]
            assert thread == f"gated:{prompted['run_id']}"
    finally:
        server.stop()


def test_an_agent_served_as_one_conversation_keeps_its_default_thread(tmp_path: Path) -> None:
    server = QueueServer(
        tmp_path / "runs.db", backend=Backend("sqlite", tmp_path), args=("--shared-thread", "gated")
    ).start()
    try:
        with server.client() as client:
            first = _start(client, "team-1")
            begun(server, "team-1")
            second = _start(client, "team-2")
            assert first["thread_id"] == second["thread_id"] == "gated:default"
            assert client.get(f"/v1/runs/{second['run_id']}").json()["status"] == "queued"
            server.open_gate()
            done = all_completed(client, [first["run_id"], second["run_id"]])
            assert done[1]["output"] == "done: team-2 (after 1 earlier turn(s))"  # the shared history
            quick = client.post("/v1/agents/quick/runs?wait=true", json={"input": "not shared"}).json()
            assert quick["thread_id"] == f"quick:{quick['run_id']}"  # only the agent named shares
    finally:
        server.stop()


def test_shared_threads_must_name_agents_served(tmp_path: Path) -> None:
    server = QueueServer(tmp_path / "runs.db", backend=Backend("sqlite", tmp_path), args=("--shared-thread", "nobody"))
    try:
        with pytest.raises(AssertionError, match="shared_threads names no agent served here: nobody"):
            server.start()
    finally:
        server.stop()
