"""ChatOpenAI against a hostile or unlucky OpenAI-compatible server (issue 13, items 7, 8 and 16).

Everything goes through the real `openai` SDK to the loopback server of `support/openai_server.py`:
- item 7: a server (or proxy) that echoes the API key never gets it into an error's text, body,
  args or chained causes, the SDK's debug log of response headers, or the CLI's output;
- item 8: odd reply shapes are repaired when their meaning is clear, else raise a `ModelError`;
- item 16: tool-call arguments that cannot be decoded (a 5,000-digit integer, arrays nested 10^5
  deep) become invalid tool calls, and the loop turns them into an observation.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from actloop import AgentExecutor, ChatPromptTemplate, MessagesPlaceholder, tool
from actloop.exceptions import ModelError
from actloop.messages import AIMessage, AIMessageChunk, BaseMessage
from actloop.models import (
    AuthenticationError,
    ChatOpenAI,
    InvalidResponseError,
    ModelAPIError,
    StreamInterruptedError,
)
from actloop.models import _openai_wire as wire
from actloop.tool_calling import create_tool_calling_agent
from support.openai_server import LoopbackServer, Reply, completion_json, error, message, running

from ._support import SEED

KEY = "sk-hardening-0123456789abcdef"
MASK = "**********"


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


def chat(server: LoopbackServer, key: str = KEY, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI("gpt-test", base_url=server.url, api_key=key, max_retries=0, **kwargs)


def body(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    """A reply whose body is `data` as JSON, whatever its shape."""
    return Reply("http", status=status, body=json.dumps(data).encode(), headers=headers or {})


def events(*payloads: Any) -> Reply:
    """An event stream of these payloads (strings as they are, others as JSON), then [DONE]."""
    data = [p if isinstance(p, str) else json.dumps(p) for p in payloads]
    return Reply("stream", events=[*data, "[DONE]"])


def chunk(delta: Any, finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "model": "gpt-test",
        "choices": [{"delta": delta, "finish_reason": finish}],
    }


def reply_text(model: ChatOpenAI, *, streaming: bool) -> AIMessage:
    if not streaming:
        return model.invoke("hi")
    chunks = list(model.stream("hi"))
    merged = chunks[0] + chunks[1:] if len(chunks) > 1 else chunks[0]
    return merged


def full_text(exc: BaseException) -> str:
    """What `--verbose` prints: the traceback with every chained exception."""
    return "".join(traceback.format_exception(exc))


# -- item 7: the API key ----------------------------------------------------------------------

ECHOES = [
    ("status", error(401, f"Incorrect API key provided: {KEY}"), False, AuthenticationError),
    (
        "not json",
        Reply("http", body=f"<html>key={KEY}</html>".encode()),
        False,
        InvalidResponseError,
    ),
    ("no choices", body({"echo": f"Bearer {KEY}"}), False, InvalidResponseError),
    ("error object", body({"error": {"message": f"bad key {KEY}"}}), False, ModelAPIError),
    ("odd shape", body({"choices": [f"{KEY}"]}), False, InvalidResponseError),
    ("error event", events({"error": {"message": f"bad key {KEY}"}}), True, StreamInterruptedError),
    ("garbage event", events(f"oops {KEY}"), True, StreamInterruptedError),
    ("not a stream", body({"echo": KEY}), True, InvalidResponseError),
    ("stream status", error(403, f"key {KEY} is revoked"), True, AuthenticationError),
]


@pytest.mark.parametrize(
    ("reply", "streaming", "kind"), [e[1:] for e in ECHOES], ids=[e[0] for e in ECHOES]
)
def test_an_echoed_key_is_masked_in_every_error(
    server: LoopbackServer, reply: Reply, streaming: bool, kind: type[ModelAPIError]
) -> None:
    server.script(reply)
    with pytest.raises(kind) as info:
        reply_text(chat(server), streaming=streaming)
    exc = info.value
    assert MASK in str(exc)
    for shown in (str(exc), repr(exc), repr(exc.args), repr(exc.body), full_text(exc)):
        assert KEY not in shown
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"  # it was sent


async def test_an_echoed_key_is_masked_on_the_async_path(server: LoopbackServer) -> None:
    server.script(error(401, f"Incorrect API key provided: {KEY}"), events(f"oops {KEY}"))
    with pytest.raises(AuthenticationError) as info:
        await chat(server).ainvoke("hi")
    assert str(info.value) == (
        f"{server.url}/chat/completions answered 401: Incorrect API key provided: {MASK}"
    )
    assert KEY not in full_text(info.value)
    with pytest.raises(StreamInterruptedError) as broken:
        async for _ in chat(server).astream("hi"):
            pass
    assert KEY not in full_text(broken.value)


def test_a_short_key_is_masked_only_as_a_whole_word(server: LoopbackServer) -> None:
    server.script(error(400, "model 'gpt-d' is not found; your key d has no access"))
    with pytest.raises(ModelAPIError) as info:
        chat(server, key="d").invoke("hi")
    assert str(info.value) == (
        f"{server.url}/chat/completions answered 400: model 'gpt-d' is not found; your key "
        f"{MASK} has no access"
    )
    assert info.value.body == {
        "error": {
            "message": f"model 'gpt-d' is not found; your key {MASK} has no access",
            "type": "test_error",
            "code": None,
        }
    }


def test_debug_logs_of_response_headers_mask_an_echoed_key(
    server: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    done = completion_json({"role": "assistant", "content": "fine"}, "stop")
    server.script(body(done, headers={"X-Echo": KEY}))
    with caplog.at_level(logging.DEBUG):
        assert chat(server).invoke("hi").content == "fine"
    assert f"(b'X-Echo', b'{MASK}')" in caplog.text  # the headers were logged, masked
    assert KEY not in caplog.text


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [sys.executable, "-m", "actloop", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_the_cli_never_prints_the_key_even_with_verbose(server: LoopbackServer) -> None:
    server.script(error(401, f"Incorrect API key provided: {KEY}"))
    done = run_cli(
        "run",
        "hi",
        "--model",
        "openai:gpt-test",
        "--base-url",
        server.url,
        "--api-key",
        KEY,
        "--verbose",
    )
    assert done.returncode == 4, done.stderr
    assert KEY not in done.stdout + done.stderr
    assert done.stderr.endswith(
        f"actloop: error: the model failed: {server.url}/chat/completions answered 401: "
        f"Incorrect API key provided: {MASK}\n"
    )
    assert "openai.AuthenticationError" in done.stderr  # the chained SDK error is shown, masked


# -- item 8: odd reply shapes -------------------------------------------------------------------

ADD_CALL = {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"}


def assistant(**fields: Any) -> dict[str, Any]:
    return completion_json({"role": "assistant", **fields}, "tool_calls")


def fn(arguments: Any, name: Any = "add", id: Any = "c1") -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


REPAIRED = [
    ("arguments object", {"content": None, "tool_calls": [fn({"a": 1, "b": 2})]}),
    ("tool_calls dict", {"content": None, "tool_calls": fn('{"a": 1, "b": 2}')}),
    ("tool_calls text", {"content": None, "tool_calls": json.dumps([fn('{"a": 1, "b": 2}')])}),
]


@pytest.mark.parametrize("fields", [r[1] for r in REPAIRED], ids=[r[0] for r in REPAIRED])
def test_repairable_tool_call_shapes_are_repaired(
    server: LoopbackServer, fields: dict[str, Any]
) -> None:
    server.script(body(assistant(**fields)))
    reply = chat(server).invoke("hi")
    assert reply.tool_calls == [ADD_CALL]
    assert reply.invalid_tool_calls == []
    raw = reply.additional_kwargs["tool_calls"]
    assert [c["function"] for c in raw] == [{"name": "add", "arguments": '{"a": 1, "b": 2}'}]


def test_a_numeric_call_id_becomes_text(server: LoopbackServer) -> None:
    server.script(body(assistant(content=None, tool_calls=[fn("{}", id=7)])))
    reply = chat(server).invoke("hi")
    assert reply.tool_calls == [{"name": "add", "args": {}, "id": "7", "type": "tool_call"}]


@pytest.mark.parametrize(("content", "text"), [(42, "42"), (2.5, "2.5"), (True, "true")])
def test_numeric_content_becomes_text(server: LoopbackServer, content: Any, text: str) -> None:
    server.script(body(completion_json({"role": "assistant", "content": content}, "stop")))
    assert chat(server).invoke("hi").content == text


REFUSED = [
    ({"choices": ["x"]}, "choices[0] is a str, not an object"),
    ({"choices": {"0": {}}}, "choices is a dict, not a list"),
    ({"choices": [{"message": "x"}]}, "choices[0].message is a str, not an object"),
    ({"choices": [None]}, "choices[0] is missing or null"),
    ({"choices": [{"message": None}]}, "choices[0].message is missing or null"),
    ({"choices": [{"message": {"tool_calls": [None]}}]}, "tool_calls[0] is missing or null"),
    (
        {"choices": [{"message": {"tool_calls": "x"}}]},
        "tool_calls is a string that is not a JSON list of calls",
    ),
    ({"choices": [{"message": {"tool_calls": [1]}}]}, "tool_calls[0] is a int, not an object"),
    (
        {"choices": [{"message": {"tool_calls": [{"function": "add"}]}}]},
        "tool_calls[0].function is a str, not an object",
    ),
    (
        {"choices": [{"message": {"tool_calls": [fn("{}", name=5)]}}]},
        "tool_calls[0].function.name is a int, not a string",
    ),
    (
        {"choices": [{"message": {"content": {"text": "x"}}}]},
        "content is a dict that is not text or a list of parts",
    ),
    ({"choices": [{"message": {"function_call": "x"}}]}, "function_call is a str, not an object"),
]


@pytest.mark.parametrize(("data", "reason"), REFUSED)
def test_unreadable_shapes_raise_a_model_error(
    server: LoopbackServer, data: dict[str, Any], reason: str
) -> None:
    server.script(body(data))
    with pytest.raises(InvalidResponseError) as info:
        chat(server).invoke("hi")
    assert isinstance(info.value, ModelError)
    assert str(info.value) == (
        f"{server.url}/chat/completions answered 200 with a chat completion of an unexpected "
        f"shape ({reason}): {json.dumps(data)!r}"
    )
    assert (info.value.status_code, info.value.body) == (200, data)


STREAM_REFUSED = [
    ({"choices": ["x"]}, "choices[0] is a str, not an object"),
    (chunk("x"), "choices[0].delta is a str, not an object"),
    (chunk({"tool_calls": ["x"]}), "tool_calls[0] is a str, not an object"),
    (chunk({"tool_calls": [{"index": "0"}]}), "tool_calls[0].index is a str, not an integer"),
    (chunk({"content": {"a": 1}}), "content is a dict that is not text or a list of parts"),
]


@pytest.mark.parametrize(("event", "reason"), STREAM_REFUSED)
def test_unreadable_stream_events_raise_a_model_error(
    server: LoopbackServer, event: dict[str, Any], reason: str
) -> None:
    server.script(events(chunk({"role": "assistant", "content": "Hel"}), event))
    with pytest.raises(StreamInterruptedError) as info:
        list(chat(server).stream("hi"))
    assert str(info.value) == (
        f"the stream from {server.url}/chat/completions broke off after 1 chunk(s) and 3 "
        f"character(s) of text: an event has an unexpected shape ({reason}): "
        f"{json.dumps(event)!r}; what arrived is in .partial"
    )
    assert info.value.partial_text == "Hel"
    assert info.value.body == event


def test_odd_stream_shapes_that_read_clearly_are_repaired(server: LoopbackServer) -> None:
    server.script(
        events(
            chunk({"role": "assistant", "content": 4}),
            chunk({"content": 2}),
            chunk(
                {
                    "tool_calls": {
                        "index": 0,
                        "id": 9,
                        "function": {"name": "add", "arguments": {"a": 1, "b": 2}},
                    }
                }
            ),
            chunk({}, "tool_calls"),
        )
    )
    reply = reply_text(chat(server), streaming=True)
    assert reply.content == "42"
    assert reply.tool_calls == [{**ADD_CALL, "id": "9"}]
    assert reply.invalid_tool_calls == []


def test_the_cli_exits_4_on_an_unreadable_reply(server: LoopbackServer) -> None:
    server.script(events({"choices": ["x"]}))  # the CLI streams
    done = run_cli("run", "hi", "--model", "openai:gpt-test", "--base-url", server.url)
    assert done.returncode == 4, done.stderr
    assert done.stderr == (
        f"actloop: error: the model failed: the stream from {server.url}/chat/completions broke "
        "off after 0 chunk(s) and 0 character(s) of text: an event has an unexpected shape "
        '(choices[0] is a str, not an object): \'{"choices": ["x"]}\'; what arrived is in '
        ".partial\n"
    )


# -- item 16: argument bombs ----------------------------------------------------------------------

BIG_INT = '{"n": ' + "7" * 5_000 + "}"
DEEP = '{"n": ' + "[" * 100_000 + "]" * 100_000 + "}"
BOMBS = [
    (
        "5000 digits",
        BIG_INT,
        "Function square arguments could not be decoded: Exceeds the limit (4300 digits) for "
        "integer string conversion: value has 5000 digits; use sys.set_int_max_str_digits() to "
        "increase the limit",
    ),
    ("1e5 deep", DEEP, "Function square arguments are nested too deeply to decode"),
]


@pytest.mark.parametrize(("arguments", "why"), [b[1:] for b in BOMBS], ids=[b[0] for b in BOMBS])
def test_argument_bombs_become_invalid_tool_calls(
    server: LoopbackServer, arguments: str, why: str
) -> None:
    server.script(message("", [{"id": "c1", "name": "square", "arguments": arguments}]))
    reply = chat(server).invoke("hi")
    assert reply.tool_calls == []
    assert reply.invalid_tool_calls == [
        {"type": "invalid_tool_call", "id": "c1", "name": "square", "args": arguments, "error": why}
    ]


@pytest.mark.parametrize("arguments", [BIG_INT, DEEP], ids=["5000 digits", "1e5 deep"])
def test_streamed_argument_bombs_become_invalid_tool_calls(
    server: LoopbackServer, arguments: str
) -> None:
    server.script(message("", [{"id": "c1", "name": "square", "arguments": arguments}]))
    reply = reply_text(chat(server), streaming=True)
    assert isinstance(reply, AIMessageChunk)
    assert reply.tool_calls == []
    assert [(c["name"], c["args"], c["id"]) for c in reply.invalid_tool_calls] == [
        ("square", arguments, "c1")
    ]


@tool
def square(n: int) -> int:
    """Square a number."""
    return n * n


def agent_over(model: ChatOpenAI, *, stream: bool) -> AgentExecutor:
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
    )
    agent = create_tool_calling_agent(model, [square], prompt)
    return AgentExecutor(
        agent=agent,
        tools=[square],
        handle_parsing_errors=True,
        return_intermediate_steps=True,
        stream_runnable=stream,
    )


@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])
@pytest.mark.parametrize("arguments", [BIG_INT, DEEP], ids=["5000 digits", "1e5 deep"])
def test_argument_bombs_reach_the_loop_as_an_observation(
    server: LoopbackServer, arguments: str, stream: bool
) -> None:
    server.script(
        message("", [{"id": "c1", "name": "square", "arguments": arguments}]),
        message("", [{"id": "c2", "name": "square", "arguments": '{"n": 3}'}]),
        message("9"),
    )
    result = agent_over(chat(server), stream=stream).invoke({"input": "square 3"})
    assert result["output"] == "9"
    (bad, bad_observation), (good, good_observation) = result["intermediate_steps"]
    assert (bad.tool, bad_observation) == ("_Exception", "Invalid or incomplete response")
    assert (good.tool, good.tool_input, good_observation) == ("square", {"n": 3}, 9)


def test_arguments_sent_as_an_object_run_the_tool(server: LoopbackServer) -> None:
    server.script(
        body(assistant(content=None, tool_calls=[fn({"n": 4}, name="square")])),
        message("16"),
    )
    result = agent_over(chat(server), stream=False).invoke({"input": "square 4"})
    assert result["output"] == "16"
    [(action, observation)] = result["intermediate_steps"]
    assert (action.tool, action.tool_input, observation) == ("square", {"n": 4}, 16)
    sent: list[BaseMessage] = server.requests[1]["body"]["messages"]
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == '{"n": 4}'


# -- any shape at all: a reply or a ModelAPIError, nothing else ---------------------------------

FIELDS = [
    "choices",
    "message",
    "delta",
    "content",
    "tool_calls",
    "function",
    "name",
    "arguments",
    "id",
    "index",
    "usage",
    "prompt_tokens",
    "prompt_tokens_details",
    "finish_reason",
    "function_call",
    "refusal",
    "audio",
    "type",
    "text",
]
scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=24,
)
replies = st.fixed_dictionaries(
    {"choices": st.lists(json_values, min_size=1, max_size=2) | json_values},
    optional={"usage": json_values, "id": json_values},
)


@seed(SEED)
@settings(max_examples=300, deadline=None)
@given(data=replies, inner=json_values)
def test_any_reply_shape_is_a_message_or_a_model_error(data: dict[str, Any], inner: Any) -> None:
    for reply in (data, {**data, "choices": [{"message": inner, "delta": inner}]}):
        text = json.dumps(reply)
        try:
            parsed = wire.message_from_body(text, 200, "http://server")
        except ModelAPIError:
            pass
        else:
            assert all(isinstance(c["args"], dict) for c in parsed.tool_calls)
            assert isinstance(parsed.text, str) and repr(parsed)
        events_in = wire.EventStream("http://server")
        got: list[AIMessageChunk] = []
        try:
            for line in (f"data: {text}", "", f"data: {text}", ""):
                if (piece := events_in.feed(line)) is not None:
                    got.append(piece)
        except ModelAPIError:
            pass
        if got:
            merged = got[0] + got[1:]
            assert all(isinstance(c["args"], dict) for c in merged.tool_calls)
            assert isinstance(merged.text, str) and repr(merged)
