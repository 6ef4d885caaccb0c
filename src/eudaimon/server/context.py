"""What every route shares: the agents served, the store, the keys, and who is asking."""

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from eudaimon.agent import Agent
from eudaimon.server.auth import ANONYMOUS, ApiKeys, Principal
from eudaimon.server.driving import Runner
from eudaimon.server.hub import Hub
from eudaimon.server.lines import Lines
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
    delivers_webhooks: bool = False
    """Whether a webhook receiver is configured (`GET /v1/webhooks/deliveries` says so)."""
    lines: Lines = field(init=False)
    """The threads' queues of runs journaled and not started yet (`server.lines`)."""

    def __post_init__(self) -> None:
        self.lines = Lines(self.agents, self.store, self.runner)

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


def server_context(request: Request) -> ServerContext:
    """The context of the app that serves `request` (`create_app` keeps it as `app.state.eudaimon`):
    route modules are module-level routers and take it by dependency, as `Ctx`."""
    ctx: ServerContext = request.app.state.eudaimon
    return ctx


Ctx = Annotated[ServerContext, Depends(server_context)]


def principal_of(auth: ApiKeys | None, presented: str | None) -> Principal:
    """Who the presented key signs in as (anyone, as an operator, on a server without keys);
    401 when a key is needed and none, or an unknown one, was sent. Every entrance checks keys
    here: the `/v1` routes (`viewer`) and the A2A endpoints."""
    if auth is None:
        return ANONYMOUS
    if not presented:
        raise HTTPException(
            401,
            "an API key is required: send `Authorization: Bearer KEY` or `X-API-Key: KEY`",
            headers={"WWW-Authenticate": "Bearer"},
        )
    principal = auth.authenticate(presented)
    if principal is None:
        raise HTTPException(401, "the API key is not valid", headers={"WWW-Authenticate": "Bearer"})
    return principal


async def viewer(
    ctx: Ctx,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    header: Annotated[str | None, Depends(_header)],
) -> Principal:
    """FastAPI dependency: a reader, any valid key."""
    return principal_of(ctx.auth, bearer.credentials if bearer is not None else header)


async def operator(principal: Annotated[Principal, Depends(viewer)]) -> Principal:
    """FastAPI dependency: an operator's key, which may also start runs and decide for them."""
    if not principal.may_operate:
        raise HTTPException(
            403,
            f"{principal.name} is a {principal.role.value}; starting or deciding for runs needs an operator key",
        )
    return principal


Viewer = Annotated[Principal, Depends(viewer)]
Operator = Annotated[Principal, Depends(operator)]
