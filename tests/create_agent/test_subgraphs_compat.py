"""`stream(..., subgraphs=True)` against LangGraph's: a parent agent whose tool runs a sub-agent.

Both sides stream the same scripted run; the chunks must be the same in order: namespace (its
`tools:` parts; LangGraph's task ids are hashes, actloop's uuids: the ids are left out), mode and
payload (node updates, state values, with messages as fields; a message's tokens joined in
"messages" mode). Sync and async, one mode as a string and a list of modes, a sub-agent two
levels deep, and `subgraphs=False` (no sub-agent chunk).
"""

from __future__ import annotations

import asyncio
from typing import Any

import langchain_core.messages as lc_messages
import pytest
from _both import UUID, fields, lc_model, reply
from langchain.agents import create_agent as lc_create_agent
from langchain_core.tools import tool as lc_tool

import actloop.messages as al_messages
from actloop.agents import create_agent as al_create_agent
from actloop.testing import ScriptedChatModel
from actloop.tools import tool as al_tool


def al_model(replies: list[dict[str, Any]]) -> Any:
    return ScriptedChatModel([al_messages.AIMessage(**r) for r in replies])


def lc_whole_model(replies: list[dict[str, Any]]) -> Any:
    """LangChain's scripted model, not streaming (its streamed replies lose their tool calls)."""
    model = lc_model(replies)
    model.disable_streaming = True
    return model


SIDES = {
    "lc": (lc_create_agent, lc_whole_model, lc_tool, lc_messages),
    "al": (al_create_agent, al_model, al_tool, al_messages),
}


def delegating(inner: Any, msgs: Any) -> Any:
    """The `delegate` tool function: it runs the agent `inner`."""

    def delegate(query: str) -> str:
        """Ask the sub-agent."""
        answer = inner.invoke({"messages": [msgs.HumanMessage(query, id="q")]})
        return answer["messages"][-1].content

    return delegate


def parent_agent(side: str, depth: int) -> Any:
    """A parent agent calling `delegate`, whose tool runs a sub-agent (`depth` levels)."""
    create, model, make_tool, msgs = SIDES[side]
    sub_model = lc_model if side == "lc" else al_model  # the sub-agent's replies stream
    agent = create(sub_model([reply("sub answer", id="s1")]), [], name="sub0")
    for level in range(1, depth + 1):
        replies = [
            reply("asking", ("delegate", {"query": "hi"}, f"c{level}"), id=f"p{level}a"),
            reply(f"done {level}", id=f"p{level}b"),
        ]
        tools = [make_tool(delegating(agent, msgs))]
        agent = create(model(replies), tools, name=f"level{level}")
    return agent


def plain(chunk: Any, mode: str) -> Any:
    """A chunk's payload as plain data."""
    if mode == "values":
        return fields(chunk["messages"])
    return {node: fields(update["messages"]) for node, update in chunk.items()}


def shaped(chunks: list[Any], modes: Any) -> list[Any]:
    """The chunks without task ids: (namespace's node names, mode, payload)."""
    out: list[Any] = []
    for item in chunks:
        if isinstance(modes, str):
            namespace, mode, payload = item[0], modes, item[1]
        else:
            namespace, mode, payload = item
        out.append(([part.split(":")[0] for part in namespace], mode, plain(payload, mode)))
    return out


def streamed(side: str, modes: Any, depth: int, run_async: bool, subgraphs: bool = True) -> Any:
    agent = parent_agent(side, depth)
    msgs = SIDES[side][3]
    inputs = {"messages": [msgs.HumanMessage("hi", id="h1")]}
    if run_async:

        async def collect() -> list[Any]:
            stream = agent.astream(inputs, stream_mode=modes, subgraphs=subgraphs)
            return [c async for c in stream]

        return asyncio.run(collect())
    return list(agent.stream(inputs, stream_mode=modes, subgraphs=subgraphs))


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("modes", ["updates", ["updates"], ["updates", "values"]], ids=str)
@pytest.mark.parametrize("depth", [1, 2])
def test_subagent_chunks_as_langgraph_streams_them(run_async: bool, modes: Any, depth: int) -> None:
    lc = shaped(streamed("lc", modes, depth, run_async), modes)
    al = shaped(streamed("al", modes, depth, run_async), modes)
    assert al == lc
    assert any(namespace == ["tools"] * depth for namespace, _, _ in al)


def merged(chunks: list[Any]) -> list[Any]:
    """(namespace's node names, mode, payload) with a message's tokens joined: each scripted
    model cuts its reply into tokens its own way, and LangChain's parent model does not stream."""
    out: list[Any] = []
    for namespace, mode, payload in chunks:
        names = [part.split(":")[0] for part in namespace]
        if mode != "messages":
            out.append((names, mode, plain(payload, mode)))
            continue
        message, meta = payload
        id = "<uuid>" if UUID.match(message.id) else message.id  # a tool message's, random
        key = (names, mode, id, meta["langgraph_node"], meta["lc_agent_name"])
        if out and out[-1][:5] == key:
            out[-1] = (*key, out[-1][5] + message.content)
        else:
            out.append((*key, message.content))
    return out


@pytest.mark.parametrize("depth", [1, 2])
def test_subagent_tokens_stream_under_its_namespace(depth: int) -> None:
    modes = ["updates", "messages"]
    lc = merged(streamed("lc", modes, depth, False))
    al = merged(streamed("al", modes, depth, False))
    assert al == lc
    sub_tokens = [c for c in al if c[1] == "messages" and c[4] == "sub0"]
    assert sub_tokens == [(["tools"] * depth, "messages", "s1", "model", "sub0", "sub answer")]


def test_without_subgraphs_no_subagent_chunk() -> None:
    lc = streamed("lc", "updates", 1, False, subgraphs=False)
    al = streamed("al", "updates", 1, False, subgraphs=False)
    assert [plain(c, "updates") for c in al] == [plain(c, "updates") for c in lc]
    assert [list(c) for c in al] == [["model"], ["tools"], ["model"]]
