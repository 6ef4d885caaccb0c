"""An SDK client per running event loop, closed when that loop shuts down or the model closes.

An SDK client (`AsyncOpenAI`, `AsyncAnthropic`) pools its connections on the loop that opened
them: a second `asyncio.run` (each `prompt_sync` is one) reused a connection of the first,
closed loop and failed with "Event loop is closed". So each loop gets its own client.

A client must be closed on its own loop, before the loop closes, or its sockets leak. asyncio
has no "loop closing" callback, but `asyncio.run`, `asyncio.Runner` and so `prompt_sync` call
`loop.shutdown_asyncgens()` before closing: every async generator first iterated on the loop is
closed there, on the loop. Each client is therefore held by a started async generator (its
*keeper*) whose `finally` closes the client: it runs when the loop shuts down, or when the
model is closed (`aclose`). A loop closed without `shutdown_asyncgens` keeps its client until
the model is closed or collected.

`runtime.loop.per_loop.PerLoop` drops a value with its loop; it cannot serve here, since a value
needs an awaited close on its loop first, and `models` does not import `runtime`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Generic, TypeVar

from eudaimon.core.errors import ConfigurationError

C = TypeVar("C")


class LoopClients(Generic[C]):
    """`await clients.get()`: the running loop's client, made by `make()` when new.

    Args:
        make: Builds a client (not yet bound to any loop: SDK clients bind on first request).
        close: Closes one, on the loop it served.
    """

    def __init__(self, make: Callable[[], C], close: Callable[[C], Awaitable[None]]) -> None:
        self._make = make
        self._close = close
        self._by_loop: dict[asyncio.AbstractEventLoop, tuple[C, AsyncGenerator[None, None]]] = {}
        self._lock = threading.Lock()  # loops in several threads share one model

    async def get(self) -> C:
        loop = asyncio.get_running_loop()
        found = self._by_loop.get(loop)
        if found is not None:
            return found[0]
        client = self._make()
        keeper = self._keep(loop, client)
        await anext(keeper)  # started on this loop: its shutdown_asyncgens will close it
        with self._lock:
            self._by_loop[loop] = (client, keeper)
        return client

    def __len__(self) -> int:
        """How many loops hold a client now (a closed model holds none)."""
        return len(self._by_loop)

    async def aclose(self) -> None:
        """Close every client: this loop's here, a running loop's on that loop, and forget the
        clients of loops that are gone (their connections went with them)."""
        current = asyncio.get_running_loop()
        with self._lock:
            entries = list(self._by_loop.items())
        for loop, (_client, keeper) in entries:
            if loop is current:
                await keeper.aclose()
            elif loop.is_running():
                with contextlib.suppress(RuntimeError):  # it stopped meanwhile
                    await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(keeper.aclose(), loop))
            else:
                with self._lock:
                    self._by_loop.pop(loop, None)

    async def _keep(self, loop: asyncio.AbstractEventLoop, client: C) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            with self._lock:
                self._by_loop.pop(loop, None)
            await self._close(client)


class ClientSource(Generic[C]):
    """Where a provider model gets the running loop's SDK client: the ones it builds, one per
    loop, or the one the user gave it (on its first loop only).

    The first client is built when the model is (so a missing key is said at once) and kept as
    a spare until a loop takes it; later loops get clients `rebuild` makes.
    """

    def __init__(
        self,
        first: C,
        *,
        owner: str,
        rebuild: Callable[[], C] | None,
        close: Callable[[C], Awaitable[None]],
    ) -> None:
        self._given = first
        self._given_on: UsedOn | None = None
        self._clients: LoopClients[C] | None = None
        self._spare: C | None = None
        self._close = close
        if rebuild is None:  # the user's client: never copied, never closed
            self._given_on = UsedOn(owner)
        else:
            self._spare = first
            self._clients = LoopClients(lambda: self._take_spare() or rebuild(), close)

    @classmethod
    def built(cls, first: C, rebuild: Callable[[], C], close: Callable[[C], Awaitable[None]]) -> ClientSource[C]:
        """Clients this model builds and closes: `first`, then one from `rebuild` per loop."""
        return cls(first, owner="", rebuild=rebuild, close=close)

    @classmethod
    def given(cls, client: C, owner: str) -> ClientSource[C]:
        """A client the user gave `owner` (e.g. `"OpenAIModel('gpt-4o', client=...)"`)."""

        async def never_closed(_client: C) -> None:
            return None

        return cls(client, owner=owner, rebuild=None, close=never_closed)

    async def get(self) -> C:
        """The running loop's client (a given one is refused on a second loop)."""
        if self._clients is not None:
            return await self._clients.get()
        assert self._given_on is not None
        self._given_on.check()
        return self._given

    async def aclose(self) -> None:
        """Close the clients this source built, every loop's and the spare no loop took."""
        if self._clients is not None:
            await self._clients.aclose()
            spare = self._take_spare()
            if spare is not None:
                await self._close(spare)

    def _take_spare(self) -> C | None:
        spare, self._spare = self._spare, None
        return spare


class UsedOn:
    """The loop a client given by the user first served; another loop is refused, clearly.

    A given client is the user's: the model neither copies nor closes it. Its pooled
    connections belong to the loop that opened them, so a second loop (another `asyncio.run`,
    `prompt_sync`, thread) would fail deep in the SDK with "Event loop is closed", or share
    sockets across threads.
    """

    def __init__(self, owner: str) -> None:
        self._owner = owner
        self._loop: weakref.ref[asyncio.AbstractEventLoop] | None = None

    def check(self) -> None:
        """Raises `ConfigurationError` on a loop other than the first one."""
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = weakref.ref(loop)
            return
        if self._loop() is loop:  # a first loop that is gone is another loop too
            return
        raise ConfigurationError(
            f"{self._owner} was first used on another event loop, and an SDK client's connections "
            "belong to the loop that opened them: leave client= out (the model then builds one "
            "client per loop and closes each), or build one model, with its own client, per loop"
        )
