"""A streamed chat model call gives the same callbacks and events as langchain-core's fake model.

Message ids are left out: langchain-core names every reply `lc_run-<run id>`, actloop keeps the
provider's id (None for these models).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler as LcHandler
from langchain_core.language_models.fake_chat_models import (
    GenericFakeChatModel as LcFakeChatModel,
)
from langchain_core.messages import AIMessage as LcAIMessage
from langchain_core.runnables import RunnableLambda as LcLambda

from actloop.callbacks import BaseCallbackHandler
from actloop.chat_models import BaseChatModel
from actloop.messages import AIMessageChunk, BaseMessage
from actloop.runnables import RunnableLambda


class GenericFakeChatModel(BaseChatModel):
    """actloop's twin of langchain-core's GenericFakeChatModel: same name, same chunking."""

    _llm_type = "generic-fake-chat-model"

    def __init__(self, replies: list[str]) -> None:
        super().__init__()
        self.replies = iter(replies)

    def _stream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        pieces = re.split(r"(\s)", next(self.replies))
        for i, piece in enumerate(pieces):
            yield AIMessageChunk(piece, chunk_position="last" if i == len(pieces) - 1 else None)


def _norm(value: Any) -> Any:
    """A library-neutral view: messages as (class, type, content, tool calls, position)."""
    if hasattr(value, "content") and hasattr(value, "type"):
        return (
            type(value).__name__,
            value.type,
            value.content,
            list(getattr(value, "tool_calls", [])),
            getattr(value, "chunk_position", None),
        )
    if hasattr(value, "generations"):
        return ("LLMResult", _norm(value.generations))
    if hasattr(value, "message"):
        return (type(value).__name__, _norm(value.message))
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items() if k != "lc_versions"}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _recorder(base: type) -> Any:
    class Recorder(base):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            self.events: list[Any] = []

        def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
            kw.pop("run_id")
            shown = {"type": serialized["type"], "name": serialized["name"]}
            self.events.append(("start", shown, _norm(messages), _norm(kw)))

        def on_llm_new_token(self, token: str, **kw: Any) -> None:
            kw.pop("run_id")
            self.events.append(("token", token, _norm(kw)))

        def on_llm_end(self, response: Any, **kw: Any) -> None:
            kw.pop("run_id")
            self.events.append(("end", _norm(response), _norm(kw)))

    return Recorder()


def test_stream_callbacks_match() -> None:
    theirs, ours = _recorder(LcHandler), _recorder(BaseCallbackHandler)
    lc_model = LcFakeChatModel(messages=iter([LcAIMessage("hello big world")]))
    lc_chunks = list(lc_model.stream("hi", {"callbacks": [theirs]}, stop=["z"]))
    chunks = list(
        GenericFakeChatModel(["hello big world"]).stream("hi", {"callbacks": [ours]}, stop=["z"])
    )
    assert _norm(chunks) == _norm(lc_chunks)
    assert ours.events == theirs.events


def test_invoke_callbacks_match() -> None:
    theirs, ours = _recorder(LcHandler), _recorder(BaseCallbackHandler)
    lc_reply = LcFakeChatModel(messages=iter([LcAIMessage("a b")])).invoke(
        "hi", {"callbacks": [theirs]}
    )
    reply = GenericFakeChatModel(["a b"]).invoke("hi", {"callbacks": [ours]})
    assert _norm(reply) == _norm(lc_reply)
    assert ours.events == theirs.events


def _event_view(event: dict[str, Any]) -> Any:
    return (
        event["event"],
        event["name"],
        _norm(event["data"]),
        event["tags"],
        _norm(event["metadata"]),
        len(event["parent_ids"]),
    )


def _prompt(question: str) -> list[tuple[str, str]]:
    return [("system", "be brief"), ("human", question)]


async def test_prompt_pipe_model_events_match() -> None:
    lc_chain = LcLambda(_prompt) | LcFakeChatModel(messages=iter([LcAIMessage("hi there")]))
    chain = RunnableLambda(_prompt) | GenericFakeChatModel(["hi there"])
    theirs = [_event_view(e) async for e in lc_chain.astream_events("q", version="v2")]
    ours = [_event_view(e) async for e in chain.astream_events("q", version="v2")]
    # The prompt step's own events are compared elsewhere (its end event lacks `input` here).
    assert [e for e in ours if e[1] != "_prompt"] == [e for e in theirs if e[1] != "_prompt"]
    assert [e[0] for e in ours if "chat_model" in e[0]] == [
        "on_chat_model_start",
        "on_chat_model_stream",
        "on_chat_model_stream",
        "on_chat_model_stream",
        "on_chat_model_end",
    ]


async def _root_events(text: str) -> tuple[list[Any], list[Any]]:
    lc_model = LcFakeChatModel(messages=iter([LcAIMessage(text)]))
    theirs = [_event_view(e) async for e in lc_model.astream_events("q", version="v2")]
    model = GenericFakeChatModel([text])
    ours = [_event_view(e) async for e in model.astream_events("q", version="v2")]
    return ours, theirs


async def test_model_astream_events_match() -> None:
    ours, theirs = await _root_events("x y")
    assert ours[1:] == theirs[1:]
    assert ours[0][0] == theirs[0][0] == "on_chat_model_start"


async def test_root_chat_model_start_event_carries_the_raw_input() -> None:
    ours, theirs = await _root_events("x y")
    assert theirs[0][2] == {"input": "q"}
    assert ours[0] == theirs[0]
