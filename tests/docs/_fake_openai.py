"""A Chat Completions server on 127.0.0.1 for the documentation's snippets.

A snippet is written as a user writes it (`Agent("openai:gpt-4o-mini", …)`); the tests point
the official SDK at this server (`OPENAI_BASE_URL`), so the snippet runs as written, offline.
It answers like a model that uses its tools: asked with tools and a user's message last, it
calls the first tool with plausible arguments; asked for a JSON schema (`response_format`), it
answers JSON of that shape; otherwise it answers in text. Both plain and
streamed (SSE) completions, with usage, as the real API sends them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_SAMPLES: dict[str, Any] = {"string": "Lisbon", "number": 1.0, "integer": 1, "boolean": True}


def _sample(schema: dict[str, Any]) -> Any:
    """A value of `schema`'s shape (objects, arrays and scalars; `$ref`s are not followed)."""
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {name: _sample(sub) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [_sample(schema.get("items") or {})]
    return _SAMPLES.get(str(kind), "x")


def _answer(body: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]]]:
    messages = body.get("messages") or [{}]
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":  # native structured output: JSON of the schema
        return json.dumps(_sample(response_format["json_schema"]["schema"])), []
    tools = body.get("tools") or []
    if tools and messages[-1].get("role") == "user":
        function = tools[0]["function"]
        schema = function.get("parameters") or {}
        properties = schema.get("properties") or {}
        arguments = {
            name: _SAMPLES.get(str(properties.get(name, {}).get("type")), "x") for name in schema.get("required", [])
        }
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": function["name"], "arguments": json.dumps(arguments)},
        }
        return None, [call]
    return "Done: it is 21°C and sunny.", []


def _completion(body: dict[str, Any]) -> dict[str, Any]:
    text, calls = _answer(body)
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-docs",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "gpt-4o-mini"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
    }


def _chunks(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    text, calls = _answer(body)
    base = {"id": "chatcmpl-docs", "object": "chat.completion.chunk", "created": 0, "model": body.get("model", "m")}
    delta: dict[str, Any] = {"role": "assistant"}
    if text:
        delta["content"] = text
    if calls:
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(calls)]
    yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if calls else "stop"}]}
    yield {**base, "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.endswith("/chat/completions"):
            self.send_error(404, "only /v1/chat/completions here")
            return
        if body.get("stream"):
            payload = b"".join(f"data: {json.dumps(chunk)}\n\n".encode() for chunk in _chunks(body))
            payload += b"data: [DONE]\n\n"
            kind = "text/event-stream"
        else:
            payload, kind = json.dumps(_completion(body)).encode(), "application/json"
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def fake_openai() -> Iterator[str]:
    """Serve until the block ends; yields the base URL (`http://127.0.0.1:PORT/v1`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
