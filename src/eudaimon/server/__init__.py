"""The eudaimon server: an HTTP API over the journal, its events as a resumable stream, and a
web inspector where people follow runs, approve calls and settle unknown outcomes.

Needs the `server` extra: `pip install -e '.[server]'`. Run it with `eudaimon serve`, or
build the ASGI app with `create_app` and serve or mount it yourself. Names are imported on
first use, so the CLI can register `serve` without FastAPI installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eudaimon._lazy import lazy

# The public names, imported on first use; this block is their one list (`eudaimon._lazy`).
if TYPE_CHECKING:
    from eudaimon.server.app import create_app as create_app
    from eudaimon.server.auth import ApiKeys as ApiKeys
    from eudaimon.server.auth import Principal as Principal
    from eudaimon.server.auth import Role as Role
    from eudaimon.server.webhooks import Webhook as Webhook

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy(__name__, __file__, extra="server")
