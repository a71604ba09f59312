"""`astream_events` (v2) of a `create_agent` agent against LangChain 1.5 + LangGraph 1.2.

Both sides run the same scripted replies through a model that streams them the same way
(actloop's `ScriptedChatModel` and its LangChain twin below); the whole event lists are compared
field by field: event, name, tags, metadata, parent ids and data. Run ids become their order of
first appearance (so which events share a run, and each run's parents, are compared too); the
task ids in LangGraph's `checkpoint_ns` metadata become `<task>` (checked to be one per node
run); message ids drawn at random become `<uuid>`; a `Command` is compared as its update. Tool
calls made in parallel run in whichever order their threads finish in LangGraph, so each block of
`tools` events is put in call order first. A model run's end shows its reply without the agent's
`name` on both sides (LangGraph names that very object after the run ended, so it shows the name
too; actloop names the reply the node returns). `shift` moves a later turn's step numbers back
to 1 (LangGraph counts steps across a thread's turns, actloop from each turn's start).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import langchain.agents.middleware as lc_middleware
import langchain_core.messages as lc_messages
import pytest
from _both import UUID, fields, human, lc_tools_of, reply
from langchain.agents import create_agent as lc_create_agent
from langchain_core.language_models.chat_models import BaseChatModel as LcBaseChatModel
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langgraph.checkpoint.memory import InMemorySaver as LcInMemorySaver

import actloop.agents.middleware as al_middleware
import actloop.messages as al_messages
from actloop.agents import create_agent as al_create_agent
from actloop.checkpoint.memory import InMemorySaver
from actloop.exceptions import ActloopDeprecationWarning
from actloop.testing import ScriptedChatModel
from actloop.tools import tool as al_tool

_WORDS = re.compile(r"\s*\S+|\s+")


class LcScriptedChatModel(LcBaseChatModel):
    """LangChain's twin of actloop's `ScriptedChatModel`: the same replies, streamed as the same
    chunks (words, then the last one with the tool call chunks)."""

    replies: list[Any]
    played: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _next(self) -> Any:
        self.played += 1
        return self.replies[self.played - 1]

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        return ChatResult(generations=[ChatGeneration(message=self._next())])

    def _stream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[Any]:
        message = self._next()
        pieces = _WORDS.findall(message.content) if message.content else [message.content]
        chunks = [lc_messages.AIMessageChunk(p, id=message.id) for p in pieces[:-1]]
        calls = [
            {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
            for i, c in enumerate(message.tool_calls)
        ]
        last = lc_messages.AIMessageChunk(
            pieces[-1], id=message.id, tool_call_chunks=calls, chunk_position="last"
        )
        for chunk in [*chunks, last]:
            generation = ChatGenerationChunk(message=chunk)
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.content, chunk=generation)
            yield generation


# LangChain names a model's run after its class: the twin reports actloop's class name
LcScriptedChatModel.__name__ = "ScriptedChatModel"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


ONE_CALL = [reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1"), reply("done now", id="r2")]
TWO_CALLS = [
    reply("Adding.", ("add", {"a": 1, "b": 2}, "c1"), ("add", {"a": 3, "b": 4}, "c2"), id="r1"),
    reply("done now", id="r2"),
]


def _middleware(mw: Any, messages: Any) -> list[Any]:
    @mw.before_model
    def note(state: Any, runtime: Any) -> Any:
        if len(state["messages"]) < 2:
            return {"messages": [messages.HumanMessage("note", id="n1")]}
        return None

    return [note, mw.ModelCallLimitMiddleware(run_limit=5)]


def _agents(replies: list[dict[str, Any]], *, middleware: bool = False, **kw: Any) -> Any:
    lc_kw, al_kw = dict(kw), dict(kw)
    if kw.pop("checkpointer", False):
        lc_kw["checkpointer"], al_kw["checkpointer"] = LcInMemorySaver(), InMemorySaver()
    lc = lc_create_agent(
        LcScriptedChatModel(replies=[lc_messages.AIMessage(**r) for r in replies]),
        lc_tools_of([add]),
        middleware=_middleware(lc_middleware, lc_messages) if middleware else [],
        **lc_kw,
    )
    al = al_create_agent(
        ScriptedChatModel([al_messages.AIMessage(**r) for r in replies]),
        [al_tool(add)],
        middleware=_middleware(al_middleware, al_messages) if middleware else [],
        **al_kw,
    )
    return lc, al


# -- the comparison ------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """Event data as plain values: messages as fields, a Command as its update."""
    if hasattr(value, "type") and hasattr(value, "content"):
        row = fields([value])[0]
        if hasattr(value, "tool_call_chunks"):
            row["tool_call_chunks"] = [dict(c) for c in value.tool_call_chunks]
            row["chunk_position"] = value.chunk_position
        return row
    if type(value).__name__ == "Command":
        return {"command": plain(value.update)}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return "<uuid>" if isinstance(value, str) and UUID.match(value) else value


def _push(event: dict[str, Any]) -> Any:
    """The tool call index of a `tools` event (None for the others)."""
    path = event["metadata"].get("langgraph_path", ())
    if event["metadata"].get("langgraph_node") == "tools" and path[0] == "__pregel_push":
        return path[1]
    chunk = event["data"].get("chunk")
    if event["event"] == "on_chain_stream" and isinstance(chunk, dict) and "tools" in chunk:
        return chunk["tools"]["messages"][0].tool_call_id  # pyright: ignore[reportUnknownMemberType]
    return None


def settled(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each block of `tools` events (and of the graph's tools updates) in call order, each
    call's own events in the order they came."""
    out: list[dict[str, Any]] = []
    block: list[dict[str, Any]] = []
    for event in [*events, None]:
        if event is not None and _push(event) is not None:
            block.append(event)
            continue
        out.extend(sorted(block, key=lambda e: str(_push(e))))
        block = []
        if event is not None:
            out.append(event)
    return out


def _unnamed(event: dict[str, Any]) -> dict[str, Any]:
    """A model run's end with its reply's name left out (see the module docstring)."""
    if event["event"] != "on_chat_model_end":
        return event["data"]
    return {**event["data"], "output": {**event["data"]["output"], "name": None}}


def _shifted(event: dict[str, Any], shift: int) -> dict[str, Any]:
    """The event's step numbers less `shift`."""
    metadata = dict(event["metadata"])
    if "langgraph_step" in metadata:
        metadata["langgraph_step"] -= shift
    tags = [
        f"graph:step:{int(t.removeprefix('graph:step:')) - shift}"
        if t.startswith("graph:step:")
        else t
        for t in event["tags"]
    ]
    return {**event, "metadata": metadata, "tags": tags}


def view(events: list[dict[str, Any]], shift: bool = False) -> list[dict[str, Any]]:
    """Every field of every event, library-neutral (see the module docstring)."""
    if shift:
        first = next(e["metadata"]["langgraph_step"] for e in events if e["parent_ids"])
        events = [_shifted(e, first - 1) for e in events]
    runs: dict[str, int] = {}
    tasks: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    for event in settled(events):
        assert set(event) == {"event", "name", "run_id", "tags", "metadata", "data", "parent_ids"}
        metadata = {k: v for k, v in event["metadata"].items() if k != "lc_versions"}
        for key in ("langgraph_checkpoint_ns", "checkpoint_ns"):
            if key in metadata:
                node, _, task = metadata[key].partition(":")
                metadata[key] = f"{node}:<task {tasks.setdefault(task, len(tasks))}>"
        out.append(
            {
                "event": event["event"],
                "name": event["name"],
                "run": runs.setdefault(event["run_id"], len(runs)),
                "tags": event["tags"],
                "metadata": metadata,
                "parent_ids": [runs.setdefault(p, len(runs)) for p in event["parent_ids"]],
                "data": _unnamed({"event": event["event"], "data": plain(event["data"])}),
            }
        )
    return out


async def _events(agent: Any, message: Any, config: Any = None, **kw: Any) -> list[Any]:
    return [e async for e in agent.astream_events({"messages": [message]}, config, **kw)]


DEPRECATED = "astream_events version='v1' is deprecated. Use version='v2' or astream instead."


def both_v1_events(lc: Any, al: Any, config: Any = None) -> tuple[Any, Any]:
    """The run's v1 events on each side (each warns that v1 is deprecated)."""
    lc_h, al_h = human("hi")
    with pytest.warns(DeprecationWarning, match=DEPRECATED) as warned:
        lc_events = asyncio.run(_events(lc, lc_h, config, version="v1"))
    assert {type(w.message).__name__ for w in warned} == {"LangChainDeprecationWarning"}
    with pytest.warns(ActloopDeprecationWarning, match=DEPRECATED):
        al_events = asyncio.run(_events(al, al_h, config, version="v1"))
    return view(lc_events), view(al_events)


def both_events(
    lc: Any, al: Any, config: Any = None, *, shift: bool = False, **kw: Any
) -> tuple[Any, Any]:
    lc_h, al_h = human("hi")
    lc_events = asyncio.run(_events(lc, lc_h, config, version="v2", **kw))
    al_events = asyncio.run(_events(al, al_h, config, version="v2", **kw))
    return view(lc_events, shift), view(al_events, shift)


# -- tests ---------------------------------------------------------------------------------------


def test_a_tool_call_gives_langgraphs_events() -> None:
    lc, al = both_events(*_agents(ONE_CALL))
    assert al == lc
    assert [(e["event"], e["name"], e["tags"]) for e in al if "stream" not in e["event"]] == [
        ("on_chain_start", "LangGraph", []),
        ("on_chain_start", "model", ["graph:step:1"]),
        ("on_chat_model_start", "ScriptedChatModel", ["seq:step:1"]),
        ("on_chat_model_end", "ScriptedChatModel", ["seq:step:1"]),
        ("on_chain_end", "model", ["graph:step:1"]),
        ("on_chain_start", "tools", ["graph:step:2"]),
        ("on_tool_start", "add", ["seq:step:1"]),
        ("on_tool_end", "add", ["seq:step:1"]),
        ("on_chain_end", "tools", ["graph:step:2"]),
        ("on_chain_start", "model", ["graph:step:3"]),
        ("on_chat_model_start", "ScriptedChatModel", ["seq:step:1"]),
        ("on_chat_model_end", "ScriptedChatModel", ["seq:step:1"]),
        ("on_chain_end", "model", ["graph:step:3"]),
        ("on_chain_end", "LangGraph", []),
    ]


def test_the_model_tokens_carry_the_nodes_metadata() -> None:
    _, al = both_events(*_agents(ONE_CALL))
    tokens = [e for e in al if e["event"] == "on_chat_model_stream"]
    assert [e["data"]["chunk"]["content"] for e in tokens] == ["", "done", " now"]
    assert tokens[1]["metadata"] == {
        "ls_integration": "langchain_chat_model",
        "ls_provider": "scriptedchatmodel",
        "ls_model_type": "chat",
        "langgraph_step": 3,
        "langgraph_node": "model",
        "langgraph_triggers": ("branch:to:model",),
        "langgraph_path": ("__pregel_pull", "model"),
        "langgraph_checkpoint_ns": "model:<task 2>",
        "checkpoint_ns": "model:<task 2>",
    }
    assert tokens[1]["parent_ids"] == [0, 5]


def test_parallel_calls_middleware_nodes_and_a_thread_give_langgraphs_events() -> None:
    lc_agent, al_agent = _agents(TWO_CALLS, middleware=True, checkpointer=True, name="bob")
    config = {"configurable": {"thread_id": "t1"}}
    lc, al = both_events(lc_agent, al_agent, config)
    assert al == lc
    starts = [e["name"] for e in al if e["event"] == "on_chain_start"]
    assert starts == [
        "bob",
        "note.before_model",
        "ModelCallLimitMiddleware.before_model",
        "model",
        "ModelCallLimitMiddleware.after_model",
        "tools",
        "tools",
        "note.before_model",
        "ModelCallLimitMiddleware.before_model",
        "model",
        "ModelCallLimitMiddleware.after_model",
    ]
    assert al[0]["metadata"] == {
        "ls_integration": "langchain_create_agent",
        "lc_agent_name": "bob",
        "thread_id": "t1",
    }


def test_the_graph_streams_each_node_update_and_ends_with_the_state() -> None:
    lc, al = both_events(*_agents(ONE_CALL))
    assert al == lc
    root = [e for e in al if e["run"] == 0]
    assert [list(e["data"]["chunk"]) for e in root if e["event"] == "on_chain_stream"] == [
        ["model"],
        ["tools"],
        ["model"],
    ]
    end = root[-1]
    assert end["event"] == "on_chain_end"
    assert [m["content"] for m in end["data"]["output"]["messages"]] == ["hi", "", "3", "done now"]


def test_filters_keep_the_chosen_runs() -> None:
    lc, al = both_events(*_agents(ONE_CALL), include_types=["chat_model", "tool"])
    assert al == lc
    assert {e["event"] for e in al} == {
        "on_chat_model_start",
        "on_chat_model_stream",
        "on_chat_model_end",
        "on_tool_start",
        "on_tool_end",
    }


def test_a_second_turn_of_a_thread_gives_langgraphs_events() -> None:
    lc_agent, al_agent = _agents(
        [*ONE_CALL, reply("again", id="r3")], checkpointer=True, name="bob"
    )
    config = {"configurable": {"thread_id": "t2"}}
    both_events(lc_agent, al_agent, config)
    lc, al = both_events(lc_agent, al_agent, config, shift=True)
    assert al == lc
    assert al[0]["data"]["input"]["messages"][0]["content"] == "hi"
    assert al[-1]["data"]["output"]["messages"][-1]["content"] == "again"


def test_messages_mode_shows_the_tool_answers_as_langgraph_does() -> None:
    # stream_mode "messages" gives the model's tokens and each message a node wrote that no
    # model streamed (the tools node's answers), with the node's step and path
    lc_agent, al_agent = _agents(ONE_CALL)
    lc_h, al_h = human("hi")
    keys = ("langgraph_step", "langgraph_node", "langgraph_path")

    def seen(agent: Any, message: Any) -> list[Any]:
        chunks = agent.stream({"messages": [message]}, stream_mode="messages")
        return [(plain(m), [meta[k] for k in keys]) for m, meta in chunks]

    al = seen(al_agent, al_h)
    assert al == seen(lc_agent, lc_h)
    assert [(m["type"], m["content"], meta[1]) for m, meta in al] == [
        ("AIMessageChunk", "", "model"),
        ("tool", "3", "tools"),
        ("AIMessageChunk", "done", "model"),
        ("AIMessageChunk", " now", "model"),
    ]


def test_v1_events_equal_langgraphs() -> None:
    lc, al = both_v1_events(*_agents(ONE_CALL))
    assert al == lc
    root = [e for e in al if e["run"] == 0]
    assert [e["event"] for e in root] == [
        "on_chain_start",
        "on_chain_stream",
        "on_chain_stream",
        "on_chain_stream",
        "on_chain_end",
    ]
    assert all(e["parent_ids"] == [] for e in al)
    assert list(root[-1]["data"]["output"]) == ["model"]  # the last update: they do not add up


def test_v1_events_of_parallel_calls_middleware_and_a_thread_equal_langgraphs() -> None:
    lc_agent, al_agent = _agents(TWO_CALLS, middleware=True, checkpointer=True, name="bob")
    lc, al = both_v1_events(lc_agent, al_agent, {"configurable": {"thread_id": "t3"}})
    assert al == lc
    assert len(al) == 53


def test_an_unknown_version_is_refused() -> None:
    _, al = _agents(ONE_CALL)

    async def first() -> Any:
        return await anext(al.astream_events({"messages": [human("hi")[1]]}, version="v3"))

    with pytest.raises(NotImplementedError, match="version='v3'"):
        asyncio.run(first())


def test_a_summary_call_is_traced_inside_its_node_marked_internal() -> None:
    # LangChain runs the summary model inside one more chain run of its own making; on both
    # sides the summary's model run is inside the summarization node, tagged nostream, with
    # LangChain's lc_source
    replies, summary = [reply("final", id="r2")], [reply("SUMMARY", id="s1")]

    def summarizing(create: Any, model: Any, mw: Any, messages: Any) -> Any:
        summarizer = mw.SummarizationMiddleware(
            model=model(summary), trigger=("messages", 3), keep=("messages", 1)
        )
        agent = create(model(replies), [], middleware=[summarizer])
        history = [
            messages.HumanMessage("hi", id="a"),
            messages.AIMessage("hello", id="b"),
            messages.HumanMessage("again", id="c"),
        ]
        return view(asyncio.run(_events_of(agent, history)))

    def lc_model(rs: Any) -> Any:
        return LcScriptedChatModel(replies=[lc_messages.AIMessage(**r) for r in rs])

    def al_model(rs: Any) -> Any:
        return ScriptedChatModel([al_messages.AIMessage(**r) for r in rs])

    for events in (
        summarizing(lc_create_agent, lc_model, lc_middleware, lc_messages),
        summarizing(al_create_agent, al_model, al_middleware, al_messages),
    ):
        node = next(e["run"] for e in events if e["name"] == "SummarizationMiddleware.before_model")
        start = next(
            e
            for e in events
            if e["event"] == "on_chat_model_start"
            and e["metadata"].get("lc_source") == "summarization"
        )
        assert "nostream" in start["tags"]
        assert start["parent_ids"][:2] == [0, node]
        assert start["metadata"]["langgraph_node"] == "SummarizationMiddleware.before_model"
        assert start["data"]["input"]["messages"][0][0]["content"].startswith("<role>")


async def _events_of(agent: Any, history: list[Any]) -> list[Any]:
    return [e async for e in agent.astream_events({"messages": history}, version="v2")]


def test_pii_redaction_leaves_the_token_stream_as_langchain_does() -> None:
    # LangChain 1.5 redacts streamed text only in LangGraph's v3 event protocol; in the
    # messages stream mode and in v2 events the model's tokens come as the model gave them, and
    # the state holds the redacted reply (its id already streamed, so not streamed again)
    replies = [reply("Reach me at alice@example.com today.", id="r1")]

    def agent(create: Any, model: Any, mw: Any) -> Any:
        return create(model, [], middleware=[mw.PIIMiddleware("email", apply_to_output=True)])

    def lc() -> Any:
        model = LcScriptedChatModel(replies=[lc_messages.AIMessage(**r) for r in replies])
        return agent(lc_create_agent, model, lc_middleware)

    def al() -> Any:
        model = ScriptedChatModel([al_messages.AIMessage(**r) for r in replies])
        return agent(al_create_agent, model, al_middleware)

    lc_h, al_h = human("hi")
    lc_chunks = [plain(m) for m, _ in lc().stream({"messages": [lc_h]}, stream_mode="messages")]
    al_chunks = [plain(m) for m, _ in al().stream({"messages": [al_h]}, stream_mode="messages")]
    assert al_chunks == lc_chunks
    assert "".join(c["content"] for c in al_chunks) == "Reach me at alice@example.com today."
    lc_events, al_events = both_events(lc(), al())
    assert al_events == lc_events
    assert al_events[-1]["data"]["output"]["messages"][-1]["content"] == (
        "Reach me at [REDACTED_EMAIL] today."
    )
