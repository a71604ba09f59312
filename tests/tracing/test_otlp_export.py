"""A real export path: spans go over OTLP/HTTP (protobuf) to a receiver on loopback, which
decodes the request the way a collector (Jaeger, Tempo, any OTLP backend) does."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from actloop import AgentExecutor
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import tool
from actloop.tracing import instrument, uninstrument
from support.tracing import PROMPT, NamedModel, call, reply


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP trace receiver: keeps each decoded export request."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[tuple[str, str]] = []


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.paths.append((self.path, self.headers["Content-Type"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append(request)
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind)


def test_spans_arrive_over_otlp_http_at_a_collector_address(receiver: Receiver) -> None:
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}/v1/traces"
    provider = TracerProvider(resource=Resource.create({"service.name": "calculator-app"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    instrument(tracer_provider=provider)
    try:
        model = NamedModel(
            [
                reply([call("add", {"a": 1, "b": 2}, "call-7")], (10, 3), "tool_calls"),
                reply([], (20, 1), "stop", text="3"),
            ]
        )
        executor = AgentExecutor(agent=create_tool_calling_agent(model, [add], PROMPT), tools=[add])
        assert executor.invoke({"input": "1+2?"})["output"] == "3"
    finally:
        uninstrument()
        provider.shutdown()  # flushes the batch to the receiver

    assert set(receiver.paths) == {("/v1/traces", "application/x-protobuf")}
    batches = [rs for request in receiver.requests for rs in request.resource_spans]
    resources = [{a.key: _value(a.value) for a in rs.resource.attributes} for rs in batches]
    assert {r["service.name"] for r in resources} == {"calculator-app"}
    scopes = [ss for rs in batches for ss in rs.scope_spans]
    assert {ss.scope.name for ss in scopes} == {"actloop"}
    arrived = [span for ss in scopes for span in ss.spans]
    spans = {s.name: s for s in arrived}
    assert sorted(spans) == ["chat scripted-1", "execute_tool add", "invoke_agent AgentExecutor"]
    agent, tool_span = spans["invoke_agent AgentExecutor"], spans["execute_tool add"]
    assert agent.parent_span_id == b""
    assert [s.parent_span_id for s in arrived if s is not agent] == [agent.span_id] * 3
    assert {s.trace_id for s in arrived} == {agent.trace_id}
    assert {a.key: _value(a.value) for a in tool_span.attributes} == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Add two numbers.",
        "gen_ai.tool.call.id": "call-7",
    }
    assert {a.key: _value(a.value) for a in agent.attributes} == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "AgentExecutor",
        "actloop.stop_reason": "finished",
        "actloop.iterations": 1,
        "gen_ai.provider.name": "namedmodel",
        "gen_ai.usage.input_tokens": 30,
        "gen_ai.usage.output_tokens": 4,
    }
    chats = [s for s in arrived if s.name == "chat scripted-1"]
    assert [{a.key: _value(a.value) for a in s.attributes}["gen_ai.response.finish_reasons"]
            for s in chats] == [["tool_calls"], ["stop"]]  # fmt: skip
