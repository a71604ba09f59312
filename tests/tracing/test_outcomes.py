"""How a run ends shows on its spans: model mistakes (parse errors, unknown tools), errors with
their exception events, the deadline and the iteration limit."""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish, OutputParserException, Tool
from actloop.messages import BaseMessage
from actloop.testing import FunctionChatModel, ScriptedAgent
from actloop.tool_calling import create_tool_calling_agent
from support.tracing import PROMPT, Spans, agent_span, tool_span, tree

STOPPED = "Agent stopped due to iteration limit or time limit."


def lookup() -> Tool:
    return Tool(name="lookup", func=lambda q: f"entry {q}", description="look up")


def mistakes() -> AgentExecutor:
    """A parse error, then a call to a tool that does not exist, then a good call, then done."""
    bad = OutputParserException(
        "no action", observation="Say which tool.", llm_output="I think...", send_to_llm=True
    )
    plans: list[Any] = [
        bad,
        AgentAction("nope", "x", "calling nope"),
        AgentAction("lookup", "x", "calling lookup"),
        AgentFinish({"output": "done"}, ""),
    ]
    return AgentExecutor(agent=ScriptedAgent(plans), tools=[lookup()], handle_parsing_errors=True)


MISTAKES = [
    agent_span(
        [
            tool_span(
                "_Exception",
                "Exception tool",
                status="ERROR",
                **{"error.type": "OutputParserException"},
            ),
            {
                "name": "execute_tool nope",
                "kind": "INTERNAL",
                "status": "ERROR",
                "attributes": {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "nope",
                    "gen_ai.tool.type": "function",
                    "error.type": "invalid_tool",
                },
                "children": [],
            },
            tool_span("lookup", "look up"),
        ],
        **{"actloop.stop_reason": "finished", "actloop.iterations": 3},
    )
]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_parse_errors_and_unknown_tools_are_error_spans_and_the_run_goes_on(
    spans: Spans, mode: str
) -> None:
    executor = mistakes()
    inputs = {"input": "q"}
    result = executor.invoke(inputs) if mode == "invoke" else await executor.ainvoke(inputs)
    assert result["output"] == "done"
    finished = spans.finished()
    assert tree(finished) == MISTAKES
    statuses = {s.name: s.status.description for s in finished if s.name != "invoke_agent"}
    assert statuses == {
        "execute_tool _Exception": "the agent's output could not be parsed",
        "execute_tool nope": "the agent asked for an unknown tool 'nope'",
        "execute_tool lookup": None,
        "invoke_agent AgentExecutor": None,
    }


def _exception_events(span: Any) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in e.attributes.items() if k != "exception.stacktrace"}
        for e in span.events
        if e.name == "exception"
    ]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_failing_tool_fails_its_span_and_the_run_span(spans: Spans, mode: str) -> None:
    def explode(text: str) -> str:
        raise KeyError("no such row")

    broken = Tool(name="db", func=explode, description="query")
    executor = AgentExecutor(agent=ScriptedAgent([AgentAction("db", "x", "")]), tools=[broken])
    with pytest.raises(KeyError):
        if mode == "invoke":
            executor.invoke({"input": "q"})
        else:
            await executor.ainvoke({"input": "q"})
    finished = spans.finished()
    assert tree(finished) == [
        agent_span(
            [tool_span("db", "query", status="ERROR", **{"error.type": "KeyError"})],
            status="ERROR",
            **{
                "actloop.stop_reason": "error",
                "actloop.iterations": 0,
                "error.type": "KeyError",
            },
        )
    ]
    event = {
        "exception.type": "KeyError",
        "exception.message": "'no such row'",
        "exception.escaped": "False",
    }
    assert [_exception_events(s) for s in finished] == [[event], [event]]
    assert [s.status.description for s in finished] == ["KeyError: 'no such row'"] * 2


def test_a_failing_model_fails_its_chat_span(spans: Spans) -> None:
    def down(messages: list[BaseMessage]) -> str:
        raise ConnectionError("model server down")

    model = FunctionChatModel(down)
    executor = AgentExecutor(
        agent=create_tool_calling_agent(model, [lookup()], PROMPT), tools=[lookup()]
    )
    with pytest.raises(ConnectionError):
        executor.invoke({"input": "q"})
    (chat,) = [s for s in spans.finished() if s.name == "chat"]
    assert dict(chat.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "functionchatmodel",
        "error.type": "ConnectionError",
    }
    assert chat.status.description == "ConnectionError: model server down"
    assert _exception_events(chat)[0]["exception.type"] == "ConnectionError"


def test_the_deadline_stop_shows_as_the_stop_reason_and_the_late_call_still_ends(
    spans: Spans,
) -> None:
    release = threading.Event()

    def slow(text: str) -> str:
        release.wait(10)
        return "late"

    executor = AgentExecutor(
        agent=ScriptedAgent([AgentAction("slow", "x", "")]),
        tools=[Tool(name="slow", func=slow, description="slow")],
        max_execution_time=0.2,
    )
    assert executor.invoke({"input": "q"})["output"] == STOPPED
    assert [s.name for s in spans.finished()] == ["invoke_agent AgentExecutor"]
    release.set()  # the abandoned call finishes on its worker and closes its span
    assert tree(spans.wait_for(2)) == [
        agent_span(
            [tool_span("slow", "slow")],
            **{"actloop.stop_reason": "max_execution_time", "actloop.iterations": 0},
        )
    ]


async def test_the_deadline_cancels_an_async_call_and_its_span_says_so(spans: Spans) -> None:
    async def hang(text: str) -> str:
        await asyncio.sleep(30)
        return "never"

    tool = Tool(name="hang", func=None, coroutine=hang, description="hangs")
    executor = AgentExecutor(
        agent=ScriptedAgent([AgentAction("hang", "x", "")]), tools=[tool], max_execution_time=0.2
    )
    assert (await executor.ainvoke({"input": "q"}))["output"] == STOPPED
    for _ in range(1000):  # the cancelled task runs its last steps on the loop
        if len(spans.finished()) == 2:
            break
        await asyncio.sleep(0.01)
    assert tree(spans.finished()) == [
        agent_span(
            [tool_span("hang", "hangs", status="ERROR", **{"error.type": "CancelledError"})],
            **{"actloop.stop_reason": "max_execution_time", "actloop.iterations": 0},
        )
    ]


def test_the_iteration_limit_shows_as_the_stop_reason(spans: Spans) -> None:
    plans = [AgentAction("lookup", "a", ""), AgentAction("lookup", "b", "")]
    executor = AgentExecutor(agent=ScriptedAgent(plans), tools=[lookup()], max_iterations=2)
    assert executor.invoke({"input": "q"})["output"] == STOPPED
    assert tree(spans.finished()) == [
        agent_span(
            [tool_span("lookup", "look up"), tool_span("lookup", "look up")],
            **{"actloop.stop_reason": "max_iterations", "actloop.iterations": 2},
        )
    ]


def test_a_stream_closed_early_still_ends_its_agent_span(spans: Spans) -> None:
    plans = [AgentAction("lookup", "a", ""), AgentAction("lookup", "b", "")]
    executor = AgentExecutor(agent=ScriptedAgent(plans), tools=[lookup()])
    stream = executor.stream({"input": "q"})
    assert list(next(stream)) == ["actions", "messages"]  # before the first tool runs
    stream.close()  # the consumer went away (a client disconnected)
    del stream
    gc.collect()
    assert tree(spans.finished()) == [agent_span([], **{"actloop.stop_reason": "closed"})]
