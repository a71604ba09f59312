"""Spans of instrumented runs, caught by the OpenTelemetry SDK's in-memory exporter, and the
expected spans tests compare them with.

`Spans` holds one test's exporter and provider (the `spans` fixture of tests/tracing instruments
actloop with it); `tree()` turns the finished spans into nested dicts (name, kind, attributes,
children in start order), so a test can assert the whole tree with exact values.
"""

from __future__ import annotations

import time
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from actloop.messages import AIMessage
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.testing import ScriptedChatModel

__all__ = [
    "PROMPT",
    "NamedModel",
    "Spans",
    "agent_span",
    "call",
    "chat",
    "node",
    "one_trace",
    "reply",
    "tool_span",
    "tree",
]

PROMPT = ChatPromptTemplate.from_messages(
    [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
)


class Spans:
    """The exporter and provider of one test."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def finished(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def wait_for(self, count: int, timeout: float = 10.0) -> list[ReadableSpan]:
        """The finished spans once there are `count` (a call abandoned at a deadline ends late)."""
        end = time.monotonic() + timeout
        while len(self.finished()) < count and time.monotonic() < end:
            time.sleep(0.01)
        return self.finished()


def node(span: ReadableSpan, children: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": span.name,
        "kind": span.kind.name,
        "status": span.status.status_code.name,
        "attributes": dict(span.attributes or {}),
        "children": children,
    }


def tree(finished: list[ReadableSpan]) -> list[dict[str, Any]]:
    """The spans as nested dicts, roots first; every span must belong to the first root's trace."""
    ordered = sorted(finished, key=lambda s: s.start_time or 0)
    ids = {s.context.span_id for s in ordered if s.context is not None}

    def children(parent: int | None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for span in ordered:
            up = span.parent.span_id if span.parent is not None else None
            if (up if up in ids else None) == parent and span.context is not None:
                out.append(node(span, children(span.context.span_id)))
        return out

    return children(None)


def one_trace(finished: list[ReadableSpan]) -> bool:
    return len({s.context.trace_id for s in finished if s.context is not None}) == 1


def call(name: str, args: dict[str, Any], ident: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": ident}


def reply(
    calls: list[dict[str, Any]], tokens: tuple[int, int], reason: str, text: str = ""
) -> AIMessage:
    """A model reply with tool calls, usage and a finish reason."""
    return AIMessage(
        text,
        tool_calls=calls,
        usage_metadata={
            "input_tokens": tokens[0],
            "output_tokens": tokens[1],
            "total_tokens": sum(tokens),
        },
        response_metadata={"finish_reason": reason, "model_name": "scripted-1-0501"},
        id=f"msg-{tokens[0]}",
    )


class NamedModel(ScriptedChatModel):
    """A scripted model that reports a model name, as a provider's model does."""

    model = "scripted-1"


def chat(tokens: tuple[int, int], reason: str, **extra: Any) -> dict[str, Any]:
    """The expected chat span of a NamedModel reply."""
    return {
        "name": "chat scripted-1",
        "kind": "CLIENT",
        "status": "UNSET",
        "attributes": {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "namedmodel",
            "gen_ai.request.model": "scripted-1",
            "gen_ai.response.finish_reasons": (reason,),
            "gen_ai.response.model": "scripted-1-0501",
            "gen_ai.response.id": f"msg-{tokens[0]}",
            "gen_ai.usage.input_tokens": tokens[0],
            "gen_ai.usage.output_tokens": tokens[1],
            **extra,
        },
        "children": [],
    }


def tool_span(
    name: str,
    description: str,
    call_id: str | None = None,
    children: list[dict[str, Any]] | None = None,
    status: str = "UNSET",
    **extra: Any,
) -> dict[str, Any]:
    """The expected execute_tool span."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": description,
    }
    if call_id is not None:
        attributes["gen_ai.tool.call.id"] = call_id
    return {
        "name": f"execute_tool {name}",
        "kind": "INTERNAL",
        "status": status,
        "attributes": {**attributes, **extra},
        "children": children or [],
    }


def agent_span(
    children: list[dict[str, Any]], status: str = "UNSET", name: str = "AgentExecutor", **extra: Any
) -> dict[str, Any]:
    """The expected invoke_agent span."""
    return {
        "name": f"invoke_agent {name}",
        "kind": "INTERNAL",
        "status": status,
        "attributes": {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            **extra,
        },
        "children": children,
    }
