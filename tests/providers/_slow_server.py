"""A provider that takes its time, on a real socket, and notes when its client hangs up.

It reads one HTTP request per connection, then either streams a long answer slowly (SSE in
the provider's format: OpenAI chunks or Anthropic events, one token every `TICK_S`) or says
nothing at all, as a provider does while it thinks. Meanwhile it watches the socket: the
moment the client closes it (a read gives EOF or the next write fails) is `hung_up_at`, on
`time.monotonic()`. A connection is never held past `LIMIT_S`.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Literal

TICK_S = 0.05
LIMIT_S = 30.0
Wire = Literal["openai", "anthropic"]


@dataclass
class Call:
    """One request as the server saw it."""

    path: str
    body: dict[str, object]
    arrived_at: float
    hung_up_at: float | None = None
    tokens_sent: int = 0
    hung_up: threading.Event = field(default_factory=threading.Event)


class SlowProvider:
    """`SlowProvider("openai")`: base URL `url`; `calls` in arrival order; `arrived` is set by
    each request (clear it to wait for the next)."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.calls: list[Call] = []
        self.arrived = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closing = threading.Event()
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}" + ("/v1" if self.wire == "openai" else "")

    def close(self) -> None:
        self._closing.set()
        self._listener.close()
        self._acceptor.join(timeout=5)
        for thread in self._threads:
            thread.join(timeout=5)

    def _accept(self) -> None:
        while not self._closing.is_set():
            if not select.select([self._listener], [], [], 0.05)[0]:
                continue
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            request = _read_request(conn)
            if request is None:
                return
            path, body = request
            call = Call(path, body, time.monotonic())
            self.calls.append(call)
            self.arrived.set()
            streaming = bool(body.get("stream"))
            if streaming:
                conn.sendall(_STREAM_HEAD)
                self._send(conn, self._opening())
            deadline = call.arrived_at + LIMIT_S
            while time.monotonic() < deadline and not self._closing.is_set():
                readable, _, _ = select.select([conn], [], [], TICK_S)
                if readable and not conn.recv(4096):
                    break  # EOF: the client closed the connection
                if streaming:
                    try:
                        self._send(conn, self._token(call.tokens_sent))
                    except OSError:
                        break
                    call.tokens_sent += 1
            call.hung_up_at = time.monotonic()
            call.hung_up.set()

    def _send(self, conn: socket.socket, events: list[bytes]) -> None:
        for event in events:
            conn.sendall(b"%x\r\n%s\r\n" % (len(event), event))

    def _opening(self) -> list[bytes]:
        if self.wire == "openai":
            return []
        start = {
            "type": "message_start",
            "message": {
                "id": "msg_slow",
                "type": "message",
                "role": "assistant",
                "model": "claude-slow",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        }
        block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        return [_anthropic_event(start), _anthropic_event(block)]

    def _token(self, n: int) -> list[bytes]:
        if self.wire == "openai":
            chunk = {
                "id": "chatcmpl-slow",
                "object": "chat.completion.chunk",
                "created": 1700000000,
                "model": "gpt-slow",
                "choices": [{"index": 0, "delta": {"content": f"w{n} "}, "finish_reason": None}],
            }
            return [f"data: {json.dumps(chunk)}\n\n".encode()]
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"w{n} "}}
        return [_anthropic_event(delta)]


_STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n"
)


def _anthropic_event(event: dict[str, object]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def _read_request(conn: socket.socket) -> tuple[str, dict[str, object]] | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        rest += chunk
    body = json.loads(rest[:length]) if length else {}
    return lines[0].split(" ")[1], body
