"""An ASGI app under a real uvicorn on a free 127.0.0.1 port, in a thread, for a test's block."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn

from support.ports import free_port


@asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """Serve `app` until the block ends (its lifespan run by uvicorn); yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise AssertionError("uvicorn exited before it served")
            await asyncio.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join, 30)
