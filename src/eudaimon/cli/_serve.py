"""`eudaimon serve`: the HTTP API and web inspector for the agents named, on one store.

FastAPI and uvicorn are imported only when the command runs, so `eudaimon` works without the
`server` extra and says how to get it. The CLI's helpers are imported when the command is
registered, not with this module: importing this module first must not import the CLI (which
imports this module to register the command).
"""

import ipaddress
import os
from typing import Annotated

import typer
from rich.text import Text

from eudaimon.core.errors import ConfigurationError, MissingExtra

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
    from eudaimon.cli._common import StoreOption, environ, fail, load_agent, out, resolve_store_url, shown_url

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
        webhook: Annotated[
            str | None, typer.Option("--webhook", help="A receiver URL told of runs' events (Standard Webhooks).")
        ] = None,
        webhook_secret_env: Annotated[
            str | None,
            typer.Option("--webhook-secret-env", help="The environment variable holding the webhook signing secret."),
        ] = None,
        webhook_events: Annotated[
            str,
            typer.Option("--webhook-events", help="Comma-separated events to send, e.g. awaiting_approval,failed."),
        ] = "awaiting_approval,awaiting_reconciliation,approval_timed_out,failed",
        webhook_keep_days: Annotated[
            float,
            typer.Option("--webhook-keep-days", help="Days a delivered webhook delivery is kept before it is pruned."),
        ] = 7.0,
        webhook_keep_failed_days: Annotated[
            float,
            typer.Option(
                "--webhook-keep-failed-days",
                help="Days a webhook delivery that failed for good is kept before pruning.",
            ),
        ] = 30.0,
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

            from eudaimon.server import ApiKeys, create_app
        except ImportError as exc:
            fail(str(MissingExtra("`eudaimon serve`", "server", exc.name)))
        try:
            sources = []
            if os.environ.get("EUDAIMON_API_KEYS", "").strip():
                sources.append(ApiKeys.parse(os.environ["EUDAIMON_API_KEYS"]))
            if api_key_file is not None:
                sources.append(ApiKeys.from_file(api_key_file))
            keys = ApiKeys.merged(sources)
        except ConfigurationError as exc:
            fail(str(exc))
        console = out()
        if keys is None:
            if not is_loopback(host) and not insecure:
                fail(
                    f"refusing to serve {host} without API keys: anyone who reaches it could approve and cancel runs. "
                    "Set EUDAIMON_API_KEYS or --api-key-file, bind 127.0.0.1, or pass --insecure"
                )
            console.print(
                Text("no API keys: every request is an operator; ", style="yellow")
                + Text("serving loopback only" if is_loopback(host) else f"serving {host} because of --insecure")
            )
        if catch_up not in ("latest", "none"):
            fail("--catch-up is `latest` or `none`")
        from eudaimon.server.timers import checked_interval

        try:
            checked_interval("--timer-interval", timer_interval)
        except ConfigurationError as exc:
            fail(str(exc))
        hook = None
        if webhook is not None:
            from eudaimon.server.webhooks import Webhook

            for flag, days in (
                ("--webhook-keep-days", webhook_keep_days),
                ("--webhook-keep-failed-days", webhook_keep_failed_days),
            ):
                if not 0 < days < float("inf"):
                    fail(f"{flag} must be a positive number of days, got {days:g}")
            if not webhook_secret_env or not os.environ.get(webhook_secret_env, "").strip():
                fail("--webhook needs --webhook-secret-env naming a set environment variable with the signing secret")
            try:
                hook = Webhook(
                    webhook,
                    os.environ[webhook_secret_env].strip(),
                    events=Webhook.parse_events(webhook_events),
                    keep_delivered_s=webhook_keep_days * 86400,
                    keep_failed_s=webhook_keep_failed_days * 86400,
                )
            except (ConfigurationError, MissingExtra) as exc:
                fail(str(exc))
        url = resolve_store_url(store)
        with environ("EUDAIMON_STORE", url):
            agents = [load_agent(target) for target in agent]
        if a2a_description is not None:
            if not a2a:
                fail("--a2a-description describes the A2A Agent Cards: pass --a2a too, or leave it out")
            for served in agents:
                served.description = a2a_description
        try:
            shared = {id(a.store): a.store for a in agents}
            journal = next(iter(shared.values())) if len(shared) == 1 else None
            if journal is None:
                from eudaimon.stores.url import open_store

                journal = open_store(url)
            application = create_app(
                agents,
                journal,
                auth=keys,
                allowed_hosts=[host, *(allowed_host or [])],
                allowed_origins=allowed_origin or (),
                shared_threads=shared_thread or (),
                webhook=hook,
                catch_up="none" if catch_up == "none" else "latest",
                timer_interval_s=timer_interval,
                schedule_interval_s=timer_interval,
            )
        except ConfigurationError as exc:
            fail(str(exc))
        try:
            from eudaimon.server.protocols import add_protocols

            add_protocols(application, a2a=a2a, ag_ui=ag_ui)
        except MissingExtra as exc:
            fail(str(exc))
        where = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
        names = ", ".join(a.name for a in agents)
        console.print(Text(f"eudaimon serves {names} on {where}  (store {shown_url(url)})", style="bold"))
        for line in served_urls(where, [a.name for a in agents], a2a=a2a, ag_ui=ag_ui):
            console.print(Text(line, style="cyan"))
        if not is_loopback(host) and not allowed_host:
            console.print(
                Text(f"only requests for {host} or a loopback name are served; add --allowed-host NAME", style="yellow")
            )
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

    app.command("serve")(serve)


def served_urls(where: str, agents: list[str], *, a2a: bool, ag_ui: bool) -> list[str]:
    """The start banner's lines after the first: every URL the server answers, one concern a
    line, so a person (or a script) can copy the one they need."""
    lines = [
        f"inspector: {where}/   API: {where}/v1   OpenAPI: {where}/openapi.json",
        *(f"runs of {name}: POST {where}/v1/agents/{name}/runs" for name in agents),
    ]
    if a2a:
        lines += [
            f"A2A {name}: {where}/a2a/{name}   card: {where}/a2a/{name}/.well-known/agent-card.json" for name in agents
        ]
    if ag_ui:
        lines += [f"AG-UI {name}: POST {where}/v1/agents/{name}/ag-ui" for name in agents]
    return lines
