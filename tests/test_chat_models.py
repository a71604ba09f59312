"""BaseChatModel: input conversion, provider hooks, callbacks, events, binding, chains."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from typing import Any
from uuid import UUID, uuid4

import pytest

from actloop.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from actloop.chat_models import BaseChatModel
from actloop.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from actloop.outputs import ChatGeneration, ChatGenerationChunk, LLMResult
from actloop.runnables import RunnableBinding, RunnableConfig, RunnableLambda
from actloop.testing import FunctionChatModel, ScriptedChatModel

# -- provider subclasses exercising the hook defaults --------------------------------------------


class GenerateOnly(BaseChatModel):
    """Implements only `_generate_message`: echoes the last message and the stop list."""

    def _generate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        return AIMessage(f"echo {messages[-1].text} stop={stop} kw={sorted(kwargs)}")


class StreamOnly(BaseChatModel):
    """Implements only `_stream_message`, without marking the last chunk."""

    def _stream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        for piece in re.split(r"(\s)", messages[-1].text):
            yield AIMessageChunk(piece)


class AsyncOnly(BaseChatModel):
    """Implements only `_astream_message`."""

    async def _astream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        yield AIMessageChunk("a")
        yield AIMessageChunk("b", chunk_position="last")


class NoHooks(BaseChatModel):
    """Implements nothing."""


class Failing(BaseChatModel):
    """Streams one chunk, then fails."""

    def _stream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        yield AIMessageChunk("partial")
        raise RuntimeError("provider down")


class Recorder(BaseCallbackHandler):
    """Records chat-model callbacks as (event, args, kwargs) with run ids kept apart."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any, dict[str, Any]]] = []
        self.run_ids: list[UUID] = []

    def _add(self, name: str, args: Any, kw: dict[str, Any]) -> None:
        self.run_ids.append(kw.pop("run_id"))
        self.events.append((name, args, kw))

    def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:  # type: ignore[override]
        self._add("on_chat_model_start", (serialized, messages), kw)

    def on_llm_new_token(self, token: str, **kw: Any) -> None:  # type: ignore[override]
        self._add("on_llm_new_token", token, kw)

    def on_llm_end(self, response: Any, **kw: Any) -> None:  # type: ignore[override]
        self._add("on_llm_end", response, kw)

    def on_llm_error(self, error: BaseException, **kw: Any) -> None:  # type: ignore[override]
        self._add("on_llm_error", repr(error), kw)


def _start(
    cls: str,
    module: str,
    messages: list[BaseMessage],
    *,
    stop: list[str] | None = None,
    type_: str = "chat-model",
    **more: Any,
) -> tuple[str, Any, dict[str, Any]]:
    """The expected on_chat_model_start record of a run with no parent."""
    ls: dict[str, Any] = {"ls_provider": cls.lower(), "ls_model_type": "chat"}
    if stop:
        ls["ls_stop"] = stop
    ls["ls_integration"] = "langchain_chat_model"
    serialized = {
        "lc": 1,
        "type": "not_implemented",
        "id": [*module.split("."), cls],
        "repr": f"{cls}()",
        "name": cls,
    }
    kw = {
        "parent_run_id": None,
        "tags": [],
        "metadata": ls,
        "name": None,
        "invocation_params": {"_type": type_, "stop": stop},
        "options": {"stop": stop},
        "batch_size": 1,
    }
    kw.update(more)
    return ("on_chat_model_start", (serialized, [messages]), kw)


_END_KW: dict[str, Any] = {"parent_run_id": None, "tags": []}


# -- input conversion ----------------------------------------------------------------------------


class _PromptValue:
    def to_messages(self) -> list[BaseMessage]:
        return [SystemMessage("be brief"), HumanMessage("hi")]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("hi", [HumanMessage("hi")]),
        ([HumanMessage("hi")], [HumanMessage("hi")]),
        (
            [("system", "s"), ("human", "h"), ("ai", "a"), ("user", "u"), ("assistant", "b")],
            [
                SystemMessage("s"),
                HumanMessage("h"),
                AIMessage("a"),
                HumanMessage("u"),
                AIMessage("b"),
            ],
        ),
        (["plain"], [HumanMessage("plain")]),
        ([{"role": "user", "content": "d"}], [HumanMessage("d")]),
        ([{"type": "ai", "content": "t"}], [AIMessage("t")]),
        (_PromptValue(), [SystemMessage("be brief"), HumanMessage("hi")]),
    ],
)
def test_input_is_converted_to_messages(given: Any, expected: list[BaseMessage]) -> None:
    model = ScriptedChatModel(["ok"])
    assert model.invoke(given) == AIMessage("ok")
    assert model.calls[0].messages == expected


def test_invalid_input_raises_value_error() -> None:
    model = ScriptedChatModel(["ok"])
    with pytest.raises(
        ValueError, match=r"Invalid input type <class 'int'>\. Must be a PromptValue"
    ):
        model.invoke(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Unexpected message type: 'robot'"):
        model.invoke([("robot", "x")])
    with pytest.raises(ValueError, match=r"has no tool_call_id; pass a ToolMessage"):
        model.invoke([("tool", "x")])
    assert model.calls == []


# -- hook defaults -------------------------------------------------------------------------------


def test_generate_only_model_streams_one_final_chunk() -> None:
    model = GenerateOnly()
    assert model.invoke("hi") == AIMessage("echo hi stop=None kw=[]")
    assert list(model.stream("hi", stop=["X"])) == [
        AIMessageChunk("echo hi stop=['X'] kw=[]", chunk_position="last")
    ]


async def test_generate_only_model_async_twins_use_the_sync_hook() -> None:
    model = GenerateOnly()
    assert await model.ainvoke("hi", foo=1) == AIMessage("echo hi stop=None kw=['foo']")
    assert [c async for c in model.astream("hi")] == [
        AIMessageChunk("echo hi stop=None kw=[]", chunk_position="last")
    ]


def test_stream_only_model_gets_a_closing_chunk_and_invoke_merges() -> None:
    model = StreamOnly()
    assert list(model.stream("a b")) == [
        AIMessageChunk("a"),
        AIMessageChunk(" "),
        AIMessageChunk("b"),
        AIMessageChunk("", chunk_position="last"),
    ]
    result = model.invoke("a b")
    assert type(result) is AIMessage
    assert result == AIMessage("a b")


async def test_stream_only_model_async() -> None:
    model = StreamOnly()
    assert await model.ainvoke("x y") == AIMessage("x y")
    chunks = [c async for c in model.astream("x")]
    assert chunks == [AIMessageChunk("x"), AIMessageChunk("", chunk_position="last")]


async def test_async_only_model() -> None:
    model = AsyncOnly()
    assert await model.ainvoke("hi") == AIMessage("ab")
    assert [c async for c in model.astream("hi")] == [
        AIMessageChunk("a"),
        AIMessageChunk("b", chunk_position="last"),
    ]
    with pytest.raises(NotImplementedError, match="AsyncOnly only implements async hooks"):
        model.invoke("hi")


def test_model_without_hooks_says_what_to_implement() -> None:
    with pytest.raises(
        NotImplementedError, match="NoHooks must implement _generate_message or _stream_message"
    ):
        NoHooks().invoke("hi")


def test_stream_of_nothing_is_an_error_with_callbacks_and_empty_without() -> None:
    class Empty(BaseChatModel):
        def _stream_message(
            self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
        ) -> Iterator[AIMessageChunk]:
            yield from ()

    assert list(Empty().stream("x")) == []
    with pytest.raises(ValueError, match="No generation chunks were returned"):
        Empty().invoke("x")
    with pytest.raises(ValueError, match="No generation chunks were returned"):
        list(Empty().stream("x", {"callbacks": [Recorder()]}))


# -- callbacks -----------------------------------------------------------------------------------


def test_invoke_fires_chat_model_callbacks() -> None:
    recorder = Recorder()
    result = GenerateOnly().invoke("hi", {"callbacks": [recorder]})
    assert result == AIMessage("echo hi stop=None kw=[]")
    assert recorder.events == [
        _start("GenerateOnly", __name__, [HumanMessage("hi")]),
        ("on_llm_end", LLMResult(generations=[[ChatGeneration(result)]]), _END_KW),
    ]
    assert len(set(recorder.run_ids)) == 1


def test_stream_fires_token_callbacks_and_end_with_merged_chunk() -> None:
    recorder = Recorder()
    chunks = list(StreamOnly().stream("a b", {"callbacks": [recorder]}, stop=["z"]))
    tokens = [
        ("on_llm_new_token", c.content, {**_END_KW, "chunk": ChatGenerationChunk(c)})
        for c in chunks
    ]
    merged = AIMessageChunk("a b", chunk_position="last")
    assert recorder.events == [
        _start("StreamOnly", __name__, [HumanMessage("a b")], stop=["z"]),
        *tokens,
        ("on_llm_end", LLMResult(generations=[[ChatGenerationChunk(merged)]]), _END_KW),
    ]


async def test_astream_fires_async_callbacks_in_order() -> None:
    seen: list[str] = []

    class AsyncRecorder(AsyncCallbackHandler):
        async def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
            seen.append(f"start {messages[0][0].text}")

        async def on_llm_new_token(self, token: str, **kw: Any) -> None:
            seen.append(f"token {token!r}")

        async def on_llm_end(self, response: Any, **kw: Any) -> None:
            seen.append(f"end {response.generations[0][0].message.content!r}")

    model = ScriptedChatModel(["one two"])
    chunks = [c.content async for c in model.astream("q", {"callbacks": [AsyncRecorder()]})]
    assert chunks == ["one", " two"]
    assert seen == ["start q", "token 'one'", "token ' two'", "end 'one two'"]


def test_invoke_error_fires_on_llm_error() -> None:
    recorder = Recorder()

    def boom(messages: list[BaseMessage]) -> str:
        raise RuntimeError("no")

    with pytest.raises(RuntimeError, match="no"):
        FunctionChatModel(boom).invoke("hi", {"callbacks": [recorder]})
    assert [e[0] for e in recorder.events] == ["on_chat_model_start", "on_llm_error"]
    assert recorder.events[1] == (
        "on_llm_error",
        "RuntimeError('no')",
        {**_END_KW, "response": LLMResult(generations=[])},
    )


async def test_stream_error_reports_the_partial_reply() -> None:
    recorder = Recorder()
    got: list[str] = []
    with pytest.raises(RuntimeError, match="provider down"):
        async for chunk in Failing().astream("hi", {"callbacks": [recorder]}):
            got.append(chunk.text)
    assert got == ["partial"]
    partial = LLMResult(generations=[[ChatGenerationChunk(AIMessageChunk("partial"))]])
    assert [e[0] for e in recorder.events] == [
        "on_chat_model_start",
        "on_llm_new_token",
        "on_llm_error",
    ]
    assert recorder.events[-1] == (
        "on_llm_error",
        "RuntimeError('provider down')",
        {**_END_KW, "response": partial},
    )


def test_model_options_reach_callbacks() -> None:
    recorder = Recorder()
    run_id = uuid4()
    model = GenerateOnly(callbacks=[recorder], tags=["model"], metadata={"m": 1}, name="Echo")
    model.invoke(
        "hi",
        {"tags": ["call"], "metadata": {"c": 2}, "run_id": run_id, "run_name": "named"},
        temperature=0.5,
    )
    start = recorder.events[0][2]
    assert recorder.run_ids[0] == run_id
    assert start["tags"] == ["call", "model"]
    assert start["metadata"] == {
        "c": 2,
        "ls_provider": "generateonly",
        "ls_model_type": "chat",
        "ls_integration": "langchain_chat_model",
        "m": 1,
    }
    assert start["name"] == "named"
    assert recorder.events[0][1][0]["name"] == "Echo"
    assert start["invocation_params"] == {"_type": "chat-model", "stop": None, "temperature": 0.5}
    assert start["options"] == {"stop": None, "temperature": 0.5}


def test_no_handler_means_no_callback_work() -> None:
    class Counting(GenerateOnly):
        reprs = 0

        def __repr__(self) -> str:
            Counting.reprs += 1
            return "Counting()"

    model = Counting()
    model.invoke("hi")
    list(model.stream("hi"))
    assert Counting.reprs == 0
    model.invoke("hi", {"callbacks": [Recorder()]})
    assert Counting.reprs == 1


def test_chat_model_run_is_a_child_of_the_chain_run() -> None:
    recorder = Recorder()

    class ChainRecorder(Recorder):
        chain_runs: list[UUID]

        def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:  # type: ignore[override]
            self.chain_runs.append(kw["run_id"])

    chain_recorder = ChainRecorder()
    chain_recorder.chain_runs = []
    chain = RunnableLambda(lambda x: x) | ScriptedChatModel(["ok"])
    chain.invoke("hi", {"callbacks": [recorder, chain_recorder]})
    start = recorder.events[0]
    assert start[2]["parent_run_id"] == chain_recorder.chain_runs[0]  # the sequence's run
    assert start[2]["tags"] == ["seq:step:2"]


# -- binding -------------------------------------------------------------------------------------


def test_bind_stop_reaches_the_hook() -> None:
    bound = GenerateOnly().bind(stop=["\nObservation"])
    assert bound.invoke("hi") == AIMessage("echo hi stop=['\\nObservation'] kw=[]")
    assert [c.content for c in bound.stream("hi")] == ["echo hi stop=['\\nObservation'] kw=[]"]


_WEATHER = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def test_bind_tools_passes_openai_schemas() -> None:
    model = ScriptedChatModel(["ok", "again"])
    bound = model.bind_tools([_WEATHER], tool_choice="auto")
    assert isinstance(bound, RunnableBinding)
    assert bound.kwargs == {"tools": [_WEATHER], "tool_choice": "auto"}
    bound.invoke("hi")
    assert model.calls[0].kwargs == {"tools": [_WEATHER], "tool_choice": "auto"}
    assert model.calls[0].tools == [_WEATHER]
    assert model.bind_tools([_WEATHER]).kwargs == {"tools": [_WEATHER]}  # type: ignore[attr-defined]


# -- chains and events ---------------------------------------------------------------------------


def _prompt(question: str) -> list[tuple[str, str]]:
    return [("system", "be brief"), ("human", question)]


def test_prompt_pipe_model_streams_model_chunks() -> None:
    chain = RunnableLambda(_prompt) | ScriptedChatModel(["the answer is"])
    assert [c.content for c in chain.stream("q")] == ["the", " answer", " is"]


async def test_prompt_pipe_model_astream_events() -> None:
    model = ScriptedChatModel(["hi there"])
    chain = RunnableLambda(_prompt) | model
    events = [e async for e in chain.astream_events("q", version="v2")]
    chat = [
        (e["event"], e["name"], e["data"], e["tags"]) for e in events if "chat_model" in e["event"]
    ]
    messages = {"messages": [[SystemMessage("be brief"), HumanMessage("q")]]}
    first = AIMessageChunk("hi")
    last = AIMessageChunk(" there", chunk_position="last")
    merged = AIMessageChunk("hi there", chunk_position="last")
    tags = ["seq:step:2"]
    assert chat == [
        ("on_chat_model_start", "ScriptedChatModel", {"input": messages}, tags),
        ("on_chat_model_stream", "ScriptedChatModel", {"chunk": first}, tags),
        ("on_chat_model_stream", "ScriptedChatModel", {"chunk": last}, tags),
        ("on_chat_model_end", "ScriptedChatModel", {"output": merged, "input": messages}, tags),
    ]
    outer = [(e["event"], e["data"]) for e in events if e["name"] == "RunnableSequence"]
    assert outer == [
        ("on_chain_start", {"input": "q"}),
        ("on_chain_stream", {"chunk": first}),
        ("on_chain_stream", {"chunk": last}),
        ("on_chain_end", {"output": merged}),
    ]
    assert events[4]["metadata"] == {
        "ls_provider": "scriptedchatmodel",
        "ls_model_type": "chat",
        "ls_integration": "langchain_chat_model",
    }


async def test_invoke_inside_a_lambda_streams_tokens_to_astream_events() -> None:
    model = ScriptedChatModel(["a b"])

    def ask(question: str, config: RunnableConfig) -> AIMessage:
        return model.invoke(question, config)

    step = RunnableLambda(ask)
    events = [e async for e in step.astream_events("q", version="v2")]
    chat = [(e["event"], e["data"].get("chunk", e["data"].get("output"))) for e in events]
    assert chat[1:5] == [
        ("on_chat_model_start", None),
        ("on_chat_model_stream", AIMessageChunk("a")),
        ("on_chat_model_stream", AIMessageChunk(" b", chunk_position="last")),
        ("on_chat_model_end", AIMessage("a b")),
    ]
    assert chat[-1] == ("on_chain_end", AIMessage("a b"))


def test_batch_runs_each_input() -> None:
    model = FunctionChatModel(lambda messages: messages[-1].text.upper())
    assert model.batch(["a", "b"]) == [AIMessage("A"), AIMessage("B")]


async def test_abatch_runs_each_input() -> None:
    model = FunctionChatModel(lambda messages: messages[-1].text.upper())
    assert await model.abatch(["a", "b"]) == [AIMessage("A"), AIMessage("B")]
