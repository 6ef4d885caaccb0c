"""A TLS front for a plain TCP server: what a Temporal cluster behind TLS looks like to a client.

Temporal's dev server speaks plain gRPC; a production cluster or Temporal Cloud only TLS. The
front terminates TLS (offering HTTP/2, as gRPC needs) with a certificate from a throwaway CA
(`trustme`) and passes the bytes on, so that a test reaches the real dev server the way a fleet
reaches a secured one. It serves on an event loop of its own thread: a test may block its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import trustme


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


@contextlib.contextmanager
def tls_front(upstream: str, ca_file: Path, server_name: str = "localhost") -> Iterator[str]:
    """Serve TLS for `upstream` (`host:port`) on a free port of 127.0.0.1; yield its `host:port`.
    The CA that signed its certificate (for `server_name`) is written to `ca_file`."""
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(server_name).configure_cert(context)
    context.set_alpn_protocols(["h2"])
    host, port = upstream.rsplit(":", 1)
    open_writers: set[asyncio.StreamWriter] = set()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        open_writers.add(writer)
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.close()
            return
        open_writers.add(up_writer)
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    async def close(server: asyncio.Server) -> None:
        server.close()
        for writer in open_writers:
            writer.close()
        await asyncio.sleep(0.05)  # the transports finish closing

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="tls-front", daemon=True)
    thread.start()
    server = asyncio.run_coroutine_threadsafe(asyncio.start_server(serve, "127.0.0.1", 0, ssl=context), loop).result(10)
    try:
        yield f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        asyncio.run_coroutine_threadsafe(close(server), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
