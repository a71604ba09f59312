"""Durable runs: the thread id is the conversation id, and a resumed run links to the run it
continues through the trace context journaled with the thread."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from actloop import AgentAction, AgentExecutor, AgentFinish, Tool
from actloop.checkpoint import SqliteCheckpointer
from actloop.testing import ScriptedAgent
from support.tracing import Spans, agent_span, tool_span, tree


def approved_send(tmp_path: Path) -> tuple[AgentExecutor, SqliteCheckpointer]:
    """An agent that sends once (a call that needs approval), then finishes."""
    store = SqliteCheckpointer(tmp_path / "runs.db")
    send = Tool(name="send", func=lambda text: f"sent {text}", description="send a message")
    send.requires_approval = True
    plans: list[Any] = [
        AgentAction("send", "hi", "send hi"),
        lambda steps: AgentFinish({"output": steps[-1][1]}, ""),
    ]
    executor = AgentExecutor(agent=ScriptedAgent(plans), tools=[send], checkpointer=store)
    return executor, store


def traceparent(span: Any) -> str:
    context = span.context
    ids = f"{context.trace_id:032x}-{context.span_id:016x}"
    return f"00-{ids}-{int(context.trace_flags):02x}"


def test_a_resumed_run_links_to_the_paused_run_it_continues(spans: Spans, tmp_path: Path) -> None:
    executor, store = approved_send(tmp_path)
    config: Any = {"configurable": {"thread_id": "T-1"}}
    assert executor.invoke({"input": "q"}, config)["status"] == "paused"
    (first,) = spans.finished()
    assert executor.resume("T-1", approve=True)["output"] == "sent hi"

    finished = spans.finished()
    assert tree(finished) == [
        agent_span(
            [],
            **{
                "gen_ai.conversation.id": "T-1",
                "actloop.resumed": False,
                "actloop.stop_reason": "paused",
                "actloop.iterations": 0,
            },
        ),
        agent_span(
            [tool_span("send", "send a message")],
            **{
                "gen_ai.conversation.id": "T-1",
                "actloop.resumed": True,
                "actloop.stop_reason": "finished",
                "actloop.iterations": 1,
            },
        ),
    ]
    second = finished[-1]
    assert first.context is not None and second.context is not None
    assert [(link.context.span_id, link.context.trace_id) for link in second.links] == [
        (first.context.span_id, first.context.trace_id)
    ]
    assert [dict(link.attributes or {}) for link in second.links] == [{"actloop.link": "resumes"}]
    assert second.context.trace_id != first.context.trace_id  # a new request, a new trace
    contexts = [json.loads(e.data or "") for e in store.entries("T-1") if e.kind == "context"]
    assert contexts == [{"traceparent": traceparent(first)}, {"traceparent": traceparent(second)}]


def test_without_tracing_a_durable_run_journals_no_context(tmp_path: Path) -> None:
    executor, store = approved_send(tmp_path)
    executor.invoke({"input": "q"}, {"configurable": {"thread_id": "T-2"}})
    assert executor.resume("T-2", approve=True)["output"] == "sent hi"
    assert [e.kind for e in store.entries("T-2")] == ["plan", "decision", "obs", "plan"]
