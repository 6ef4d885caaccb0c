"""`create_app` served by uvicorn directly (no `eudaimon serve`), at the info log level, so its
access log and the runtime's warnings are written with uvicorn's own logging configuration."""

from __future__ import annotations

import sys

import _hostile_agents
import uvicorn

from eudaimon import Agent
from eudaimon.server import create_app
from eudaimon.stores import SqliteStore

store = SqliteStore(sys.argv[1])
agent = Agent(_hostile_agents.glitcher.model, name="glitcher", store=store, memory=None)

if __name__ == "__main__":
    uvicorn.run(create_app([agent], store), host="127.0.0.1", port=int(sys.argv[2]), log_level="info")
