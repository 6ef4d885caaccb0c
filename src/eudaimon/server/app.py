"""`create_app`: the HTTP API, the event stream and the web inspector as one ASGI app."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from eudaimon.agent import Agent
from eudaimon.core.errors import ConfigurationError
from eudaimon.runtime.process.leases import lease_ttl_s
from eudaimon.server import (
    daimon,
    dashboard,
    decisions,
    deliveries,
    effects,
    inbox,
    lineage,
    pages,
    replays,
    runs,
    schedules,
    stream,
    threads,
    whoami,
)
from eudaimon.server.auth import ApiKeys
from eudaimon.server.context import ServerContext
from eudaimon.server.docs_page import install as install_docs
from eudaimon.server.driving import Runner
from eudaimon.server.errors import MAX_BODY_BYTES, BodyLimit, install_error_handlers
from eudaimon.server.hub import Hub
from eudaimon.server.ids import VisibleNames
from eudaimon.server.logs import install as install_safe_logs
from eudaimon.server.origin import CORS_HEADERS, CORS_METHODS, BrowserGuard, document_json_bodies
from eudaimon.server.origin import allowed_origins as allowed_origins_of
from eudaimon.server.protocols import add_protocols
from eudaimon.server.recovery import recover_forever
from eudaimon.server.scheduling import CatchUp, fire_forever
from eudaimon.server.timers import TIMER_INTERVAL_S, checked_interval
from eudaimon.server.timers import fire_forever as fire_timers_forever
from eudaimon.server.webhooks import Deliverer, Webhook
from eudaimon.stores.base import EventStore
from eudaimon.stores.records import RecordStore


def create_app(
    agents: Mapping[str, Agent] | Sequence[Agent] | Agent,
    store: EventStore | None = None,
    *,
    a2a: bool = False,
    ag_ui: bool = False,
    mcp: bool = False,
    auth: ApiKeys | None = None,
    recover: bool = True,
    recovery_interval_s: float | None = None,
    timer_interval_s: float = TIMER_INTERVAL_S,
    max_body_bytes: int = MAX_BODY_BYTES,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    shared_threads: Sequence[str] = (),
    webhook: Webhook | None = None,
    webhook_interval_s: float = 1.0,
    fire_schedules: bool = True,
    schedule_interval_s: float = 1.0,
    catch_up: CatchUp = "latest",
    schedule_grace_s: float = 60.0,
) -> FastAPI:
    """The eudaimon server as an ASGI app: `/v1` API, `/openapi.json`, the inspector at `/`.

    Mount it in an existing Starlette or FastAPI application with `app.mount("/eudaimon", …)`;
    since a mounted app's lifespan does not run, enter `app.router.lifespan_context(app)` in
    yours to get recovery and a clean shutdown.

    Args:
        agents: the agents served, by name (`agent.name` when given as a list or one agent).
            A run is driven by the agent whose name its journal records.
        store: the journal; by default the agents' store (they must then share one).
        a2a: publish each agent over A2A (`/a2a/{agent}`, extra `a2a`), its tasks durable runs.
        ag_ui: answer AG-UI runs at `POST /v1/agents/{agent}/ag-ui` (extra `ag-ui`).
        mcp: serve each agent as a tool of an MCP server at `/mcp` (Streamable HTTP, extra
            `mcp`), each call a durable run (`eudaimon.mcp`).
        auth: the API keys accepted; None serves everyone as an operator (bind to loopback).
        recover: resume, on start and every `recovery_interval_s` (default: the lease TTL),
            the runs of these agents that are running and whose driver is gone, and start their
            queued runs in turn (without it, only the runs started here are started).
        timer_interval_s: with `recover`, how often the server fires the approval deadlines and
            durable waits (`RetryAfter`) of any run in the store that fell due (`server.timers`);
            0.05 to 3600 seconds (`eudaimon serve --timer-interval`).
        max_body_bytes: larger request bodies are refused with 413.
        allowed_hosts: the host names served besides loopback ones (`"*"`: any); a request for
            another `Host` is refused (421). Requests that change something are refused unless
            they come from this server's own origin and are sent as JSON (see `server.origin`).
        allowed_origins: web front ends on other origins, each exactly `scheme://host[:port]`
            (e.g. a React dev server, `http://localhost:3000`): their requests pass the origin
            check and are answered with CORS; other origins stay refused and get no CORS
            header. `"*"` (any origin) only with `auth`: without keys every page could act.
        shared_threads: names of agents served as one shared conversation: a start that names
            no `thread_id` joins the agent's default thread (`"{name}:default"`, one run at a
            time, every client seeing its history). Otherwise such a start gets a thread of its
            own, and such runs run side by side.
        webhook: tell this receiver about the runs' events (`server.webhooks`), from the outbox
            in the store, scanned and retried every `webhook_interval_s`.
        fire_schedules: start the runs of the store's schedules for these agents every
            `schedule_interval_s` (`server.scheduling`); a slot older than `schedule_grace_s`
            when found was missed while no server was up: `catch_up="latest"` runs the latest
            such slot once, `"none"` skips them. 0.05 to 3600 seconds, like `timer_interval_s`.

    Raises:
        ConfigurationError: no agent, two agents with one name, agents on different stores
            with no `store` given, an allowed origin that is not an origin (or `"*"` without keys),
            or a timer or schedule interval out of range.
    """
    checked_interval("timer_interval_s", timer_interval_s)
    checked_interval("schedule_interval_s", schedule_interval_s)
    served = _by_name(agents)
    origins = allowed_origins_of(allowed_origins, keyed=auth is not None)
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
        agents=served,
        store=store,
        auth=auth,
        hub=hub,
        runner=Runner(hub),
        shared_threads=frozenset(shared_threads),
        delivers_webhooks=webhook is not None,
    )
    interval = recovery_interval_s if recovery_interval_s is not None else lease_ttl_s()
    deliverer = Deliverer(store, webhook) if webhook is not None else None

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # A store that cannot be opened fails the start, once, with its own error; the sweeps
        # below retry, which suits a database restarting under a running server, not this.
        await store.list_runs(limit=1)
        tasks: list[asyncio.Task[None]] = []
        if recover:
            tasks.append(asyncio.create_task(recover_forever(ctx, interval)))
            tasks.append(asyncio.create_task(fire_timers_forever(ctx, timer_interval_s)))
        if fire_schedules and isinstance(store, RecordStore):
            firing = fire_forever(ctx, interval_s=schedule_interval_s, catch_up=catch_up, grace_s=schedule_grace_s)
            tasks.append(asyncio.create_task(firing))
        if deliverer is not None:
            tasks.append(asyncio.create_task(deliverer.run_forever(webhook_interval_s)))
        restore_logs = install_safe_logs()  # no credential or control character reaches a log line
        try:
            async with contextlib.AsyncExitStack() as protocols:
                for running in protocol_lifespans:
                    await protocols.enter_async_context(running())
                yield
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await ctx.lines.aclose()
            await ctx.runner.aclose()
            restore_logs()

    app = FastAPI(
        title="eudaimon",
        summary="Durable agent runs: start them, follow their journals, approve and reconcile.",
        version="1",
        lifespan=lifespan,
        docs_url=None,  # /docs is served from installed files (docs_page), not from a CDN
        redoc_url=None,
    )
    app.state.eudaimon = ctx  # what the routes' `Ctx` dependency reads (`server.context`)
    install_error_handlers(app)
    routes = (runs, stream, decisions, threads, daimon, dashboard, whoami, lineage, effects, schedules, deliveries)
    for module in (*routes, replays, inbox):  # module-level routers; each takes `ctx` as a dependency (`Ctx`)
        app.include_router(module.router)
    app.include_router(pages.router())
    install_docs(app)
    app.mount("/inspector", pages.static_files(), name="inspector")
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    app.add_middleware(VisibleNames)
    if origins:  # inside the guard: the Host rule still comes first, refused origins get no CORS header
        app.add_middleware(
            CORSMiddleware, allow_origins=origins, allow_methods=CORS_METHODS, allow_headers=CORS_HEADERS
        )
    app.add_middleware(BrowserGuard, allowed_hosts=tuple(allowed_hosts), allowed_origins=origins)
    document_json_bodies(app)
    protocol_lifespans = add_protocols(app, a2a=a2a, ag_ui=ag_ui, mcp=mcp)
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
