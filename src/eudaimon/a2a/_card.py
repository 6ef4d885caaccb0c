"""An agent's A2A Agent Card: who it is, what it can do (a skill per tool), how to reach it and
which credentials the server asks for."""

from __future__ import annotations

from typing import Any

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, TransportProtocol

from eudaimon.agent import Agent

IDEMPOTENT_MESSAGES = "https://eudaimon.dev/a2a/idempotent-message-id"
"""The card extension saying: a message sent again with the same `messageId` (and no `taskId`)
answers with the task it started and never starts a second one. `eudaimon.a2a.A2AAgent` relies
on it to call a remote agent again after a crash without doing the work twice."""


def agent_card(agent: Agent[Any, Any], url: str, *, keys_required: bool) -> AgentCard:
    """The card of `agent`, served at `url` (its JSON-RPC endpoint).

    The card is public (discovery needs no key), so its description is `agent.description`, or
    a line naming the agent: never the system prompt, which holds the operator's instructions
    (and often what they would not publish). To publish it, pass it as `description=`.
    """
    description = agent.description
    skills = [
        AgentSkill(id=name, name=name, description=tool.description or name, tags=[tool.effect.value])
        for name, tool in sorted(agent.tools.items())
    ] or [AgentSkill(id=agent.name, name=agent.name, description=f"Ask the agent {agent.name!r}.", tags=["chat"])]
    card = AgentCard(
        name=agent.name,
        description=description or f"The eudaimon agent {agent.name!r}: every task is a durable run.",
        version="1",
        provider=AgentProvider(organization="eudaimon", url=url),
        supported_interfaces=[
            AgentInterface(
                url=url, protocol_binding=TransportProtocol.JSONRPC.value, protocol_version=PROTOCOL_VERSION_CURRENT
            )
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=False,
            extensions=[
                AgentExtension(
                    uri=IDEMPOTENT_MESSAGES,
                    description="A messageId sent again (without taskId) answers with the task it started.",
                )
            ],
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=skills,
    )
    if keys_required:
        card.security_schemes["bearer"].CopyFrom(
            SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="bearer", description="An eudaimon API key: `Authorization: Bearer KEY`."
                )
            )
        )
        card.security_schemes["apiKey"].CopyFrom(
            SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(
                    location="header", name="X-API-Key", description="An eudaimon API key: `X-API-Key: KEY`."
                )
            )
        )
        card.security_requirements.extend(
            [
                SecurityRequirement(schemes={"bearer": StringList()}),
                SecurityRequirement(schemes={"apiKey": StringList()}),
            ]
        )
    return card
