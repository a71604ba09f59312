"""actloop.testing: ScriptedChatModel and FunctionChatModel, sync and async."""

from __future__ import annotations

from typing import Any

import pytest

from actloop.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolCall
from actloop.testing import FunctionChatModel, ModelCall, ScriptedChatModel

_CALLS: list[ToolCall] = [
    {"name": "search", "args": {"q": "weather", "n": 2}, "id": "call_1", "type": "tool_call"},
    {"name": "lookup", "args": {}, "id": "call_2", "type": "tool_call"},
]
_USAGE: Any = {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}


def _sum(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


# -- ScriptedChatModel ---------------------------------------------------------------------------


def test_each_call_takes_the_next_response() -> None:
    reply = AIMessage("second", id="r2")
    model = ScriptedChatModel(["first", reply])
    assert model.invoke("a") == AIMessage("first")
    assert model.invoke("b") is reply
    model.assert_complete()


def test_stream_splits_words_keeping_spaces() -> None:
    model = ScriptedChatModel(["Hello  big world!"])
    assert list(model.stream("hi")) == [
        AIMessageChunk("Hello"),
        AIMessageChunk("  big"),
        AIMessageChunk(" world!", chunk_position="last"),
    ]


def test_stream_with_chunk_size() -> None:
    model = ScriptedChatModel(["abcdefg"], chunk_size=3)
    assert [c.content for c in model.stream("hi")] == ["abc", "def", "g"]


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="chunk_size must be a positive int or None, got 0"):
        ScriptedChatModel(["x"], chunk_size=0)


def test_empty_content_streams_one_chunk() -> None:
    model = ScriptedChatModel([AIMessage("", tool_calls=_CALLS)])
    chunks = list(model.stream("hi"))
    assert len(chunks) == 1
    assert chunks[0].content == ""
    assert chunks[0].tool_calls == _CALLS


def test_tool_calls_and_usage_arrive_in_the_last_chunk() -> None:
    reply = AIMessage(
        "Let me look.",
        id="msg_1",
        tool_calls=_CALLS,
        usage_metadata=_USAGE,
        response_metadata={"finish_reason": "tool_calls"},
    )
    chunks = list(ScriptedChatModel([reply]).stream("hi"))
    assert chunks[0] == AIMessageChunk("Let", id="msg_1")
    last = chunks[-1]
    assert last.content == " look."
    assert last.tool_call_chunks == [
        {
            "name": "search",
            "args": '{"q": "weather", "n": 2}',
            "id": "call_1",
            "index": 0,
            "type": "tool_call_chunk",
        },
        {"name": "lookup", "args": "{}", "id": "call_2", "index": 1, "type": "tool_call_chunk"},
    ]
    assert last.usage_metadata == _USAGE
    assert last.chunk_position == "last"
    merged = _sum(chunks)
    assert merged.content == "Let me look."
    assert merged.tool_calls == _CALLS
    assert merged.usage_metadata == _USAGE
    assert merged.response_metadata == {"finish_reason": "tool_calls"}
    assert merged.id == "msg_1"


def test_invalid_tool_calls_survive_streaming() -> None:
    bad: Any = {"name": "search", "args": "not json", "id": "c9", "error": None}
    reply = AIMessage("", invalid_tool_calls=[bad])
    merged = _sum(list(ScriptedChatModel([reply]).stream("hi")))
    assert merged.tool_calls == []
    assert merged.invalid_tool_calls == [{**bad, "type": "invalid_tool_call"}]


def test_stop_cuts_the_content_before_the_first_stop_sequence() -> None:
    text = "Action: search\nAction Input: x\nObservation: made up\nThought: more"
    model = ScriptedChatModel([text, text])
    bound = model.bind(stop=["\nThought", "\nObservation"])
    assert bound.invoke("q") == AIMessage("Action: search\nAction Input: x")
    assert "".join(str(c.content) for c in bound.stream("q")) == "Action: search\nAction Input: x"
    assert [call.stop for call in model.calls] == [["\nThought", "\nObservation"]] * 2


def test_calls_record_messages_stop_and_kwargs() -> None:
    model = ScriptedChatModel(["a", "b"])
    model.invoke([("human", "one")], stop=["X"])
    list(model.stream("two", temperature=0))
    assert model.calls == [
        ModelCall([HumanMessage("one")], ["X"], {}),
        ModelCall([HumanMessage("two")], None, {"temperature": 0}),
    ]
    assert repr(model.calls[1]) == (
        "ModelCall(messages=[HumanMessage(content='two', additional_kwargs={}, "
        "response_metadata={})], stop=None, kwargs={'temperature': 0})"
    )


def test_exhausted_script_says_how_many_responses_there_were() -> None:
    model = ScriptedChatModel(["only"])
    model.invoke("a")
    with pytest.raises(
        AssertionError,
        match=r"got call 2 but was scripted with 1 response\(s\); add more responses",
    ):
        model.invoke("b")
    with pytest.raises(AssertionError, match="got call 3"):
        list(model.stream("c"))


def test_assert_complete_names_the_unused_responses() -> None:
    model = ScriptedChatModel(["a", "b", "c"])
    model.invoke("x")
    assert model.remaining == 2
    with pytest.raises(
        AssertionError, match=r"has 2 unused response\(s\) of 3; it was called 1 time\(s\)"
    ):
        model.assert_complete()


def test_bind_tools_shares_the_script() -> None:
    weather = {
        "type": "function",
        "function": {"name": "weather", "description": "Weather.", "parameters": {}},
    }
    model = ScriptedChatModel(["with tools", "plain"])
    with_tools = model.bind_tools([weather])
    assert with_tools.invoke("a") == AIMessage("with tools")
    assert model.invoke("b") == AIMessage("plain")
    assert model.calls[0].tools == [weather]
    assert model.calls[1].tools is None
    model.assert_complete()


def test_batch_consumes_one_response_per_input() -> None:
    model = ScriptedChatModel(["r"] * 8)
    assert model.batch([str(i) for i in range(8)]) == [AIMessage("r")] * 8
    model.assert_complete()
    assert sorted(c.messages[0].text for c in model.calls) == [str(i) for i in range(8)]


async def test_async_invoke_and_stream() -> None:
    model = ScriptedChatModel(["a b", AIMessage("c", tool_calls=_CALLS[:1])])
    assert await model.ainvoke("x") == AIMessage("a b")
    chunks = [c async for c in model.astream("y")]
    assert len(chunks) == 1
    assert (chunks[0].content, chunks[0].tool_calls) == ("c", _CALLS[:1])
    model.assert_complete()


def test_bad_response_type_is_rejected_at_construction() -> None:
    with pytest.raises(TypeError, match="must be an AIMessage or a str, got int"):
        ScriptedChatModel([1])  # type: ignore[list-item]


# -- FunctionChatModel ---------------------------------------------------------------------------


def test_function_of_the_messages_plays_the_model() -> None:
    def reply(messages: list[BaseMessage]) -> str:
        return f"you said {messages[-1].text}"

    model = FunctionChatModel(reply)
    assert model.invoke("hi") == AIMessage("you said hi")
    assert [c.content for c in model.stream("yo")] == ["you", " said", " yo"]
    assert model.calls == [
        ModelCall([HumanMessage("hi")], None, {}),
        ModelCall([HumanMessage("yo")], None, {}),
    ]


def test_function_gets_the_kwargs_it_accepts() -> None:
    seen: list[dict[str, Any]] = []

    def everything(messages: list[BaseMessage], **kwargs: Any) -> AIMessage:
        seen.append(kwargs)
        return AIMessage("", tool_calls=_CALLS)

    def only_stop(messages: list[BaseMessage], stop: list[str] | None = None) -> str:
        seen.append({"stop": stop})
        return "x"

    assert FunctionChatModel(everything).invoke("a", stop=["S"], tools=[]).tool_calls == _CALLS
    FunctionChatModel(only_stop).invoke("a", stop=["S"], tools=[])
    FunctionChatModel(only_stop).invoke("a", tools=[])
    assert seen == [{"stop": ["S"], "tools": []}, {"stop": ["S"]}, {"stop": None}]


async def test_async_function() -> None:
    async def reply(messages: list[BaseMessage]) -> str:
        return "async reply"

    model = FunctionChatModel(reply)
    assert await model.ainvoke("hi") == AIMessage("async reply")
    assert [c.content async for c in model.astream("hi")] == ["async", " reply"]
    with pytest.raises(TypeError, match="is async; call ainvoke or astream instead"):
        model.invoke("hi")


async def test_sync_function_on_the_async_path() -> None:
    model = FunctionChatModel(lambda messages: "sync")
    assert await model.ainvoke("hi") == AIMessage("sync")


def test_function_returning_a_bad_type() -> None:
    model = FunctionChatModel(lambda messages: 42)
    with pytest.raises(TypeError, match="must be an AIMessage or a str, got int"):
        model.invoke("hi")
