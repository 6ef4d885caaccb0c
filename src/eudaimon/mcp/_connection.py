"""One connection to an MCP server, held open across calls and re-opened when it drops.

The SDK's `Client` is an async context manager whose transport (a subprocess, an HTTP client)
lives in task groups bound to the task that entered it. So one owner task enters it and holds
it until closed; calls come from any task of the same event loop. When the connection fails
(the server exited, the HTTP server restarted) the owner is let go and the next request opens
a fresh connection: a request that was in flight when it failed is reported as lost, never
sent again from here, since whether the server acted on it is unknown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import mcp_types
from mcp import Client
from mcp.shared.exceptions import MCPError

from eudaimon.mcp._errors import MCPConnectionError, MCPConnectionLost

_TRANSPORT_CODES = frozenset({mcp_types.CONNECTION_CLOSED, mcp_types.REQUEST_TIMEOUT})
"""MCP error codes that mean the request got no answer (rather than an answer that is an error)."""


def describe(exc: BaseException) -> str:
    """The innermost causes of a connection failure, for an error message: task groups wrap them."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(dict.fromkeys(describe(e) for e in exc.exceptions))
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


def is_transport_failure(exc: BaseException) -> bool:
    """True when `exc` says the request got no answer at all."""
    if isinstance(exc, MCPError):
        return exc.error.code in _TRANSPORT_CODES
    return isinstance(exc, OSError | EOFError | BaseExceptionGroup | asyncio.CancelledError)


class Connection:
    """A lazily opened, re-openable `mcp.Client` for one server.

    Args:
        label: how errors name the server (`stdio:python server.py`, a URL without secrets).
        make_client: builds a fresh, unentered `Client` for each (re)connection.
        timeout_s: how long a request may wait for its answer.
    """

    def __init__(self, label: str, make_client: Callable[[], Client], *, timeout_s: float = 60.0) -> None:
        self.label = label
        self._make_client = make_client
        self.timeout_s = timeout_s
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._winding: set[asyncio.Task[None]] = set()
        """Owners of connections let go (a reconnect), still closing theirs: a stdio server's
        process is waited for there, so `aclose` waits for them too."""
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._opening: asyncio.Future[Client] | None = None
        self.connects = 0
        """How many times a connection was opened (1 unless the server dropped it)."""

    async def client(self) -> Client:
        """The open client, connecting first when there is none (or it broke, or belongs to an
        event loop that has ended, as after `prompt_sync`)."""
        loop = asyncio.get_running_loop()
        if self._client is not None and self._loop is loop and self._owner is not None and not self._owner.done():
            return self._client
        if self._opening is not None and self._loop is loop and not self._opening.done():
            return await asyncio.shield(self._opening)
        self._forget()
        self._loop = loop
        opened: asyncio.Future[Client] = loop.create_future()
        self._opening = opened
        self._stop = asyncio.Event()
        self._owner = loop.create_task(self._own(opened, self._stop), name=f"mcp {self.label}")
        try:
            client = await asyncio.wait_for(asyncio.shield(opened), self.timeout_s)
        except TimeoutError:
            self._forget()
            raise MCPConnectionError(self.label, f"no answer within {self.timeout_s:g} s") from None
        except MCPConnectionError:
            self._forget()
            raise
        self.connects += 1
        return client

    async def _own(self, opened: asyncio.Future[Client], stop: asyncio.Event) -> None:
        try:
            async with self._make_client() as client:
                self._client = client
                opened.set_result(client)
                await stop.wait()
        except BaseException as exc:  # the owner reports every failure to whoever waits; nothing escapes
            if not opened.done():
                opened.set_exception(MCPConnectionError(self.label, _hint(exc)))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if self._owner is asyncio.current_task():
                self._client = None

    def _forget(self) -> None:
        """Let the current connection go (its owner task winds it down)."""
        if self._stop is not None:
            self._stop.set()
        if self._owner is not None and not self._owner.done():
            self._winding.add(self._owner)
            self._owner.add_done_callback(self._winding.discard)
        self._client, self._owner, self._stop, self._opening = None, None, None, None

    async def request(self, send: Callable[[Client], Any], *, sent_once: bool) -> Any:
        """Run `send(client)`; on a connection failure, reconnect.

        With `sent_once=False` (a request that may be repeated: listing tools, calling a tool
        that may run twice) it is sent once more on the new connection. Otherwise the failure
        is raised as `MCPConnectionLost`: the next request reconnects, this one is not repeated.
        """
        for attempt in (1, 2):
            client = await self.client()
            try:
                return await asyncio.wait_for(send(client), self.timeout_s)
            except MCPError as exc:
                if exc.error.code not in _TRANSPORT_CODES:
                    raise  # the server answered, with an error
                failure: BaseException = exc
            except (TimeoutError, OSError, EOFError, BaseExceptionGroup) as exc:
                failure = exc
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # our caller cancelled us
                failure = ConnectionResetError("the transport was torn down mid-request")
            self._forget()
            if sent_once or attempt == 2:
                raise MCPConnectionLost(f"the connection to MCP server {self.label} failed: {describe(failure)}")
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        """Close the connection and wait (up to 10 s, then cancel) for every connection let go
        before it to be closed too: a reconnect's old stdio server is otherwise still being
        waited for when the caller's event loop ends, and its process is left behind."""
        self._forget()
        loop = asyncio.get_running_loop()
        owners = [owner for owner in self._winding if owner.get_loop() is loop]
        if owners:
            _, pending = await asyncio.wait(owners, timeout=10)
            for owner in pending:
                owner.cancel()


def _hint(exc: BaseException) -> str:
    detail = describe(exc)
    if isinstance(exc, FileNotFoundError):
        return f"the command was not found ({detail}); check the command and PATH"
    if "ConnectError" in detail or "connection attempts failed" in detail.lower():
        return f"nothing answers at the URL ({detail}); is the server running?"
    if "Connection closed" in detail:
        return f"the server closed the connection before it was ready ({detail}); run its command by hand to see why"
    return detail
