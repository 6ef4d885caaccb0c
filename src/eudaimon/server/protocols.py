"""The registration point for the protocols the server can speak besides its own API (A2A, AG-UI, MCP).

The server does not import the protocol packages: each registers an installer here when its
routes module loads (`register_protocol`), and `add_protocols` loads the module a protocol's
name points to (`PROVIDERS`) the first time an app asks for it — so `eudaimon.a2a`,
`eudaimon.ag_ui` and `eudaimon.mcp` build on the server and the server never builds on them.
A protocol that keeps something running while the app serves (MCP's session manager) returns
its lifespan, which the app enters with its own.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from fastapi import FastAPI

from eudaimon._extras import needs
from eudaimon.server.context import ServerContext

Lifespan = Callable[[], AbstractAsyncContextManager[None]]
"""What a protocol runs while the app serves, entered inside the app's own lifespan."""
ProtocolInstaller = Callable[[FastAPI, ServerContext], Lifespan | None]
"""Adds a protocol's routes to an app `create_app` built, serving the agents in its context."""

PROVIDERS: dict[str, tuple[str, str]] = {
    "a2a": ("eudaimon.a2a._routes", "a2a"),
    "ag_ui": ("eudaimon.ag_ui._routes", "ag-ui"),
    "mcp": ("eudaimon.mcp._routes", "mcp"),
}
"""Protocol -> (the module that registers its installer when loaded, the extra that module needs)."""

_installers: dict[str, ProtocolInstaller] = {}


def register_protocol(name: str, installer: ProtocolInstaller) -> None:
    """Make `add_protocols(app, **{name: True})` call `installer`; a protocol's routes module calls it."""
    _installers[name] = installer


def _installer(name: str) -> ProtocolInstaller:
    if name not in _installers:
        module, extra = PROVIDERS[name]
        with needs(extra, f"create_app({name}=True)"):
            importlib.import_module(module)
    return _installers[name]


def add_protocols(app: FastAPI, *, a2a: bool = False, ag_ui: bool = False, mcp: bool = False) -> list[Lifespan]:
    """Add the A2A endpoints, the AG-UI endpoint and the MCP endpoint to an app `create_app`
    built; each needs its extra (`MissingExtra` names it). Returns the lifespans to enter."""
    ctx: ServerContext = app.state.eudaimon
    lifespans: list[Lifespan] = []
    for name, wanted in (("a2a", a2a), ("ag_ui", ag_ui), ("mcp", mcp)):
        if wanted:
            lifespan = _installer(name)(app, ctx)
            if lifespan is not None:
                lifespans.append(lifespan)
    return lifespans
