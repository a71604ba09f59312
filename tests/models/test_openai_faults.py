"""ChatOpenAI against a loopback server of our own that speaks the chat completions API.

The server plays a script of replies: whole completions (sent as JSON, or as an event stream when
the request asks to stream), HTTP errors, garbage, and connections dropped before or mid-reply. It
records every request it received, so the tests count the SDK's retries exactly.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from actloop import (
    AgentExecutor,
    ChatPromptTemplate,
    MessagesPlaceholder,
    create_tool_calling_agent,
    tool,
)
from actloop.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage
from actloop.models import (
    AuthenticationError,
    BadRequestError,
    ChatOpenAI,
    InvalidResponseError,
    ModelConnectionError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)
from support.openai_server import (
    FAST_RETRY,
    USAGE,
    LoopbackServer,
    Reply,
    completion_json,
    error,
    message,
    running,
    stream_events,
)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


def model(server: LoopbackServer, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI("gpt-test", base_url=server.url, api_key="sk-secret-123", **kwargs)


EXPECTED_USAGE = {
    "input_tokens": 11,
    "output_tokens": 7,
    "total_tokens": 18,
    "input_token_details": {},
    "output_token_details": {},
}


# -- replies that work -----------------------------------------------------------------------------


def test_invoke_sends_the_request_and_reads_the_reply(server: LoopbackServer) -> None:
    server.script(message("Hello there"))
    llm = model(server, temperature=0.5, max_tokens=20)
    reply = llm.invoke([SystemMessage("Be brief."), HumanMessage("Hi")])
    assert reply == AIMessage(
        "Hello there",
        id="chatcmpl-1",
        response_metadata={
            "token_usage": USAGE,
            "model_provider": "openai",
            "model_name": "gpt-test",
            "system_fingerprint": "fp_1",
            "id": "chatcmpl-1",
            "finish_reason": "stop",
            "logprobs": None,
        },
        usage_metadata=EXPECTED_USAGE,  # type: ignore[arg-type]
    )
    [request] = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer sk-secret-123"
    assert request["body"] == {
        "model": "gpt-test",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        "temperature": 0.5,
        "max_tokens": 20,
        "stream": False,
    }


def test_invoke_parses_tool_calls_and_keeps_bad_arguments_as_invalid(
    server: LoopbackServer,
) -> None:
    server.script(
        message(
            None,
            [
                {"id": "call_1", "name": "add", "arguments": '{"a": 1, "b": 2}'},
                {"id": "call_2", "name": "add", "arguments": '{"a": 1,'},
            ],
        )
    )
    reply = model(server).invoke("add things")
    assert reply.content == ""
    assert reply.tool_calls == [
        {"name": "add", "args": {"a": 1, "b": 2}, "id": "call_1", "type": "tool_call"}
    ]
    [bad] = reply.invalid_tool_calls
    assert (bad["name"], bad["args"], bad["id"]) == ("add", '{"a": 1,', "call_2")
    assert reply.response_metadata["finish_reason"] == "tool_calls"


def test_stream_yields_tokens_and_tool_call_deltas_that_sum_to_the_reply(
    server: LoopbackServer,
) -> None:
    server.script(
        message("Let me add", [{"id": "call_1", "name": "add", "arguments": '{"a": 1, "b": 2}'}])
    )
    # stream_usage is on by default only for OpenAI's own URL (as in langchain-openai)
    chunks = list(model(server, stream_usage=True).stream("add 1 and 2", stop=["END"]))
    assert [c.content for c in chunks] == ["", "Let", " me", " add", "", "", "", "", ""]
    assert [c.tool_call_chunks for c in chunks[4:6]] == [
        [{"name": "add", "args": '{"a":', "id": "call_1", "index": 0, "type": "tool_call_chunk"}],
        [{"name": None, "args": ' 1, "b": 2}', "id": None, "index": 0, "type": "tool_call_chunk"}],
    ]
    assert chunks[-2].usage_metadata == EXPECTED_USAGE
    assert chunks[-1].chunk_position == "last"
    whole = chunks[0] + chunks[1:]
    assert whole.content == "Let me add"
    assert whole.tool_calls == [
        {"name": "add", "args": {"a": 1, "b": 2}, "id": "call_1", "type": "tool_call"}
    ]
    assert whole.usage_metadata == EXPECTED_USAGE
    assert whole.id == "chatcmpl-1"
    assert whole.response_metadata == {
        "finish_reason": "tool_calls",
        "model_name": "gpt-test",
        "system_fingerprint": None,
        "model_provider": "openai",
    }
    body = server.bodies[0]
    assert (body["stream"], body["stream_options"], body["stop"]) == (
        True,
        {"include_usage": True},
        ["END"],
    )


def test_stream_usage_false_asks_for_no_usage_chunk(server: LoopbackServer) -> None:
    server.script(message("Hi"), message("Hi"))
    chunks = list(model(server, stream_usage=False).stream("hi"))
    assert "stream_options" not in server.bodies[0]
    list(model(server).stream("hi"))  # a custom base URL: off unless asked, as langchain-openai
    assert "stream_options" not in server.bodies[1]
    assert (chunks[0] + chunks[1:]).usage_metadata is None


async def test_ainvoke_and_astream(server: LoopbackServer) -> None:
    server.script(message("one two"), message("three four"))
    llm = model(server)
    reply = await llm.ainvoke("count")
    assert (reply.content, reply.usage_metadata) == ("one two", EXPECTED_USAGE)
    chunks = [c async for c in llm.astream("count on")]
    assert "".join(str(c.content) for c in chunks) == "three four"
    assert [b.get("stream", False) for b in server.bodies] == [False, True]


def test_bind_tools_and_bind_stop_reach_the_request(server: LoopbackServer) -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    server.script(message("ok"))
    bound = model(server).bind_tools([add], tool_choice="add").bind(stop=["\nObs"])
    bound.invoke("go")
    body = server.bodies[0]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two numbers.",
                "parameters": {
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"],
                    "type": "object",
                },
            },
        }
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert body["stop"] == ["\nObs"]


def test_environment_gives_the_key_and_base_url(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    server.script(message("env"))
    assert ChatOpenAI("gpt-test").invoke("hi").content == "env"
    assert server.requests[0]["headers"]["authorization"] == "Bearer sk-from-env"


def test_a_local_server_needs_no_key(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script(message("local"))
    assert ChatOpenAI("llama", base_url=server.url).invoke("hi").content == "local"
    assert server.requests[0]["headers"]["authorization"] == "Bearer not-needed"


def test_usage_details_and_refusal(server: LoopbackServer) -> None:
    body = completion_json(
        {"role": "assistant", "content": None, "refusal": "I can't help."}, "stop"
    )
    body["usage"] = {
        "prompt_tokens": 20,
        "completion_tokens": 9,
        "total_tokens": 29,
        "prompt_tokens_details": {"cached_tokens": 16, "audio_tokens": None},
        "completion_tokens_details": {"reasoning_tokens": 4},
    }
    server.script(Reply("http", body=json.dumps(body).encode()))
    reply = model(server).invoke("hi")
    assert reply.usage_metadata == {
        "input_tokens": 20,
        "output_tokens": 9,
        "total_tokens": 29,
        "input_token_details": {"cache_read": 16},
        "output_token_details": {"reasoning": 4},
    }
    assert (reply.content, reply.additional_kwargs) == ("", {"refusal": "I can't help."})


# -- retried faults --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [
        error(429, "slow down", FAST_RETRY),
        error(500, "boom", FAST_RETRY),
        error(503, "unavailable", FAST_RETRY),
        Reply("drop"),
    ],
    ids=["429", "500", "503", "dropped"],
)
def test_retryable_faults_are_retried_then_succeed(server: LoopbackServer, fault: Reply) -> None:
    server.script(fault, message("recovered"))
    assert model(server, max_retries=2).invoke("hi").content == "recovered"
    assert len(server.requests) == 2


def test_a_stream_request_is_retried_before_the_stream_starts(server: LoopbackServer) -> None:
    server.script(
        error(429, "slow down", FAST_RETRY), error(502, "bad gateway", FAST_RETRY), message("ok")
    )
    chunks = list(model(server, max_retries=2).stream("hi"))
    assert "".join(str(c.content) for c in chunks) == "ok"
    assert len(server.requests) == 3


def test_rate_limit_that_persists_raises_after_the_retries(server: LoopbackServer) -> None:
    server.script(*[error(429, "quota exceeded", FAST_RETRY)] * 3)
    with pytest.raises(RateLimitError) as info:
        model(server, max_retries=2).invoke("hi")
    assert len(server.requests) == 3
    assert info.value.status_code == 429
    assert info.value.body == {
        "error": {"message": "quota exceeded", "type": "test_error", "code": None}
    }
    assert str(info.value) == (
        f"{server.url}/chat/completions answered 429: quota exceeded "
        "(retried up to max_retries=2 times)"
    )


async def test_server_error_that_persists_raises_after_the_retries_async(
    server: LoopbackServer,
) -> None:
    server.script(*[error(500, "boom", FAST_RETRY)] * 4)
    with pytest.raises(ServerError) as info:
        await model(server, max_retries=3).ainvoke("hi")
    assert len(server.requests) == 4
    assert info.value.status_code == 500


def test_max_retries_zero_makes_one_attempt(server: LoopbackServer) -> None:
    server.script(error(500, "boom", FAST_RETRY), message("never sent"))
    with pytest.raises(ServerError):
        model(server, max_retries=0).invoke("hi")
    assert len(server.requests) == 1


def test_connection_drops_that_persist_raise_a_connection_error(server: LoopbackServer) -> None:
    server.script(Reply("drop"), Reply("drop"))
    with pytest.raises(ModelConnectionError) as info:
        model(server, max_retries=1).invoke("hi")
    assert len(server.requests) == 2
    assert info.value.status_code is None
    assert str(info.value).startswith(f"could not reach {server.url}/chat/completions: ")


def test_a_refused_connection_raises_a_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = ChatOpenAI("gpt-test", base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0)
    with pytest.raises(ModelConnectionError, match="could not reach"):
        llm.invoke("hi")


def test_a_timeout_raises_a_connection_error(server: LoopbackServer) -> None:
    server.script(Reply("message", message={"role": "assistant", "content": "late"}, delay=1.0))
    with pytest.raises(ModelConnectionError, match="timed out"):
        model(server, timeout=0.2, max_retries=0).invoke("hi")


# -- faults that are not retried -------------------------------------------------------------------


def test_bad_request_raises_at_once_with_status_and_body(server: LoopbackServer) -> None:
    server.script(error(400, "Unknown parameter: 'foo'."), message("never sent"))
    with pytest.raises(BadRequestError) as info:
        model(server, max_retries=2).invoke("hi")
    assert len(server.requests) == 1
    assert info.value.status_code == 400
    assert info.value.body == {
        "error": {"message": "Unknown parameter: 'foo'.", "type": "test_error", "code": None}
    }
    assert (
        str(info.value) == f"{server.url}/chat/completions answered 400: Unknown parameter: 'foo'."
    )


def test_authentication_error_never_shows_the_key(server: LoopbackServer) -> None:
    server.script(error(401, "Incorrect API key provided: sk-secret-123."))
    with pytest.raises(AuthenticationError) as info:
        model(server).invoke("hi")
    assert len(server.requests) == 1
    assert "sk-secret-123" not in str(info.value)
    assert "sk-secret-123" not in json.dumps(info.value.body)
    assert str(info.value).endswith("answered 401: Incorrect API key provided: **********.")


@pytest.mark.parametrize("content_type", ["application/json", "text/html"])
def test_a_garbage_body_raises_a_clear_error(server: LoopbackServer, content_type: str) -> None:
    server.script(Reply("http", body=b"<html>gateway hiccup</html>", content_type=content_type))
    with pytest.raises(InvalidResponseError) as info:
        model(server).invoke("hi")
    assert len(server.requests) == 1
    assert str(info.value) == (
        f"{server.url}/chat/completions answered 200 with a body that is not JSON: "
        "'<html>gateway hiccup</html>'"
    )
    assert (info.value.status_code, info.value.body) == (200, "<html>gateway hiccup</html>")


def test_json_that_is_not_a_completion_raises(server: LoopbackServer) -> None:
    server.script(Reply("http", body=b'{"object": "list", "data": []}'))
    with pytest.raises(InvalidResponseError, match=r"not a chat completion \(no choices\)"):
        model(server).invoke("hi")


def test_a_stream_request_answered_with_json_raises(server: LoopbackServer) -> None:
    server.script(Reply("http", body=b'{"hello": 1}'))
    with pytest.raises(InvalidResponseError) as info:
        list(model(server).stream("hi"))
    assert str(info.value) == (
        f"{server.url}/chat/completions answered a streaming request with application/json instead "
        "of an event stream: '{\"hello\": 1}'"
    )


# -- streams cut short -----------------------------------------------------------------------------


def _cut_stream(*, chunked: bool, drop: bool) -> Reply:
    events = stream_events({"role": "assistant", "content": "Hello wor ld"}, "stop", True)
    return Reply("stream", events=events[:3], chunked=chunked, drop=drop)


@pytest.mark.parametrize(
    ("chunked", "drop", "reason"),
    [
        (True, True, "the connection failed: RemoteProtocolError("),
        (False, False, "it ended without a finish_reason or [DONE]"),
    ],
    ids=["connection-dropped", "ended-early"],
)
def test_a_stream_cut_off_midway_raises_with_the_partial_reply(
    server: LoopbackServer, chunked: bool, drop: bool, reason: str
) -> None:
    server.script(_cut_stream(chunked=chunked, drop=drop), message("never sent"))
    received: list[AIMessageChunk] = []
    with pytest.raises(StreamInterruptedError) as info:
        for chunk in model(server, max_retries=2).stream("hi"):
            received.append(chunk)
    assert len(server.requests) == 1
    assert [c.content for c in received] == ["", "Hello", " wor"]
    assert info.value.partial_text == "Hello wor"
    assert info.value.partial is not None and info.value.partial.id == "chatcmpl-1"
    assert str(info.value).startswith(
        f"the stream from {server.url}/chat/completions broke off after 3 chunk(s) "
        f"and 9 character(s) of text: {reason}"
    )


async def test_a_stream_cut_off_midway_raises_async(server: LoopbackServer) -> None:
    server.script(_cut_stream(chunked=True, drop=True))
    with pytest.raises(StreamInterruptedError) as info:
        async for _ in model(server).astream("hi"):
            pass
    assert info.value.partial_text == "Hello wor"


def test_invoke_with_streaming_never_returns_a_truncated_reply(server: LoopbackServer) -> None:
    server.script(_cut_stream(chunked=False, drop=False))
    with pytest.raises(StreamInterruptedError):
        model(server, streaming=True).invoke("hi")


def test_a_stream_that_finished_but_lost_its_usage_chunk_is_complete(
    server: LoopbackServer,
) -> None:
    events = stream_events({"role": "assistant", "content": "Hi"}, "stop", True)
    server.script(Reply("stream", events=events[:-2], drop=True))
    reply = model(server, streaming=True).invoke("hi")
    assert (reply.content, reply.usage_metadata) == ("Hi", None)


def test_garbage_in_a_stream_raises(server: LoopbackServer) -> None:
    events = stream_events({"role": "assistant", "content": "Hi there"}, "stop", True)
    server.script(Reply("stream", events=[*events[:2], "{not json"]))
    with pytest.raises(StreamInterruptedError) as info:
        list(model(server).stream("hi"))
    assert str(info.value).endswith(
        "an event is not JSON: '{not json'; what arrived is in .partial"
    )
    assert info.value.partial_text == "Hi"


def test_an_error_event_in_a_stream_raises(server: LoopbackServer) -> None:
    payload = json.dumps({"error": {"message": "model overloaded"}})
    server.script(Reply("stream", events=[payload]))
    with pytest.raises(StreamInterruptedError) as info:
        list(model(server).stream("hi"))
    assert "the server sent an error: model overloaded" in str(info.value)
    assert info.value.body == {"error": {"message": "model overloaded"}}
    assert info.value.partial is None


# -- an agent run end to end -----------------------------------------------------------------------


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def _agent(server: LoopbackServer, **kwargs: Any) -> AgentExecutor:
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "You are a calculator."),
            ("human", "{input}"),
            MessagesPlaceholder("agent_scratchpad"),
        ]
    )
    agent = create_tool_calling_agent(model(server, **kwargs), [multiply], prompt)
    return AgentExecutor(agent=agent, tools=[multiply], return_intermediate_steps=True)


def _script_agent_run(server: LoopbackServer) -> None:
    server.script(
        message("", [{"id": "call_1", "name": "multiply", "arguments": '{"a": 6, "b": 7}'}]),
        message("6 times 7 is 42."),
    )


def test_an_agent_runs_through_the_server(server: LoopbackServer) -> None:
    _script_agent_run(server)
    result = _agent(server).invoke({"input": "What is 6 times 7?"})
    assert result["output"] == "6 times 7 is 42."
    [(action, observation)] = result["intermediate_steps"]
    assert (action.tool, action.tool_input, action.tool_call_id, observation) == (
        "multiply",
        {"a": 6, "b": 7},
        "call_1",
        42,
    )
    assert [b["stream"] for b in server.bodies] == [True, True]
    assert server.bodies[1]["messages"] == [
        {"role": "system", "content": "You are a calculator."},
        {"role": "user", "content": "What is 6 times 7?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "type": "function",
                    "id": "call_1",
                    "function": {"name": "multiply", "arguments": '{"a": 6, "b": 7}'},
                }
            ],
        },
        {"role": "tool", "content": "42", "tool_call_id": "call_1"},
    ]
    assert server.bodies[0]["tools"][0]["function"]["name"] == "multiply"


async def test_an_agent_runs_through_the_server_async(server: LoopbackServer) -> None:
    _script_agent_run(server)
    result = await _agent(server).ainvoke({"input": "What is 6 times 7?"})
    assert result["output"] == "6 times 7 is 42."
    assert len(server.requests) == 2


def test_a_server_error_mid_run_keeps_the_steps_done(server: LoopbackServer) -> None:
    server.script(
        message("", [{"id": "call_1", "name": "multiply", "arguments": '{"a": 6, "b": 7}'}]),
        *[error(500, "the model crashed", FAST_RETRY)] * 2,
    )
    with pytest.raises(ServerError) as info:
        _agent(server, max_retries=1).invoke({"input": "What is 6 times 7?"})
    assert len(server.requests) == 3
    steps = info.value.intermediate_steps  # type: ignore[attr-defined]
    assert [(a.tool, a.tool_input, o) for a, o in steps] == [("multiply", {"a": 6, "b": 7}, 42)]


def test_a_stream_cut_mid_run_keeps_the_steps_done(server: LoopbackServer) -> None:
    server.script(
        message("", [{"id": "call_1", "name": "multiply", "arguments": '{"a": 6, "b": 7}'}]),
        _cut_stream(chunked=True, drop=True),
    )
    with pytest.raises(StreamInterruptedError) as info:
        _agent(server).invoke({"input": "What is 6 times 7?"})
    assert info.value.partial_text == "Hello wor"
    assert len(info.value.intermediate_steps) == 1  # type: ignore[attr-defined]
