"""`eudaimon mcp`: serve agents as MCP tools on stdin and stdout (`eudaimon.mcp._stdio`).

stdout belongs to the protocol: this command prints nothing there, and says what went wrong on
stderr. The server and MCP packages are imported only when the command runs.
"""

from __future__ import annotations

from typing import Annotated

import typer

from eudaimon.cli._common import (
    StoreOption,
    environ,
    fail,
    load_agent,
    make_default_directory,
    resolve_store_url,
    run_async,
)
from eudaimon.cli._serve import (
    DEFAULT_WEBHOOK_EVENTS,
    WebhookEventsOption,
    WebhookKeepDaysOption,
    WebhookKeepFailedDaysOption,
    WebhookOption,
    WebhookSecretEnvOption,
)
from eudaimon.core.errors import ConfigurationError, MissingExtra


def register(app: typer.Typer) -> None:
    """Add `mcp` to the `eudaimon` command."""
    app.command("mcp")(mcp)


def mcp(
    agent: Annotated[
        list[str], typer.Option("--agent", help="An agent to serve, as MODULE:ATTR (repeat for several).")
    ],
    store: StoreOption = None,
    webhook: WebhookOption = None,
    webhook_secret_env: WebhookSecretEnvOption = None,
    webhook_events: WebhookEventsOption = DEFAULT_WEBHOOK_EVENTS,
    webhook_keep_days: WebhookKeepDaysOption = 7.0,
    webhook_keep_failed_days: WebhookKeepFailedDaysOption = 30.0,
) -> None:
    """Serve the agents as tools of an MCP server on stdin and stdout, each call a durable run.

    For MCP clients that start their servers as processes: the command is `eudaimon mcp --agent
    MODULE:ATTR --store URL`, started in the directory that holds MODULE (or with it on
    PYTHONPATH), the store an absolute path. Runs are journaled in the store; deadlines, waits,
    schedules and recovery run while the process does; approvals are decided with `eudaimon
    runs approve` or a server on the same store, and --webhook tells a receiver that a run
    waits for them.
    """
    from eudaimon.cli._ops import login_name
    from eudaimon.cli._serve import journal_of, webhook_of

    try:
        from eudaimon.mcp._stdio import serve_stdio
        from eudaimon.server import create_app
    except ImportError as exc:
        fail(str(MissingExtra("`eudaimon mcp`", "server,mcp", exc.name)))
    url = resolve_store_url(store)
    make_default_directory(url)
    try:
        hook = webhook_of(webhook, webhook_secret_env, webhook_events, webhook_keep_days, webhook_keep_failed_days)
        with environ("EUDAIMON_STORE", url):
            agents = [load_agent(target) for target in agent]
        application = create_app(agents, journal_of(agents, url), webhook=hook)
    except (ConfigurationError, MissingExtra) as exc:
        fail(str(exc))
    run_async(serve_stdio(application, user=login_name() or "local"))  # a store it cannot open: one line, exit 1
