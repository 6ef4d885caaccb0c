"""A real `eudaimon serve --a2a` of chosen agents, and the official `a2a-sdk` client to it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import httpx
from _server_support import HERE, Server
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types.a2a_pb2 import StreamResponse, TaskState


@dataclass
class A2AServer(Server):
    """`eudaimon serve --a2a` of `agents` (MODULE:ATTR under tests/server)."""

    agents: tuple[str, ...] = ("_server_agents:payer", "_server_agents:ticker")
    args: tuple[str, ...] = ("--a2a",)

    def start(self, *, wait: bool = True) -> A2AServer:
        # this tree's eudaimon first, so the subprocess runs the code under test
        source = str(Path(__file__).resolve().parents[2] / "src")
        self.env = {**self.env, "PYTHONPATH": os.pathsep.join([str(HERE), source])}
        super().start(wait=wait)
        return self

    def command(self) -> list[str]:
        agents = [arg for target in self.agents for arg in ("--agent", target)]
        return [
            sys.executable, "-c", "from eudaimon.cli import app; app()", "serve",
            "--store", f"sqlite:///{self.db}", *agents, "--port", str(self.port), "--log-level", "warning", *self.args,
        ]  # fmt: skip

    def agent_url(self, name: str) -> str:
        return f"{self.url}/a2a/{name}"


async def a2a_client(http: httpx.AsyncClient, url: str, *, streaming: bool = True) -> Client:
    """The SDK's client for the agent at `url`, from its card, as any A2A caller builds it."""
    card = await A2ACardResolver(http, url).get_agent_card()
    return ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)


def state_name(state: int) -> str:
    return TaskState.Name(state).removeprefix("TASK_STATE_").lower().replace("_", "-")


def states_of(responses: Iterable[StreamResponse]) -> list[str]:
    """The task states a stream showed, in order (its first Task, then each status update)."""
    shown: list[str] = []
    for response in responses:
        if response.HasField("task"):
            shown.append(state_name(response.task.status.state))
        elif response.HasField("status_update"):
            shown.append(state_name(response.status_update.status.state))
    return shown
