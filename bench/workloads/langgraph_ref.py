"""LangGraph side: a hand-built StateGraph loop (no model) and ``langchain.agents.create_agent``.

Loop overhead uses the prebuilt pieces of a LangGraph agent with the model replaced by a plain
node that emits the scripted tool call (``MessagesState`` + ``ToolNode`` + ``tools_condition``).
The full agent is ``langchain.agents.create_agent`` (LangChain v1's agent, built on LangGraph)
with the same scripted chat model as the LangChain classic workloads.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import StructuredTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from workloads.common import (
    CALLS,
    HUNG_LIMIT,
    HUNG_SLEEP,
    SLOW_TOOL_SECONDS,
    SYSTEM_PROMPT,
    expect,
    now,
)
from workloads.langchain_ref import ScriptedChatModel

UNSUPPORTED: dict[str, str] = {}
NOTES = {
    "loop": "StateGraph(MessagesState) + ToolNode, scripted node instead of a model",
    "hung": "no run deadline; closest is the compiled graph's step_timeout=0.5 (raises)",
    "stream": "first chunk of graph.stream(stream_mode='updates') = the model's tool call",
}


def _noop(x: str) -> str:
    """Does nothing and returns ok."""
    return CALLS.hit()


async def _anoop(x: str) -> str:
    """Does nothing and returns ok."""
    return CALLS.hit()


def _noop_tool(with_async: bool = True) -> Any:
    return StructuredTool.from_function(
        func=_noop,
        coroutine=_anoop if with_async else None,
        name="noop",
        description="Does nothing and returns ok.",
    )


def _call(name: str, cid: str) -> dict[str, Any]:
    return {"name": name, "args": {"x": "x"}, "id": cid}


def _decide(state: MessagesState, n: int, first: str) -> dict[str, Any]:
    k = (len(state["messages"]) - 1) // 2
    if k >= n:
        return {"messages": [AIMessage(content="done")]}
    return {
        "messages": [
            AIMessage(content="", tool_calls=[_call(first if k == 0 else "noop", f"c{k}")])
        ]
    }


def loop_graph(
    n: int, tools: list[Any] | None = None, first: str = "noop", is_async: bool = False
) -> Any:
    """The model-free agent loop: scripted node -> ToolNode -> back, until the node answers."""

    def agent(state: MessagesState) -> dict[str, Any]:
        return _decide(state, n, first)

    async def aagent(state: MessagesState) -> dict[str, Any]:
        return _decide(state, n, first)

    g = StateGraph(MessagesState)
    g.add_node("agent", aagent if is_async else agent)
    g.add_node("tools", ToolNode(tools or [_noop_tool()]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    g.add_edge("tools", "agent")
    return g.compile()


def _cfg(n: int) -> dict[str, Any]:
    return {"recursion_limit": 2 * n + 10}


def _inp(text: str = "q") -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


def _check(out: dict[str, Any], final: str, n: int) -> None:
    last = out["messages"][-1].content
    expect(last == final and CALLS.n == n, f"last message {last!r}, {CALLS.n} tool calls")


def loop_sync(n: int) -> float:
    g = loop_graph(n)
    CALLS.n = 0
    t0 = now()
    out = g.invoke(_inp(), _cfg(n))
    dt = now() - t0
    _check(out, "done", n)
    return dt


async def loop_async(n: int, with_async: bool = True) -> float:
    g = loop_graph(n, [_noop_tool(with_async)], is_async=True)
    CALLS.n = 0
    t0 = now()
    out = await g.ainvoke(_inp(), _cfg(n))
    dt = now() - t0
    _check(out, "done", n)
    return dt


async def loop_async_synctool(n: int) -> float:
    return await loop_async(n, with_async=False)


def _agent(responses: list[Any], tools: list[Any]) -> Any:
    return create_agent(ScriptedChatModel(responses=responses), tools, system_prompt=SYSTEM_PROMPT)


def _agent_n(n: int) -> Any:
    responses: list[Any] = [
        AIMessage(content="", tool_calls=[_call("noop", f"call_{i}")]) for i in range(n)
    ]
    responses.append(AIMessage(content="final answer"))
    return _agent(responses, [_noop_tool()])


def agent_sync(n: int) -> float:
    g = _agent_n(n)
    CALLS.n = 0
    t0 = now()
    out = g.invoke(_inp("hi"), _cfg(n))
    dt = now() - t0
    _check(out, "final answer", n)
    return dt


async def agent_async(n: int) -> float:
    g = _agent_n(n)
    CALLS.n = 0
    t0 = now()
    out = await g.ainvoke(_inp("hi"), _cfg(n))
    dt = now() - t0
    _check(out, "final answer", n)
    return dt


def stream_first(n: int) -> float:
    g = _agent_n(n)
    t0 = now()
    it = iter(g.stream(_inp("hi"), _cfg(n), stream_mode="updates"))
    first = next(it)
    dt = now() - t0
    rest = list(it)
    expect("model" in first and first["model"]["messages"][-1].tool_calls, f"first {first!r}")
    expect(bool(rest), "no more chunks")
    return dt


def _slow_tools(is_async: bool) -> list[Any]:
    def make(name: str) -> Any:
        def slow(x: str) -> str:
            time.sleep(SLOW_TOOL_SECONDS)
            return name

        async def aslow(x: str) -> str:
            await asyncio.sleep(SLOW_TOOL_SECONDS)
            return name

        return StructuredTool.from_function(
            func=None if is_async else slow,
            coroutine=aslow if is_async else None,
            name=name,
            description=f"Takes one second ({name}).",
        )

    return [make(n) for n in ("slow_a", "slow_b", "slow_c")]


def _parallel_agent(is_async: bool) -> Any:
    calls = [_call("slow_a", "c1"), _call("slow_b", "c2"), _call("slow_c", "c3")]
    responses = [AIMessage(content="", tool_calls=calls), AIMessage(content="done")]
    return _agent(responses, _slow_tools(is_async))


def _check_parallel(out: dict[str, Any]) -> None:
    obs = [m.content for m in out["messages"] if m.type == "tool"]
    expect(
        out["messages"][-1].content == "done" and obs == ["slow_a", "slow_b", "slow_c"], repr(obs)
    )


def parallel_sync() -> float:
    g = _parallel_agent(False)
    t0 = now()
    out = g.invoke(_inp("hi"))
    dt = now() - t0
    _check_parallel(out)
    return dt


async def parallel_async() -> float:
    g = _parallel_agent(True)
    t0 = now()
    out = await g.ainvoke(_inp("hi"))
    dt = now() - t0
    _check_parallel(out)
    return dt


def _hang(x: str) -> str:
    """Never returns."""
    time.sleep(HUNG_SLEEP)
    return "late"


async def _ahang(x: str) -> str:
    """Never returns."""
    await asyncio.sleep(HUNG_SLEEP)
    return "late"


def _hung_graph(is_async: bool) -> Any:
    hang = StructuredTool.from_function(
        func=_hang, coroutine=_ahang, name="hang", description="Hangs."
    )
    g = loop_graph(1, [hang, _noop_tool()], first="hang", is_async=is_async)
    g.step_timeout = HUNG_LIMIT
    return g


def hung_sync() -> tuple[float, str]:
    g = _hung_graph(False)
    t0 = now()
    try:
        out = g.invoke(_inp())
        return now() - t0, f"returned {out['messages'][-1].content!r}"
    except Exception as e:  # the closest LangGraph gets: step_timeout raises
        return now() - t0, f"raises {type(e).__name__}"


async def hung_async() -> tuple[float, str]:
    g = _hung_graph(True)
    t0 = now()
    try:
        out = await g.ainvoke(_inp())
        return now() - t0, f"returned {out['messages'][-1].content!r}"
    except Exception as e:
        return now() - t0, f"raises {type(e).__name__}"


def mem_case(kind: str) -> Any:
    def build() -> Any:
        g = loop_graph(20) if kind == "loop" else _agent_n(20)

        def run() -> None:
            out = g.invoke(_inp(), _cfg(20))
            expect(out["messages"][-1].content in ("done", "final answer"), "wrong output")

        return run

    return build


async def many_async(count: int, steps: int) -> dict[str, Any]:
    g = loop_graph(steps, is_async=True)
    CALLS.n = 0
    t0 = now()
    outs = await asyncio.gather(*(g.ainvoke(_inp(str(i)), _cfg(steps)) for i in range(count)))
    dt = now() - t0
    bad = sum(
        1
        for i, o in enumerate(outs)
        if o["messages"][0].content != str(i) or o["messages"][-1].content != "done"
    )
    expect(bad == 0 and CALLS.n == count * steps, f"{bad} wrong outputs, {CALLS.n} tool calls")
    return {"seconds": dt, "checked": len(outs)}
