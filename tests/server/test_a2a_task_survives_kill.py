"""An A2A task outlives its server: kill -9 mid-task, restart on the same store, and `GetTask`,
`SubscribeToTask` and a resent message answer from the journal while recovery finishes the run."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
from _a2a_support import A2AServer, a2a_client, state_name, states_of
from a2a.types.a2a_pb2 import GetTaskRequest, Message, Part, Role, SendMessageRequest, SubscribeToTaskRequest


async def test_a_task_killed_mid_run_is_followed_to_completion_after_restart(tmp_path: Path) -> None:
    server = A2AServer(tmp_path / "runs.db", agents=("_server_agents:ticker",), env={"EUDAIMON_TEST_STEP_S": "0.3"})
    server.start()
    message_id = uuid.uuid4().hex
    message = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text="ticks=8")])
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            client = await a2a_client(http, server.agent_url("ticker"))
            before = []
            async for response in client.send_message(SendMessageRequest(message=message)):
                before.append(response)
                if "working" in states_of(before):
                    break
            task_id = before[0].task.id
            assert task_id.startswith("a2a_")
        server.kill()  # SIGKILL mid-run: nothing flushed, the lease left to lapse
        server.start()
        async with httpx.AsyncClient(timeout=60) as http:
            client = await a2a_client(http, server.agent_url("ticker"))
            read = await client.get_task(GetTaskRequest(id=task_id))
            assert state_name(read.status.state) == "working"  # from the journal: the run has not ended
            followed = [r async for r in client.subscribe(SubscribeToTaskRequest(id=task_id))]
            shown = states_of(followed)
            assert shown[0] == "working" and shown[-1] == "completed", shown
            assert len(shown) == len(set(shown)), f"a state shown twice: {shown}"
            done = await client.get_task(GetTaskRequest(id=task_id))
            assert state_name(done.status.state) == "completed"
            assert "Ticked 8 times" in done.artifacts[0].parts[0].text
            resent = [r async for r in client.send_message(SendMessageRequest(message=message))]
            assert resent[0].task.id == task_id
            assert states_of(resent) == ["completed"]
            runs = (await http.get(f"{server.url}/v1/runs", params={"agent": "ticker"})).json()["runs"]
        assert [r["run_id"] for r in runs] == [task_id]
    finally:
        server.stop()
