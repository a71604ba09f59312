"""A request carrying a W3C `traceparent` runs its agent inside the caller's trace (issue 18)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from actloop.server import create_app
from actloop.tracing import inject_context, instrument, uninstrument
from support.serve import Serve

from .agents import make_executor


@pytest.fixture
def caught() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrument(tracer_provider=provider)
    yield provider, exporter
    uninstrument()
    provider.shutdown()


def test_a_request_with_traceparent_joins_the_callers_trace(
    serve: Serve, caught: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = caught
    url = serve(create_app(make_executor()))
    with provider.get_tracer("client").start_as_current_span("client call") as client:
        headers = inject_context()
        body = {"input": {"input": "add 2 3"}}
        response = httpx.post(f"{url}/agent/invoke", json=body, headers=headers, timeout=30)
    assert response.status_code == 200
    assert response.json()["output"] == {"input": "add 2 3", "output": "The sum is 5."}
    spans = {s.name: s for s in exporter.get_finished_spans()}
    agent = spans["invoke_agent AgentExecutor"]
    client_context = client.get_span_context()
    assert agent.context.trace_id == client_context.trace_id
    assert agent.parent is not None and agent.parent.span_id == client_context.span_id
    tool = spans["execute_tool add"]
    assert tool.context.trace_id == client_context.trace_id


def test_a_request_without_traceparent_starts_its_own_trace(
    serve: Serve, caught: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    _, exporter = caught
    url = serve(create_app(make_executor()))
    response = httpx.post(f"{url}/agent/invoke", json={"input": {"input": "add 1 1"}}, timeout=30)
    assert response.status_code == 200
    agent = next(s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent"))
    assert agent.parent is None
