"""Fake OpenAI and Anthropic servers on 127.0.0.1, driven through the real SDK clients.

Each test scripts the replies (status, headers, JSON or raw body, SSE chunks, delays, a cut
connection) and reads back what the SDK sent. Nothing here talks to the internet: provider
keys are cleared and the SDKs' default URLs point at a closed local port, so a test that
forgets its fake server fails instead of calling out.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OPENAI_KEY = "sk-test-openai-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-test-0123456789abcdef"
CLOSED_PORT_URL = "http://127.0.0.1:9"
CLEARED_ENV = (
    *("OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_COMPATIBLE_BASE_URL"),
    *("OPENAI_COMPATIBLE_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"),
    "ANTHROPIC_CONFIG_DIR",
)


@dataclass
class Reply:
    """One scripted HTTP reply."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] | None = None
    """Sent with chunked transfer encoding, one HTTP chunk each (a stream)."""
    delay_s: float = 0.0
    """Wait before the status line (longer than the client's timeout: a timeout)."""
    chunk_delay_s: float = 0.0
    cut: bool = False
    """Drop the connection after the chunks instead of ending the body."""


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any


Script = Reply | Callable[[Received], Reply]


class FakeProvider:
    """An HTTP server replaying scripted replies in order and recording each request."""

    api_prefix = ""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._script: deque[Script] = deque()
        self._stop = threading.Event()
        self._connections: set[socket.socket] = set()
        self.open_connections: set[socket.socket] = set()
        """Connections a client holds open now (keep-alive included): a leaked client keeps its own."""
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                received = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                fake.requests.append(received)
                fake._respond(self, received)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def process_request(self, request: Any, client_address: Any) -> None:
                with fake._lock:
                    fake._connections.add(request)
                    fake.open_connections.add(request)
                super().process_request(request, client_address)

            def shutdown_request(self, request: Any) -> None:
                with fake._lock:  # the handler saw the client hang up (or the server stopped)
                    fake.open_connections.discard(request)
                super().shutdown_request(request)

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that hung up mid-reply is what some tests are about

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        """The base URL to give the SDK."""
        return f"http://127.0.0.1:{self.port}{self.api_prefix}"

    def reply(self, *replies: Script) -> None:
        """Queue replies for the next requests, in order."""
        self._script.extend(replies)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            for conn in self._connections:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
                conn.close()
        self._thread.join(timeout=5)

    def _respond(self, handler: BaseHTTPRequestHandler, received: Received) -> None:
        if self._script:
            item = self._script.popleft()
            reply = item(received) if callable(item) else item
        else:
            reply = self.json({"error": {"message": "fake server: no reply scripted for this request"}}, status=500)
        if reply.delay_s and self._stop.wait(reply.delay_s):
            return
        try:
            handler.send_response(reply.status)
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            if reply.chunks is None:
                handler.send_header("Content-Length", str(len(reply.body)))
                handler.end_headers()
                handler.wfile.write(reply.body)
                handler.wfile.flush()
                return
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            for chunk in reply.chunks:
                if reply.chunk_delay_s:
                    time.sleep(reply.chunk_delay_s)
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                handler.wfile.flush()
            if reply.cut:
                handler.close_connection = True
                handler.connection.shutdown(socket.SHUT_RDWR)
                return
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except OSError:
            handler.close_connection = True

    # --- building replies -------------------------------------------------------------------

    def json(self, body: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
        return Reply(status, json.dumps(body).encode(), {"Content-Type": "application/json", **(headers or {})})

    def raw(self, body: bytes, *, status: int = 200, content_type: str = "application/json") -> Reply:
        return Reply(status, body, {"Content-Type": content_type})

    def sse(self, events: list[bytes], *, cut: bool = False, chunk_delay_s: float = 0.0) -> Reply:
        return Reply(
            200,
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
            chunks=events,
            cut=cut,
            chunk_delay_s=chunk_delay_s,
        )


class FakeOpenAI(FakeProvider):
    """POST /v1/chat/completions: JSON completions, and SSE `data:` chunks ending in `[DONE]`."""

    api_prefix = "/v1"

    def completion(
        self,
        text: str | None = "",
        *,
        tool_calls: list[dict[str, Any]] | None = None,
        finish_reason: str = "stop",
        usage: dict[str, Any] | None = None,
        model: str = "gpt-test-2025",
        refusal: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": refusal}
        if tool_calls:
            message["tool_calls"] = tool_calls
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1700000000,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
            "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        return self.json(body, headers=headers)

    @staticmethod
    def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}

    @staticmethod
    def chunk(
        delta: dict[str, Any] | None = None,
        *,
        finish_reason: str | None = None,
        usage: dict[str, Any] | None = None,
        model: str = "gpt-test-2025",
    ) -> dict[str, Any]:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
        body: dict[str, Any] = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": model,
            "choices": choices,
        }
        if usage is not None:
            body["usage"] = usage
        return body

    def stream(
        self, chunks: list[dict[str, Any]], *, done: bool = True, cut: bool = False, chunk_delay_s: float = 0.0
    ) -> Reply:
        events = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks]
        if done:
            events.append(b"data: [DONE]\n\n")
        return self.sse(events, cut=cut, chunk_delay_s=chunk_delay_s)

    def error(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        body = {"error": {"message": message, "type": type, "param": None, "code": code}}
        return self.json(body, status=status, headers=headers)


class FakeAnthropic(FakeProvider):
    """POST /v1/messages: JSON messages, and SSE `event:`/`data:` pairs ending in `message_stop`."""

    def message(
        self,
        content: list[dict[str, Any]],
        *,
        stop_reason: str = "end_turn",
        usage: dict[str, Any] | None = None,
        model: str = "claude-test-2025",
    ) -> Reply:
        body = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage or {"input_tokens": 10, "output_tokens": 5},
        }
        return self.json(body)

    @staticmethod
    def message_start(usage: dict[str, Any] | None = None, model: str = "claude-test-2025") -> dict[str, Any]:
        return {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage or {"input_tokens": 10, "output_tokens": 1},
            },
        }

    @staticmethod
    def text_block(index: int, pieces: list[str]) -> list[dict[str, Any]]:
        return [
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            *(
                {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}
                for p in pieces
            ),
            {"type": "content_block_stop", "index": index},
        ]

    @staticmethod
    def tool_block(index: int, call_id: str, name: str, pieces: list[str]) -> list[dict[str, Any]]:
        start = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        return [
            {"type": "content_block_start", "index": index, "content_block": start},
            *(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": p},
                }
                for p in pieces
            ),
            {"type": "content_block_stop", "index": index},
        ]

    @staticmethod
    def message_end(stop_reason: str = "end_turn", output_tokens: int = 5) -> list[dict[str, Any]]:
        return [
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
            {"type": "message_stop"},
        ]

    def stream(self, events: list[dict[str, Any]], *, cut: bool = False, chunk_delay_s: float = 0.0) -> Reply:
        frames = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]
        return self.sse(frames, cut=cut, chunk_delay_s=chunk_delay_s)

    def error(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        headers: dict[str, str] | None = None,
    ) -> Reply:
        return self.json({"type": "error", "error": {"type": type, "message": message}}, status=status, headers=headers)
