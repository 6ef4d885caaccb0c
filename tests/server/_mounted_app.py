"""An existing FastAPI application that mounts eudaimon's app at `/eudaimon` (served by uvicorn
from `test_create_app_mounts.py`), entering its lifespan so recovery and shutdown run."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator

import _server_agents
import uvicorn
from fastapi import FastAPI

from eudaimon import Agent
from eudaimon.server import create_app
from eudaimon.stores import SqliteStore

store = SqliteStore(sys.argv[1])
agent = Agent(_server_agents.ticker.model, tools=[_server_agents.tick], name="ticker", store=store)
eudaimon_app = create_app([agent], store)


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    async with eudaimon_app.router.lifespan_context(eudaimon_app):
        yield


host = FastAPI(lifespan=lifespan)
host.mount("/eudaimon", eudaimon_app)


@host.get("/hello")
async def hello() -> dict[str, str]:
    return {"hello": "world"}


if __name__ == "__main__":
    uvicorn.run(host, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
