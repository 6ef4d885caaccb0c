"""An A2A client (the official `a2a-sdk`) calling an eudaimon agent. Runs offline.

The agent is served with `create_app(agent, a2a=True)` (what `eudaimon serve --a2a` does) and
its model is scripted. The client reads the Agent Card, streams a message (the task's states
arrive as they are journaled), then reads the task again with `GetTask`: the task id is the
eudaimon run id, and the answer is its artifact.

    pip install 'eudaimon[server,a2a]'
    python examples/a2a_client.py
"""

from __future__ import annotations

import asyncio
import uuid

import httpx
from _background_server import serving
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.helpers import get_artifact_text
from a2a.types.a2a_pb2 import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState

from eudaimon import Agent, ToolCall, tool
from eudaimon import Message as EudaimonMessage
from eudaimon.models import ScriptedModel
from eudaimon.server import create_app


@tool(effect="read")
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: shipped on Monday"


agent = Agent(
    ScriptedModel(
        [
            EudaimonMessage.assistant(tool_calls=[ToolCall("c1", "lookup_order", {"order_id": "A-17"})]),
            "Your order A-17 shipped on Monday.",
        ]
    ),
    tools=[lookup_order],
    system_prompt="You answer questions about orders.",
    name="orders",
    store="memory:",
)


async def main(url: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, f"{url}/a2a/orders").get_agent_card()
        print(f"card: {card.name} — {card.description} — skills {[s.id for s in card.skills]}")
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)
        message = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text="Where is A-17?")])
        task_id = ""
        async for response in client.send_message(SendMessageRequest(message=message)):
            if response.HasField("task"):
                task_id = response.task.id
                print("task", task_id, TaskState.Name(response.task.status.state))
            elif response.HasField("status_update"):
                print("  now", TaskState.Name(response.status_update.status.state))
            elif response.HasField("artifact_update"):
                print("  answer:", get_artifact_text(response.artifact_update.artifact))
        task = await client.get_task(GetTaskRequest(id=task_id))
        print("GetTask:", TaskState.Name(task.status.state), "| contextId (the thread):", task.context_id)
        run = (await http.get(f"{url}/v1/runs/{task_id}")).json()
        print("the same run over /v1:", run["status"], run["output"])


if __name__ == "__main__":
    with serving(create_app(agent, a2a=True)) as base:
        asyncio.run(main(base))
