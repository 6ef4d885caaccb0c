"""The eudaimon server: an HTTP API over the journal, its events as a resumable stream, and a
web inspector where people follow runs, approve calls and settle unknown outcomes.

Needs the `server` extra: `pip install -e '.[server]'`. Run it with `eudaimon serve`, or
build the ASGI app with `create_app` and serve or mount it yourself. Names are imported on
first use, so the CLI can register `serve` without FastAPI installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from eudaimon._extras import needs

if TYPE_CHECKING:
    from eudaimon.server.app import create_app
    from eudaimon.server.auth import ApiKeys, Principal, Role
    from eudaimon.server.webhooks import Webhook

__all__ = ["ApiKeys", "Principal", "Role", "Webhook", "create_app"]

_HOMES = {"create_app": "eudaimon.server.app", "ApiKeys": "eudaimon.server.auth", "Principal": "eudaimon.server.auth"}
_HOMES["Role"] = "eudaimon.server.auth"
_HOMES["Webhook"] = "eudaimon.server.webhooks"


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'eudaimon.server' has no attribute {name!r}")
    with needs("server", f"eudaimon.server.{name}"):
        value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, which are imported on first use (so a plain `dir()` would miss them)."""
    return sorted(__all__)
