"""Messages: construction, equality, repr, text, chunk merging and OpenAI dict conversion."""

from __future__ import annotations

import subprocess
import sys

import pytest

from actloop.messages import (
    AIMessage,
    AIMessageChunk,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_chunk_to_message,
    message_from_openai,
    message_to_openai,
)


def test_types_and_positional_content() -> None:
    assert [m.type for m in (HumanMessage("a"), AIMessage("a"), SystemMessage("a"))] == [
        "human",
        "ai",
        "system",
    ]
    assert ToolMessage("a", tool_call_id="1").type == "tool"
    assert FunctionMessage("a", name="f").type == "function"
    assert AIMessageChunk("a").type == "AIMessageChunk"
    assert HumanMessage("hi") == HumanMessage(content="hi")


def test_defaults() -> None:
    m = AIMessage("x")
    assert (m.additional_kwargs, m.response_metadata, m.name, m.id) == ({}, {}, None, None)
    assert (m.tool_calls, m.invalid_tool_calls, m.usage_metadata) == ([], [], None)
    assert AIMessage("x", id=5).id == "5"


def test_equality_is_class_and_fields() -> None:
    assert HumanMessage("hi") != AIMessage("hi")
    assert HumanMessage("hi") != HumanMessage("hi", id="1")
    assert AIMessage("x", name="n") == AIMessage("x", name="n")
    assert HumanMessage("hi") != "hi"
    with pytest.raises(TypeError):
        hash(HumanMessage("hi"))


def test_repr_matches_langchain_style() -> None:
    assert repr(HumanMessage("hi")) == (
        "HumanMessage(content='hi', additional_kwargs={}, response_metadata={})"
    )
    assert repr(ToolMessage("o", tool_call_id="1")) == "ToolMessage(content='o', tool_call_id='1')"
    assert repr(AIMessage("x", id="i")) == (
        "AIMessage(content='x', additional_kwargs={}, response_metadata={}, id='i', "
        "tool_calls=[], invalid_tool_calls=[])"
    )


def test_text_joins_text_parts() -> None:
    content = ["a", {"type": "text", "text": "b"}, {"type": "image_url", "image_url": "u"}]
    assert HumanMessage(content).text == "ab"  # type: ignore[arg-type]
    assert AIMessage("plain").text == "plain"


def test_tool_calls_are_normalized() -> None:
    m = AIMessage("", tool_calls=[{"id": "c", "args": {"q": 1}, "name": "s"}])
    assert m.tool_calls == [{"name": "s", "args": {"q": 1}, "id": "c", "type": "tool_call"}]
    assert list(m.tool_calls[0]) == ["name", "args", "id", "type"]
    m = AIMessage("", invalid_tool_calls=[{"name": "s", "args": "{", "id": "c", "error": None}])
    assert m.invalid_tool_calls == [
        {"type": "invalid_tool_call", "id": "c", "name": "s", "args": "{", "error": None}
    ]


def test_openai_tool_calls_in_additional_kwargs_are_parsed() -> None:
    raw = [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
        {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{bad"}},
    ]
    m = AIMessage("", additional_kwargs={"tool_calls": raw})
    assert m.tool_calls == [{"name": "f", "args": {"x": 1}, "id": "a", "type": "tool_call"}]
    assert m.invalid_tool_calls == [
        {"type": "invalid_tool_call", "id": "b", "name": "g", "args": "{bad", "error": None}
    ]


def test_tool_message_coerces_content_and_id() -> None:
    m = ToolMessage(12, tool_call_id=7)
    assert (m.content, m.tool_call_id, m.status, m.artifact) == ("12", "7", "success", None)
    assert ToolMessage([1, "a"], tool_call_id="c").content == ["1", "a"]


def test_usage_metadata_key_order() -> None:
    m = AIMessage("x", usage_metadata={"total_tokens": 3, "output_tokens": 2, "input_tokens": 1})
    assert list(m.usage_metadata or {}) == ["input_tokens", "output_tokens", "total_tokens"]


def test_chunk_add_merges_content_metadata_and_usage() -> None:
    a = AIMessageChunk(
        "Hel",
        id="lc_run-1",
        additional_kwargs={"k": "a"},
        usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
    )
    b = AIMessageChunk(
        "lo",
        id="prov-1",
        additional_kwargs={"k": "b"},
        response_metadata={"finish_reason": "stop"},
        usage_metadata={"input_tokens": 0, "output_tokens": 2, "total_tokens": 2},
    )
    assert a + b == AIMessageChunk(
        "Hello",
        id="prov-1",
        additional_kwargs={"k": "ab"},
        response_metadata={"finish_reason": "stop"},
        usage_metadata={"input_tokens": 1, "output_tokens": 3, "total_tokens": 4},
    )
    rest = [b, AIMessageChunk("!")]
    assert a + rest == a + b + AIMessageChunk("!")


def test_chunk_add_merges_tool_call_chunks_by_index() -> None:
    parts = [
        AIMessageChunk("", tool_call_chunks=[{"name": "s", "args": "", "id": "c1", "index": 0}]),
        AIMessageChunk(
            "", tool_call_chunks=[{"name": None, "args": '{"q": ', "id": None, "index": 0}]
        ),
        AIMessageChunk(
            "",
            tool_call_chunks=[
                {"name": None, "args": '"x"}', "id": None, "index": 0},
                {"name": "t", "args": "[1, 2]", "id": "c2", "index": 1},
            ],
        ),
    ]
    total = parts[0] + parts[1] + parts[2]
    assert total.tool_call_chunks == [
        {"name": "s", "args": '{"q": "x"}', "id": "c1", "index": 0, "type": "tool_call_chunk"},
        {"name": "t", "args": "[1, 2]", "id": "c2", "index": 1, "type": "tool_call_chunk"},
    ]
    assert total.tool_calls == [{"name": "s", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}]
    assert total.invalid_tool_calls == [
        {"type": "invalid_tool_call", "id": "c2", "name": "t", "args": "[1, 2]", "error": None}
    ]


def test_partial_tool_args_parse_as_partial_json() -> None:
    chunk = AIMessageChunk("", tool_call_chunks=[{"name": "s", "args": '{"q": "ab', "index": 0}])
    assert chunk.tool_calls == [{"name": "s", "args": {"q": "ab"}, "id": None, "type": "tool_call"}]
    cut = AIMessageChunk("", tool_call_chunks=[{"name": "s", "args": "{bad", "index": 0}])
    assert cut.tool_calls == [{"name": "s", "args": {}, "id": None, "type": "tool_call"}]


def test_tool_args_parse_as_json_loads_strict_false() -> None:
    """The shared lenient decoder answers as `json.loads(text, strict=False)` does: raw control
    characters inside strings allowed, a leading BOM refused with `loads`'s own error."""
    import json

    from actloop.messages._tool_calls import parse_partial_json

    for text in ['{"q": "a\nb\tc"}', '{"q": [1, 2.5, null, true]}', '"x"', "[]", "{}"]:
        assert parse_partial_json(text) == json.loads(text, strict=False)
    assert parse_partial_json('{"q": "line\none"}') == {"q": "line\none"}
    with pytest.raises(json.JSONDecodeError, match="BOM"):  # as json.loads refuses one in str
        parse_partial_json('\ufeff{"q": 1}')
    assert parse_partial_json('{"q": "ab') == {"q": "ab"}


def test_chunk_list_content_merges_by_index() -> None:
    a = AIMessageChunk([{"type": "text", "text": "a", "index": 0}])
    b = AIMessageChunk([{"type": "text", "text": "b", "index": 0}])
    assert (a + b).content == [{"type": "text", "text": "ab", "index": 0}]


def test_chunk_add_rejects_other_types() -> None:
    with pytest.raises(TypeError, match="unsupported operand type"):
        AIMessageChunk("a") + HumanMessage("b")  # type: ignore[operator]


def test_message_chunk_to_message() -> None:
    chunk = AIMessageChunk("x", id="1", tool_calls=[{"name": "s", "args": {}, "id": "c"}])
    assert message_chunk_to_message(chunk) == AIMessage(
        "x", id="1", tool_calls=[{"name": "s", "args": {}, "id": "c"}]
    )
    human = HumanMessage("h")
    assert message_chunk_to_message(human) is human


def test_to_openai_roles_and_tool_calls() -> None:
    assert message_to_openai(HumanMessage("hi", name="u")) == {
        "role": "user",
        "content": "hi",
        "name": "u",
    }
    assert message_to_openai(SystemMessage("s")) == {"role": "system", "content": "s"}
    ai = AIMessage("", tool_calls=[{"name": "s", "args": {"q": "é"}, "id": "c1"}])
    assert message_to_openai(ai) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"type": "function", "id": "c1", "function": {"name": "s", "arguments": '{"q": "é"}'}}
        ],
    }
    assert message_to_openai(ToolMessage("o", tool_call_id="c1", name="s")) == {
        "role": "tool",
        "content": "o",
        "tool_call_id": "c1",
    }
    assert message_to_openai(FunctionMessage("o", name="f")) == {
        "role": "function",
        "content": "o",
        "name": "f",
    }


def test_from_openai_roles() -> None:
    assert message_from_openai({"role": "user", "content": "hi"}) == HumanMessage("hi")
    assert message_from_openai({"role": "system", "content": "s"}) == SystemMessage("s")
    assert message_from_openai({"role": "developer", "content": "s"}) == SystemMessage(
        "s", additional_kwargs={"__openai_role__": "developer"}
    )
    assert message_from_openai({"role": "tool", "content": "o", "tool_call_id": "c"}) == (
        ToolMessage("o", tool_call_id="c")
    )
    assert message_from_openai({"role": "function", "content": "o", "name": "f"}) == (
        FunctionMessage("o", name="f")
    )
    with pytest.raises(ValueError, match="Unknown OpenAI message role 'robot'"):
        message_from_openai({"role": "robot", "content": "x"})


def test_from_openai_assistant_tool_calls() -> None:
    raw = [
        {"id": "c1", "type": "function", "function": {"name": "s", "arguments": '{"q": 1}'}},
        {"id": "c2", "type": "function", "function": {"name": "t", "arguments": "{x"}},
    ]
    m = message_from_openai({"role": "assistant", "content": None, "tool_calls": raw})
    assert isinstance(m, AIMessage)
    assert m.content == ""
    assert m.additional_kwargs == {"tool_calls": raw}
    assert m.tool_calls == [{"name": "s", "args": {"q": 1}, "id": "c1", "type": "tool_call"}]
    assert m.invalid_tool_calls == [
        {
            "type": "invalid_tool_call",
            "id": "c2",
            "name": "t",
            "args": "{x",
            "error": "Function t arguments:\n\n{x\n\nare not valid JSON. Received JSONDecodeError "
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        }
    ]
    back = message_to_openai(m)
    assert back["tool_calls"] == [
        {"type": "function", "id": "c1", "function": {"name": "s", "arguments": '{"q": 1}'}},
        {"type": "function", "id": "c2", "function": {"name": "t", "arguments": "{x"}},
    ]


def test_import_does_not_load_pydantic() -> None:
    code = "import sys, actloop.messages, actloop.agents; print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_copy_and_pickle_keep_equality() -> None:
    import copy
    import pickle

    m = AIMessageChunk("x", tool_call_chunks=[{"name": "s", "args": "{}", "id": "c", "index": 0}])
    assert copy.deepcopy(m) == m
    assert pickle.loads(pickle.dumps(m)) == m
