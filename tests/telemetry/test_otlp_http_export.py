"""Spans reach an OTLP/HTTP collector: the SDK's exporter posts protobuf to a receiver on
127.0.0.1, which decodes what arrived."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from eudaimon import Agent
from eudaimon.core.messages import Message, ToolCall
from eudaimon.models import ScriptedModel
from eudaimon.telemetry import instrument, uninstrument
from support.tools import lookup


class Receiver(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append(request)
        self.server.paths.append(self.path)
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


async def test_spans_arrive_over_otlp_http(receiver: Receiver) -> None:
    """Invariant: a run's spans, exported with OTLP/HTTP protobuf, arrive with their names and attributes."""
    port = receiver.server_address[1]
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces")))
    instrument(provider)
    try:
        agent = Agent(
            ScriptedModel([Message.assistant(None, [ToolCall("c1", "lookup", {"key": "k"})]), "K"]),
            name="exporter",
            tools=[lookup],
        )
        response = await agent.prompt("up")
    finally:
        uninstrument()
        provider.shutdown()
    spans = {
        span.name: {a.key: a.value for a in span.attributes}
        for request in receiver.requests
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    }
    assert set(receiver.paths) == {"/v1/traces"}
    assert {"invoke_agent exporter", "chat scripted", "execute_tool lookup"} <= set(spans)
    assert spans["execute_tool lookup"]["gen_ai.tool.call.id"].string_value == "c1"
    assert spans["invoke_agent exporter"]["eudaimon.run_id"].string_value == response.run_id
