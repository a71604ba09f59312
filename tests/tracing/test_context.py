"""One trace everywhere: parallel sync tools on worker threads, async tasks, nested agents used
as tools, and a trace carried across a process boundary as a traceparent dict."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from opentelemetry import trace

from actloop import AgentAction, AgentExecutor, Tool
from actloop.testing import ScriptedAgent
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import tool
from actloop.tracing import continue_trace, inject_context
from support.tracing import (
    PROMPT,
    NamedModel,
    Spans,
    agent_span,
    call,
    chat,
    one_trace,
    reply,
    tool_span,
    tree,
)

FINISHED_ONE = {"actloop.stop_reason": "finished", "actloop.iterations": 1}


def inner_executor() -> AgentExecutor:
    """A one-step agent that looks a word up, used inside another agent's tool."""
    lookup = Tool(name="lookup", func=lambda q: f"entry {q}", description="look up")
    agent = ScriptedAgent([AgentAction("lookup", "x", ""), lambda steps: _finish(steps)])
    return AgentExecutor(agent=agent, tools=[lookup], name="inner")


def _finish(steps: list[Any]) -> Any:
    from actloop import AgentFinish

    return AgentFinish({"output": steps[-1][1]}, "")


INNER = agent_span([tool_span("lookup", "look up")], name="inner", **FINISHED_ONE)


def slow_echo(text: str) -> str:
    time.sleep(0.05)  # both calls overlap on two worker threads
    return f"{text}@{threading.current_thread().name}"


def parallel_executor() -> AgentExecutor:
    """One step with two parallel calls: a sync tool, and a tool that runs a nested agent."""
    inner = inner_executor()
    echo = Tool(name="echo", func=slow_echo, description="echo")
    ask = Tool(name="ask", func=lambda q: inner.invoke({"input": q})["output"], description="ask")
    model = NamedModel(
        [
            reply(
                [call("echo", {"__arg1": "a"}, "c-a"), call("ask", {"__arg1": "q"}, "c-q")],
                (5, 2),
                "tool_calls",
            ),
            reply([], (6, 1), "stop", text="ok"),
        ]
    )
    agent = create_tool_calling_agent(model, [echo, ask], PROMPT)
    return AgentExecutor(agent=agent, tools=[echo, ask], return_intermediate_steps=True)


PARALLEL = [
    agent_span(
        [
            chat((5, 2), "tool_calls"),
            tool_span("echo", "echo", "c-a"),
            tool_span("ask", "ask", "c-q", children=[INNER]),
            chat((6, 1), "stop"),
        ],
        **FINISHED_ONE,
        **{
            "gen_ai.provider.name": "namedmodel",
            "gen_ai.usage.input_tokens": 11,
            "gen_ai.usage.output_tokens": 3,
        },
    )
]


def _by_start(tree_: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tree with the (concurrent) tool spans of the step in call order."""
    root = tree_[0]
    tools = sorted(
        (c for c in root["children"] if c["name"].startswith("execute_tool")),
        key=lambda c: c["attributes"]["gen_ai.tool.call.id"],
    )
    chats = [c for c in root["children"] if c["name"].startswith("chat")]
    return [{**root, "children": [chats[0], *tools, chats[1]]}]


def test_parallel_sync_tools_on_workers_and_a_nested_agent_keep_one_trace(spans: Spans) -> None:
    result = parallel_executor().invoke({"input": "go"})
    assert result["intermediate_steps"][0][1] == "a@actloop-worker"  # on a worker thread
    finished = spans.finished()
    assert _by_start(tree(finished)) == PARALLEL
    assert one_trace(finished)


async def test_async_tasks_and_a_nested_agent_keep_one_trace(spans: Spans) -> None:
    await parallel_executor().ainvoke({"input": "go"})
    finished = spans.finished()
    assert _by_start(tree(finished)) == PARALLEL
    assert one_trace(finished)


async def test_an_async_tool_sees_its_span_as_the_current_one(spans: Spans) -> None:
    seen: list[Any] = []

    @tool
    async def probe(text: str) -> str:
        """Record the current span."""
        seen.append(trace.get_current_span().get_span_context().span_id)
        return text

    model = NamedModel(
        [
            reply([call("probe", {"text": "t"}, "c-1")], (1, 1), "tool_calls"),
            reply([], (1, 1), "stop"),
        ]
    )
    executor = AgentExecutor(agent=create_tool_calling_agent(model, [probe], PROMPT), tools=[probe])
    await executor.ainvoke({"input": "go"})
    (tool_run,) = [s for s in spans.finished() if s.name == "execute_tool probe"]
    assert seen == [tool_run.context.span_id]


def test_a_trace_crosses_a_process_boundary_as_a_traceparent_dict(spans: Spans) -> None:
    tracer = spans.provider.get_tracer("caller")
    with tracer.start_as_current_span("remote call") as caller:
        carrier = inject_context()
    assert list(carrier) == ["traceparent"]
    context = caller.get_span_context()
    flags = int(context.trace_flags)
    assert (
        carrier["traceparent"] == f"00-{context.trace_id:032x}-{context.span_id:016x}-{flags:02x}"
    )

    def worker() -> None:  # another thread, no context of its own: as in a Ray worker
        with continue_trace(carrier):
            inner_executor().invoke({"input": "q"})

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(30)
    (agent,) = [s for s in spans.finished() if s.name == "invoke_agent inner"]
    assert agent.parent is not None and agent.parent.is_remote
    assert (agent.context.trace_id, agent.parent.span_id) == (context.trace_id, context.span_id)
    assert tree([s for s in spans.finished() if s.name != "remote call"]) == [INNER]


def test_with_no_span_there_is_nothing_to_carry(spans: Spans) -> None:
    assert inject_context() == {}
    with continue_trace({}):
        inner_executor().invoke({"input": "q"})
    assert tree(spans.finished()) == [INNER]


@pytest.mark.parametrize("carrier", [None, {}])
def test_continue_trace_without_a_carrier_changes_nothing(carrier: Any) -> None:
    before = trace.get_current_span()
    with continue_trace(carrier):
        assert trace.get_current_span() is before
