"""`eudaimon serve`: the HTTP API and web inspector for the agents named, on one store.

FastAPI and uvicorn are imported only when the command runs, so `eudaimon` works without the
`server` extra and says how to get it. The CLI's helpers are imported when the command is
registered, not with this module: importing this module first must not import the CLI (which
imports this module to register the command).
"""

import ipaddress
import os
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer
from rich.text import Text

from eudaimon.core.errors import ConfigurationError, MissingExtra
from eudaimon.server.webhook_events import DEFAULT_EVENTS, EVENT_NAMES

if TYPE_CHECKING:
    from fastapi import FastAPI
    from rich.console import Console

    from eudaimon.agent import Agent
    from eudaimon.server import ApiKeys
    from eudaimon.server.webhooks import Webhook
    from eudaimon.stores.base import EventStore

WebhookOption = Annotated[
    str | None, typer.Option("--webhook", help="A receiver URL told of runs' events (Standard Webhooks).")
]
WebhookSecretEnvOption = Annotated[
    str | None,
    typer.Option("--webhook-secret-env", help="The environment variable holding the webhook signing secret."),
]
DEFAULT_WEBHOOK_EVENTS = ",".join(sorted(DEFAULT_EVENTS))
WebhookEventsOption = Annotated[
    str,
    typer.Option(
        "--webhook-events",
        help=f"The events to send, split by commas, of: {', '.join(EVENT_NAMES)}. "
        f"Default: {', '.join(sorted(DEFAULT_EVENTS))}.",
        show_default=False,
    ),
]
WebhookKeepDaysOption = Annotated[
    float, typer.Option("--webhook-keep-days", help="Days a delivered webhook delivery is kept before it is pruned.")
]
WebhookKeepFailedDaysOption = Annotated[
    float,
    typer.Option(
        "--webhook-keep-failed-days", help="Days a webhook delivery that failed for good is kept before pruning."
    ),
]
"""The `--webhook` options, which `serve` and `mcp` share."""

LOOPBACK_NAMES = {"localhost", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def register(app: typer.Typer) -> None:
    """Add `serve` to the `eudaimon` command."""
    from eudaimon.cli._common import (
        StoreOption,
        environ,
        fail,
        load_agent,
        make_default_directory,
        out,
        resolve_store_url,
        run_async,
        shown_url,
    )

    def serve(
        agent: Annotated[
            list[str], typer.Option("--agent", help="An agent to serve, as MODULE:ATTR (repeat for several).")
        ],
        store: StoreOption = None,
        host: Annotated[
            str, typer.Option(help="The address to bind; without API keys only loopback is allowed.")
        ] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="The TCP port.")] = 8000,
        a2a: Annotated[
            bool, typer.Option("--a2a", help="Publish each agent over A2A at /a2a/AGENT (extra `a2a`).")
        ] = False,
        a2a_description: Annotated[
            str | None,
            typer.Option(
                "--a2a-description",
                help="What the agents do, for their A2A Agent Cards (default: the agent's `description=`; "
                "the system prompt is never published).",
            ),
        ] = None,
        ag_ui: Annotated[
            bool, typer.Option("--ag-ui", help="Answer AG-UI runs at /v1/agents/AGENT/ag-ui (extra `ag-ui`).")
        ] = False,
        mcp: Annotated[
            bool, typer.Option("--mcp", help="Serve each agent as a tool of an MCP server at /mcp (extra `mcp`).")
        ] = False,
        api_key_file: Annotated[
            str | None,
            typer.Option("--api-key-file", help="A file of `KEY PRINCIPAL ROLE` lines (roles: viewer, operator)."),
        ] = None,
        insecure: Annotated[
            bool, typer.Option("--insecure", help="Allow binding a non-loopback address without API keys.")
        ] = False,
        log_level: Annotated[str, typer.Option(help="uvicorn's log level.")] = "info",
        allowed_host: Annotated[
            list[str] | None,
            typer.Option(
                "--allowed-host",
                help="A host name clients use to reach the server, besides loopback ones and --host (repeatable; '*': any).",
            ),
        ] = None,
        allowed_origin: Annotated[
            list[str] | None,
            typer.Option(
                "--allowed-origin",
                help="A web front end's origin, scheme://host[:port], that may call the API from a browser (CORS; repeatable).",
            ),
        ] = None,
        shared_thread: Annotated[
            list[str] | None,
            typer.Option(
                "--shared-thread",
                help="Serve AGENT (by name) as one shared conversation: starts without thread_id join it (repeat).",
            ),
        ] = None,
        webhook: WebhookOption = None,
        webhook_secret_env: WebhookSecretEnvOption = None,
        webhook_events: WebhookEventsOption = DEFAULT_WEBHOOK_EVENTS,
        webhook_keep_days: WebhookKeepDaysOption = 7.0,
        webhook_keep_failed_days: WebhookKeepFailedDaysOption = 30.0,
        catch_up: Annotated[
            str,
            typer.Option("--catch-up", help="Schedule slots missed while no server was up: run the latest, or none."),
        ] = "latest",
        timer_interval: Annotated[
            float,
            typer.Option(
                "--timer-interval",
                help="Seconds between the sweeps that fire approval deadlines, durable waits and schedule "
                "slots (0.05 to 3600): the most each fires late.",
            ),
        ] = 1.0,
    ) -> None:
        """Serve the HTTP API (/v1, /openapi.json) and the web inspector (/) for the agents given.

        API keys come from $EUDAIMON_API_KEYS ("KEY:PRINCIPAL:ROLE,…") and --api-key-file.
        """
        try:
            import uvicorn

            from eudaimon.server import create_app
            from eudaimon.server.timers import checked_interval
        except ImportError as exc:
            fail(str(MissingExtra("`eudaimon serve`", "server", exc.name)))
        console = out()
        url = resolve_store_url(store)
        make_default_directory(url)
        try:
            keys = api_keys(api_key_file, host, insecure)
            if keys is None:
                console.print(
                    Text("no API keys: every request is an operator; ", style="yellow")
                    + Text("serving loopback only" if is_loopback(host) else f"serving {host} because of --insecure")
                )
            if catch_up not in ("latest", "none"):
                raise ConfigurationError("--catch-up is `latest` or `none`")
            checked_interval("--timer-interval", timer_interval)
            hook = webhook_of(webhook, webhook_secret_env, webhook_events, webhook_keep_days, webhook_keep_failed_days)
            with environ("EUDAIMON_STORE", url):
                agents = [load_agent(target) for target in agent]
            describe(agents, a2a_description, a2a=a2a)
            served = journal_of(agents, url)
            application = create_app(
                agents,
                served,
                auth=keys,
                allowed_hosts=[host, *(allowed_host or [])],
                allowed_origins=allowed_origin or (),
                shared_threads=shared_thread or (),
                webhook=hook,
                catch_up="none" if catch_up == "none" else "latest",
                timer_interval_s=timer_interval,
                schedule_interval_s=timer_interval,
                a2a=a2a,
                ag_ui=ag_ui,
                mcp=mcp,
            )
        except (ConfigurationError, MissingExtra) as exc:
            fail(str(exc))
        # Before the banner: a store that cannot be opened (a missing directory, a database that
        # refuses) is one clear error now, not a traceback from every sweep, every second.
        run_async(served.list_runs(limit=1))
        names = [a.name for a in agents]
        served_by = Protocols(a2a=a2a, ag_ui=ag_ui, mcp=mcp)
        announce(console, names, shown_url(url), host=host, port=port, named=bool(allowed_host), protocols=served_by)
        run(uvicorn, application, host=host, port=port, log_level=log_level)

    app.command("serve")(serve)


def api_keys(api_key_file: str | None, host: str, insecure: bool) -> "ApiKeys | None":
    """The keys of `$EUDAIMON_API_KEYS` and `--api-key-file`; None when there are none, which
    only a loopback `host` (or `--insecure`) allows."""
    from eudaimon.server import ApiKeys

    sources = []
    if os.environ.get("EUDAIMON_API_KEYS", "").strip():
        sources.append(ApiKeys.parse(os.environ["EUDAIMON_API_KEYS"]))
    if api_key_file is not None:
        sources.append(ApiKeys.from_file(api_key_file))
    keys = ApiKeys.merged(sources)
    if keys is None and not is_loopback(host) and not insecure:
        raise ConfigurationError(
            f"refusing to serve {host} without API keys: anyone who reaches it could approve and cancel runs. "
            "Set EUDAIMON_API_KEYS or --api-key-file, bind 127.0.0.1, or pass --insecure"
        )
    return keys


def webhook_of(
    url: str | None, secret_env: str | None, events: str, keep_days: float, keep_failed_days: float
) -> "Webhook | None":
    """The `--webhook` receiver, signing with the secret in the environment variable `secret_env`;
    its delivery records kept `keep_days` once delivered, `keep_failed_days` once given up on."""
    if url is None:
        return None
    from eudaimon.server.webhooks import Webhook

    for flag, days in (("--webhook-keep-days", keep_days), ("--webhook-keep-failed-days", keep_failed_days)):
        if not 0 < days < float("inf"):
            raise ConfigurationError(f"{flag} must be a positive number of days, got {days:g}")
    if not secret_env or not os.environ.get(secret_env, "").strip():
        raise ConfigurationError(
            "--webhook needs --webhook-secret-env naming a set environment variable with the signing secret"
        )
    return Webhook(
        url,
        os.environ[secret_env].strip(),
        events=Webhook.parse_events(events),
        keep_delivered_s=keep_days * 86400,
        keep_failed_s=keep_failed_days * 86400,
    )


def describe(agents: "list[Agent[Any, Any]]", description: str | None, *, a2a: bool) -> None:
    """Give the agents the `--a2a-description` of their Agent Cards."""
    if description is None:
        return
    if not a2a:
        raise ConfigurationError("--a2a-description describes the A2A Agent Cards: pass --a2a too, or leave it out")
    for agent in agents:
        agent.description = description


def journal_of(agents: "list[Agent[Any, Any]]", url: str) -> "EventStore":
    """The store served: the agents' own when they share one, else the one at `url`."""
    shared = {id(a.store): a.store for a in agents}
    if len(shared) == 1:
        return next(iter(shared.values()))
    from eudaimon.stores.url import open_store

    return open_store(url)


class Protocols(NamedTuple):
    """The protocols served besides the server's own API (`--a2a`, `--ag-ui`, `--mcp`)."""

    a2a: bool = False
    ag_ui: bool = False
    mcp: bool = False


def announce(
    console: "Console", agents: list[str], store: str, *, host: str, port: int, named: bool, protocols: Protocols
) -> None:
    """The start banner: what is served where, every URL, and a warning when only loopback names
    and `host` reach a non-loopback server (`named`: `--allowed-host` was given)."""
    where = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    console.print(Text(f"eudaimon serves {', '.join(agents)} on {where}  (store {store})", style="bold"))
    for line in served_urls(where, agents, protocols):  # never wrapped: a URL is copied whole
        console.print(Text(line, style="cyan"), soft_wrap=True)
    if not is_loopback(host) and not named:
        console.print(
            Text(f"only requests for {host} or a loopback name are served; add --allowed-host NAME", style="yellow")
        )


def run(uvicorn: ModuleType, application: "FastAPI", *, host: str, port: int, log_level: str) -> None:
    """Serve `application` with uvicorn until stopped, its log lines masked and escaped."""
    from uvicorn.config import LOGGING_CONFIG

    from eudaimon.cli._collector import freeze_start_up
    from eudaimon.server.logs import log_config

    freeze_start_up()  # the app and the agents are built: no full collection walks them again
    uvicorn.run(
        application,
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=5,
        log_config=log_config(LOGGING_CONFIG),  # credentials masked, control characters escaped
    )


def served_urls(where: str, agents: list[str], protocols: Protocols = Protocols()) -> list[str]:
    """The start banner's lines after the first: every URL the server answers, one concern a
    line, so a person (or a script) can copy the one they need."""
    lines = [
        f"inspector: {where}/   API: {where}/v1   OpenAPI: {where}/openapi.json",
        *(f"runs of {name}: POST {where}/v1/agents/{name}/runs" for name in agents),
    ]
    if protocols.a2a:
        lines += [
            f"A2A {name}: {where}/a2a/{name}   card: {where}/a2a/{name}/.well-known/agent-card.json" for name in agents
        ]
    if protocols.ag_ui:
        lines += [f"AG-UI {name}: POST {where}/v1/agents/{name}/ag-ui" for name in agents]
    if protocols.mcp:
        lines.append(f"MCP (Streamable HTTP), a tool per agent: {where}/mcp")
    return lines
