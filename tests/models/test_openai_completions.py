"""`actloop.models.OpenAI` (the completions API) against a loopback server of our own: the request
it sends, the text it returns (whole, streamed, async), and an HTTP error as actloop's error."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from actloop import AgentType, Tool, initialize_agent
from actloop.models import BadRequestError, OpenAI
from support.openai_server import USAGE, LoopbackServer, Reply, error, running


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


def _completion(text: str, finish: str = "stop") -> Reply:
    body = {
        "id": "cmpl-1",
        "object": "text_completion",
        "created": 0,
        "model": "tiny",
        "choices": [{"text": text, "index": 0, "finish_reason": finish, "logprobs": None}],
        "usage": USAGE,
    }
    return Reply("http", body=json.dumps(body).encode())


def _events(*pieces: str) -> Reply:
    def event(text: str, finish: str | None) -> str:
        choice = {"text": text, "index": 0, "finish_reason": finish, "logprobs": None}
        data = {"id": "c", "object": "text_completion", "created": 0, "model": "tiny"}
        return json.dumps({**data, "choices": [choice]})

    last = len(pieces) - 1
    return Reply(
        "stream", events=[event(p, "stop" if i == last else None) for i, p in enumerate(pieces)]
    )


def _model(server: LoopbackServer, **kwargs: Any) -> OpenAI:
    return OpenAI("tiny", base_url=server.url, max_retries=0, **kwargs)


def test_invoke_posts_the_prompt_and_returns_the_text(server: LoopbackServer) -> None:
    server.script(_completion(" Paris."))
    reply = _model(server, temperature=0.0, max_tokens=5).invoke("Capital of France:", stop=["\n"])
    assert reply == " Paris."
    assert server.requests[0]["path"] == "/v1/completions"
    assert server.bodies == [
        {
            "model": "tiny",
            "prompt": "Capital of France:",
            "stop": ["\n"],
            "temperature": 0.0,
            "max_tokens": 5,
            "top_p": 1,  # langchain-openai's defaults
            "frequency_penalty": 0,
            "presence_penalty": 0,
            "n": 1,
        }
    ]


def test_generate_reports_finish_reason_and_usage(server: LoopbackServer) -> None:
    server.script(_completion(" a", "length"), _completion(" b"))
    result = _model(server).generate(["1", "2"])
    assert [[(g.text, g.generation_info) for g in gens] for gens in result.generations] == [
        [(" a", {"finish_reason": "length"})],
        [(" b", {"finish_reason": "stop"})],
    ]
    assert result.llm_output == {
        "token_usage": {k: 2 * v for k, v in USAGE.items()},
        "model_name": "tiny",
    }


def test_stream_yields_the_pieces(server: LoopbackServer) -> None:
    server.script(_events("Par", "is", "."))
    assert list(_model(server).stream("Capital:")) == ["Par", "is", "."]
    assert server.bodies[0]["stream"] is True


async def test_async_invoke_and_stream(server: LoopbackServer) -> None:
    server.script(_completion(" Rome."), _events("Ro", "me"))
    model = _model(server)
    assert await model.ainvoke("Capital of Italy:") == " Rome."
    assert [piece async for piece in model.astream("Capital:")] == ["Ro", "me"]


def test_an_http_error_is_a_model_error(server: LoopbackServer) -> None:
    server.script(error(400, "bad prompt"))
    with pytest.raises(BadRequestError) as info:
        _model(server).invoke("x")
    assert "bad prompt" in str(info.value)


def test_a_legacy_agent_runs_on_it(server: LoopbackServer) -> None:
    server.script(
        _completion(" I should echo.\nAction: echo\nAction Input: hi"),
        _completion(" I know.\nFinal Answer: it said hi"),
    )
    tools = [Tool(name="echo", func=lambda x: f"echo {x}", description="Echo.")]
    with warnings.catch_warnings():  # warned once a process: maybe by an earlier test
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = initialize_agent(tools, _model(server), agent=AgentType.ZERO_SHOT_REACT_DESCRIPTION)
    assert agent.invoke({"input": "say hi"})["output"] == "it said hi"
    assert [b["stop"] for b in server.bodies] == [["\nObservation:", "\n\tObservation:"]] * 2
    assert server.bodies[1]["prompt"].endswith(
        "Thought: I should echo.\nAction: echo\nAction Input: hi\nObservation: echo hi\nThought:"
    )
