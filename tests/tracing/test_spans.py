"""The exact span tree of instrumented runs: agent, model and tool spans with their attributes."""

from __future__ import annotations

from typing import Any

import pytest

from actloop import AgentExecutor
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import tool
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


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def mul(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


def two_steps() -> AgentExecutor:
    model = NamedModel(
        [
            reply([call("add", {"a": 1, "b": 2}, "call-1")], (10, 3), "tool_calls"),
            reply([call("mul", {"a": 3, "b": 4}, "call-2")], (20, 4), "tool_calls"),
            reply([], (30, 5), "stop", text="12"),
        ]
    )
    agent = create_tool_calling_agent(model, [add, mul], PROMPT)
    return AgentExecutor(agent=agent, tools=[add, mul], name="calculator")


TWO_STEPS = [
    agent_span(
        [
            chat((10, 3), "tool_calls"),
            tool_span("add", "Add two numbers.", "call-1"),
            chat((20, 4), "tool_calls"),
            tool_span("mul", "Multiply two numbers.", "call-2"),
            chat((30, 5), "stop"),
        ],
        name="calculator",
        **{
            "actloop.stop_reason": "finished",
            "actloop.iterations": 2,
            "gen_ai.provider.name": "namedmodel",
            "gen_ai.usage.input_tokens": 60,
            "gen_ai.usage.output_tokens": 12,
        },
    )
]


def test_a_two_step_tool_calling_run_is_one_agent_span_with_its_model_and_tool_calls(
    spans: Spans,
) -> None:
    assert two_steps().invoke({"input": "(1+2)*4"})["output"] == "12"
    finished = spans.finished()
    assert tree(finished) == TWO_STEPS
    assert one_trace(finished)


async def test_the_async_path_gives_the_same_tree(spans: Spans) -> None:
    assert (await two_steps().ainvoke({"input": "(1+2)*4"}))["output"] == "12"
    assert tree(spans.finished()) == TWO_STEPS


@pytest.mark.parametrize("mode", ["stream", "astream"])
async def test_streamed_runs_give_the_same_tree(spans: Spans, mode: str) -> None:
    executor = two_steps()
    if mode == "stream":
        chunks: list[Any] = list(executor.stream({"input": "(1+2)*4"}))
    else:
        chunks = [c async for c in executor.astream({"input": "(1+2)*4"})]
    assert chunks[-1]["output"] == "12"
    assert tree(spans.finished()) == TWO_STEPS


def test_a_run_started_under_a_span_is_its_child(spans: Spans) -> None:
    tracer = spans.provider.get_tracer("app")
    with tracer.start_as_current_span("request") as request:
        two_steps().invoke({"input": "(1+2)*4"})
    finished = spans.finished()
    (agent,) = [s for s in finished if s.name == "invoke_agent calculator"]
    assert agent.parent is not None
    assert agent.parent.span_id == request.get_span_context().span_id
    assert one_trace(finished)
    assert [root["name"] for root in tree(finished)] == ["request"]


def test_a_chat_span_carries_the_requests_settings(spans: Spans) -> None:
    model = NamedModel([reply([], (7, 2), "stop", text="x")])
    bound = model.bind(temperature=0.5, max_tokens=64, stop=["END"])
    executor = AgentExecutor(agent=create_tool_calling_agent(bound, [add], PROMPT), tools=[add])
    executor.invoke({"input": "q"})
    settings = {
        "gen_ai.request.temperature": 0.5,
        "gen_ai.request.max_tokens": 64,
        "gen_ai.request.stop_sequences": ("END",),
    }
    assert tree(spans.finished())[0]["children"] == [chat((7, 2), "stop", **settings)]
