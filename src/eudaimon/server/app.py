"""`create_app`: the HTTP API, the event stream and the web inspector as one ASGI app."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence

from fastapi import FastAPI

from eudaimon.agent import Agent
from eudaimon.core.errors import ConfigurationError
from eudaimon.runtime.leases import lease_ttl_s
from eudaimon.server import daimon, decisions, pages, runs, stream, threads
from eudaimon.server.auth import ApiKeys
from eudaimon.server.context import ServerContext
from eudaimon.server.driving import Runner
from eudaimon.server.errors import MAX_BODY_BYTES, BodyLimit, install_error_handlers
from eudaimon.server.hub import Hub
from eudaimon.server.recovery import recover_forever
from eudaimon.stores.base import EventStore


def create_app(
    agents: Mapping[str, Agent] | Sequence[Agent] | Agent,
    store: EventStore | None = None,
    *,
    auth: ApiKeys | None = None,
    recover: bool = True,
    recovery_interval_s: float | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    shared_threads: Sequence[str] = (),
) -> FastAPI:
    """The eudaimon server as an ASGI app: `/v1` API, `/openapi.json`, the inspector at `/`.

    Mount it in an existing Starlette or FastAPI application with `app.mount("/eudaimon", …)`;
    since a mounted app's lifespan does not run, enter `app.router.lifespan_context(app)` in
    yours to get recovery and a clean shutdown.

    Args:
        agents: the agents served, by name (`agent.name` when given as a list or one agent).
            A run is driven by the agent whose name its journal records.
        store: the journal; by default the agents' store (they must then share one).
        auth: the API keys accepted; None serves everyone as an operator (bind to loopback).
        recover: resume, on start and every `recovery_interval_s` (default: the lease TTL),
            the runs of these agents that are running and whose driver is gone, and start their
            queued runs in turn (without it, only the runs started here are started).
        max_body_bytes: larger request bodies are refused with 413.
        shared_threads: names of agents served as one shared conversation: a start that names
            no `thread_id` joins the agent's default thread (`"{name}:default"`, one run at a
            time, every client seeing its history). Otherwise such a start gets a thread of its
            own, and such runs run side by side.

    Raises:
        ConfigurationError: no agent, two agents with one name, or agents on different stores
            with no `store` given.
    """
    served = _by_name(agents)
    if store is None:
        stores = {id(a.store): a.store for a in served.values()}
        if len(stores) != 1:
            raise ConfigurationError("the agents use different stores; pass the one to serve as `store=`")
        store = next(iter(stores.values()))
    hub = Hub(store)
    if isinstance(shared_threads, str):
        shared_threads = (shared_threads,)
    unknown = sorted(set(shared_threads) - set(served))
    if unknown:
        raise ConfigurationError(f"shared_threads names no agent served here: {', '.join(unknown)}")
    ctx = ServerContext(
        agents=served, store=store, auth=auth, hub=hub, runner=Runner(hub), shared_threads=frozenset(shared_threads)
    )
    interval = recovery_interval_s if recovery_interval_s is not None else lease_ttl_s()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        sweeper = asyncio.create_task(recover_forever(ctx, interval)) if recover else None
        try:
            yield
        finally:
            if sweeper is not None:
                sweeper.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sweeper
            await ctx.lines.aclose()
            await ctx.runner.aclose()

    app = FastAPI(
        title="eudaimon",
        summary="Durable agent runs: start them, follow their journals, approve and reconcile.",
        version="1",
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
    )
    install_error_handlers(app)
    for module in (runs, stream, decisions, threads, daimon):
        app.include_router(module.router(ctx))
    app.include_router(pages.router())
    app.mount("/inspector", pages.static_files(), name="inspector")
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    app.state.eudaimon = ctx
    return app


def _by_name(agents: Mapping[str, Agent] | Sequence[Agent] | Agent) -> dict[str, Agent]:
    if isinstance(agents, Agent):
        agents = [agents]
    if isinstance(agents, Mapping):
        served = dict(agents)
        for name, agent in served.items():
            if agent.name != name:
                raise ConfigurationError(
                    f"agent {agent.name!r} is served as {name!r}; its runs journal {agent.name!r}, so serve it by that name"
                )
    else:
        served = {}
        for agent in agents:
            if agent.name in served:
                raise ConfigurationError(f"two agents are named {agent.name!r}; give each a distinct `name=`")
            served[agent.name] = agent
    if not served:
        raise ConfigurationError("create_app needs at least one agent")
    return served
