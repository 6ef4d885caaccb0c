"""What every route shares: the agents served, the store, the keys, and who is asking."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, HTTPException
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from eudaimon.agent import Agent
from eudaimon.server.auth import ANONYMOUS, ApiKeys, Principal
from eudaimon.server.driving import Runner
from eudaimon.server.hub import Hub
from eudaimon.server.queueing import Lines
from eudaimon.stores.base import EventStore

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer KEY`.")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="An API key: `X-API-Key: KEY`.")


@dataclass(slots=True)
class ServerContext:
    agents: dict[str, Agent]
    store: EventStore
    auth: ApiKeys | None
    hub: Hub
    runner: Runner
    shared_threads: frozenset[str] = frozenset()
    """Agents served as one shared conversation: a start without `thread_id` joins it."""
    lines: Lines = field(init=False)
    """The threads' queues of runs journaled and not started yet (`server.queueing`)."""

    def __post_init__(self) -> None:
        self.lines = Lines(self)

    def agent(self, name: str) -> Agent:
        """The agent served as `name`; 404 naming those served otherwise."""
        agent = self.agents.get(name)
        if agent is None:
            served = ", ".join(sorted(self.agents)) or "none"
            raise HTTPException(404, f"this server serves no agent {name!r}; it serves: {served}")
        return agent

    def driver_of(self, agent_name: str) -> Agent:
        """The agent that may drive a run of `agent_name`; 409 when this server does not serve it."""
        agent = self.agents.get(agent_name)
        if agent is None:
            served = ", ".join(sorted(self.agents)) or "none"
            raise HTTPException(
                409, f"the run belongs to agent {agent_name!r}, which this server does not serve (it serves: {served})"
            )
        return agent


Guard = Callable[..., Awaitable[Principal]]


def guards(ctx: ServerContext) -> tuple[Guard, Guard]:
    """FastAPI dependencies for a reader (any valid key) and an operator (an operator's key)."""

    async def viewer(
        bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        header: Annotated[str | None, Depends(_header)],
    ) -> Principal:
        if ctx.auth is None:
            return ANONYMOUS
        presented = bearer.credentials if bearer is not None else header
        if not presented:
            raise HTTPException(
                401,
                "an API key is required: send `Authorization: Bearer KEY` or `X-API-Key: KEY`",
                headers={"WWW-Authenticate": "Bearer"},
            )
        principal = ctx.auth.authenticate(presented)
        if principal is None:
            raise HTTPException(401, "the API key is not valid", headers={"WWW-Authenticate": "Bearer"})
        return principal

    async def operator(principal: Annotated[Principal, Depends(viewer)]) -> Principal:
        if not principal.may_operate:
            raise HTTPException(
                403,
                f"{principal.name} is a {principal.role.value}; starting or deciding for runs needs an operator key",
            )
        return principal

    return viewer, operator
