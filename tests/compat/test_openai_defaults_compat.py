"""The request bodies `actloop.models.OpenAI` and `ChatOpenAI` send with their defaults, against
what langchain-openai 1.8.1 sends for the same calls, recorded from it through a loopback server
(langchain-openai is not a dependency of the dev environment; the recording is the expectation,
asserted exactly). Deliberate exceptions, documented in the README: the completions prompt is
sent as a string (langchain-openai's `invoke` sends a one-item list, its batch form), and fields
langchain-openai sends as null (`logprobs`, `seed`) are left out (null means unset)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from actloop.models import ChatOpenAI, OpenAI
from support.openai_server import USAGE, LoopbackServer, Reply, message, running

# Recorded with langchain-openai 1.8.1: `OpenAI(base_url=..., api_key=...)` and
# `ChatOpenAI(base_url=..., api_key=...)`, each `.invoke("hello")` then `.stream("hello")`.
LANGCHAIN_OPENAI = [
    {
        "frequency_penalty": 0,
        "logprobs": None,
        "max_tokens": 256,
        "model": "gpt-3.5-turbo-instruct",
        "n": 1,
        "presence_penalty": 0,
        "prompt": ["hello"],
        "seed": None,
        "temperature": 0.7,
        "top_p": 1,
    },
    {
        "frequency_penalty": 0,
        "logprobs": None,
        "max_tokens": 256,
        "model": "gpt-3.5-turbo-instruct",
        "n": 1,
        "presence_penalty": 0,
        "prompt": "hello",
        "seed": None,
        "stream": True,
        "temperature": 0.7,
        "top_p": 1,
    },
    {"messages": [{"content": "hello", "role": "user"}], "model": "gpt-3.5-turbo", "stream": False},
    {"messages": [{"content": "hello", "role": "user"}], "model": "gpt-3.5-turbo", "stream": True},
]


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


def _completion() -> Reply:
    choice = {"text": "hi", "index": 0, "finish_reason": "stop", "logprobs": None}
    body = {"id": "c", "object": "text_completion", "created": 0, "model": "m"}
    return Reply("http", body=json.dumps({**body, "choices": [choice], "usage": USAGE}).encode())


def _completion_events() -> Reply:
    choice = {"text": "hi", "index": 0, "finish_reason": "stop", "logprobs": None}
    body = {"id": "c", "object": "text_completion", "created": 0, "model": "m"}
    return Reply("stream", events=[json.dumps({**body, "choices": [choice]})])


def _as_ours(body: dict[str, Any]) -> dict[str, Any]:
    """A recorded body with the documented exceptions applied."""
    kept = {k: v for k, v in body.items() if v is not None}
    if isinstance(kept.get("prompt"), list):
        kept["prompt"] = kept["prompt"][0]
    return kept


def test_default_request_bodies_are_langchain_openais(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    server.script(_completion(), _completion_events(), message("hi"), message("hi"))
    given: dict[str, Any] = {"base_url": server.url, "api_key": "sk-test"}
    assert OpenAI(**given).invoke("hello") == "hi"
    assert "".join(OpenAI(**given).stream("hello")) == "hi"
    assert ChatOpenAI(**given).invoke("hello").content == "hi"
    assert "".join(str(c.content) for c in ChatOpenAI(**given).stream("hello")) == "hi"
    assert server.bodies == [_as_ours(b) for b in LANGCHAIN_OPENAI]


def test_stream_usage_is_asked_for_only_from_openais_own_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    assert ChatOpenAI(api_key="k").stream_usage is True
    assert ChatOpenAI(api_key="k", base_url="http://127.0.0.1:1/v1").stream_usage is False
    custom = ChatOpenAI(api_key="k", base_url="http://127.0.0.1:1/v1", stream_usage=True)
    assert custom.stream_usage is True
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    assert ChatOpenAI(api_key="k").stream_usage is False
