"""`stream`/`astream` against LangChain 1.5: each stream mode's chunk sequence, field by field."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import langchain.agents.middleware as lc_middleware
import pytest
from _both import agents, fields, human, reply

import actloop.agents.middleware as al_middleware

LC = SimpleNamespace(mw=lc_middleware, side=0)
AL = SimpleNamespace(mw=al_middleware, side=1)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


REPLIES = [
    reply("", ("add", {"a": 1, "b": 2}, "c1"), ("add", {"a": 3, "b": 4}, "c2"), id="r1"),
    reply("done now", id="r2"),
]


def _writer(lib: Any) -> Any:
    @lib.mw.before_model
    def progress(state: Any, runtime: Any) -> Any:
        runtime.stream_writer({"seen": len(state["messages"])})
        return None

    return progress


def plain(value: Any) -> Any:
    """A chunk as plain data: messages as fields, tuples and dicts walked."""
    if hasattr(value, "type") and hasattr(value, "content"):
        return fields([value])[0]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _tool_id(chunk: Any) -> str | None:
    update = chunk[1] if isinstance(chunk, list) and len(chunk) == 2 else chunk
    if isinstance(update, dict) and "tools" in update:
        return update["tools"]["messages"][0]["tool_call_id"]
    return None


def in_call_order(chunks: list[Any]) -> list[Any]:
    """LangGraph yields a step's tool updates as its threads finish them (any order); actloop
    in call order when the step is done. Order each run of tool updates by call id."""
    out: list[Any] = []
    run: list[Any] = []
    for chunk in [*chunks, None]:
        if chunk is not None and _tool_id(chunk) is not None:
            run.append(chunk)
            continue
        out.extend(sorted(run, key=_tool_id))
        run = []
        if chunk is not None:
            out.append(chunk)
    return out


def both_streams(mode: Any, replies: list[dict[str, Any]] = REPLIES) -> tuple[Any, Any]:
    lc, al = agents(replies, [add], lc_middleware=[_writer(LC)], al_middleware=[_writer(AL)])
    lc_h, al_h = human("hi")
    lc_chunks = list(lc.stream({"messages": [lc_h]}, stream_mode=mode))
    al_chunks = list(al.stream({"messages": [al_h]}, stream_mode=mode))
    return in_call_order(plain(lc_chunks)), plain(al_chunks)


@pytest.mark.parametrize("mode", ["values", "updates", "custom", ["updates", "custom", "values"]])
def test_stream_chunks_equal_langchains(mode: Any) -> None:
    lc, al = both_streams(mode)
    assert al == lc


def test_default_stream_mode_is_updates() -> None:
    lc, al = agents(REPLIES, [add])
    lc_h, al_h = human("hi")
    lc_chunks = in_call_order(plain(list(lc.stream({"messages": [lc_h]}))))
    al_chunks = plain(list(al.stream({"messages": [al_h]})))
    assert al_chunks == lc_chunks
    assert [list(c) for c in al_chunks] == [["model"], ["tools"], ["tools"], ["model"]]


def test_updates_name_each_node() -> None:
    _, al = both_streams("updates")
    assert [next(iter(c)) for c in al] == [
        "progress.before_model",
        "model",
        "tools",
        "tools",
        "progress.before_model",
        "model",
    ]


def test_messages_mode_streams_the_model_tokens_with_node_metadata() -> None:
    # Each scripted model cuts its reply into tokens its own way (LangChain's fake model splits
    # on spaces, keeping them as tokens); the tokens add up to the same reply, with the same node
    # metadata.
    replies = [reply("done now", id="r2")]
    lc, al = agents(replies, [add])
    lc_h, al_h = human("hi")
    lc_chunks = list(lc.stream({"messages": [lc_h]}, stream_mode="messages"))
    al_chunks = list(al.stream({"messages": [al_h]}, stream_mode="messages"))
    assert "".join(c.content for c, _ in al_chunks) == "".join(c.content for c, _ in lc_chunks)
    assert [c.content for c, _ in al_chunks] == ["done", " now"]
    assert {c.id for c, _ in al_chunks} == {c.id for c, _ in lc_chunks} == {"r2"}
    keys = ("langgraph_step", "langgraph_node", "langgraph_triggers", "langgraph_path")
    al_meta = [{k: m[k] for k in keys} for _, m in al_chunks]
    lc_meta = [{k: m[k] for k in keys} for _, m in lc_chunks]
    assert (
        al_meta[0]
        == lc_meta[0]
        == {
            "langgraph_step": 1,
            "langgraph_node": "model",
            "langgraph_triggers": ("branch:to:model",),
            "langgraph_path": ("__pregel_pull", "model"),
        }
    )


def test_astream_equals_langchains_astream() -> None:
    lc, al = agents(REPLIES, [add])
    lc_h, al_h = human("hi")

    async def collect(agent: Any, message: Any) -> list[Any]:
        return [c async for c in agent.astream({"messages": [message]}, stream_mode="values")]

    assert plain(asyncio.run(collect(al, al_h))) == plain(asyncio.run(collect(lc, lc_h)))


def test_a_run_error_is_raised_from_the_stream() -> None:
    def boom(x: str) -> str:
        """Fails."""
        raise ValueError("bad thing")

    lc, al = agents([reply("", ("boom", {"x": "1"}, "b1"), id="r1")], [boom])
    lc_h, al_h = human("hi")
    lc_seen: list[Any] = []
    al_seen: list[Any] = []
    with pytest.raises(ValueError, match="bad thing"):
        lc_seen.extend(lc.stream({"messages": [lc_h]}))
    with pytest.raises(ValueError, match="bad thing"):
        al_seen.extend(al.stream({"messages": [al_h]}))
    assert plain(al_seen) == plain(lc_seen)
