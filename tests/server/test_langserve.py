"""LangServe's protocol: the real `langserve.RemoteRunnable` drives a served actloop executor."""

from __future__ import annotations

import asyncio

import httpx
from langchain_core.agents import AgentActionMessageLog
from langchain_core.messages import AIMessage, AIMessageChunk
from langserve import RemoteRunnable

from actloop.server import create_app
from support.serve import Serve

from .agents import make_executor


def remote(serve: Serve) -> tuple[str, RemoteRunnable]:
    url = serve(create_app(make_executor()))
    return url, RemoteRunnable(f"{url}/agent/")


def test_invoke_returns_the_answer(serve: Serve) -> None:
    _, agent = remote(serve)
    assert agent.invoke({"input": "add 2 3"}) == {"input": "add 2 3", "output": "The sum is 5."}


def test_invoke_with_a_bare_question(serve: Serve) -> None:
    _, agent = remote(serve)
    assert agent.invoke("add 4 4") == {"input": "add 4 4", "output": "The sum is 8."}


def test_batch_keeps_the_order_of_inputs(serve: Serve) -> None:
    _, agent = remote(serve)
    outputs = agent.batch([{"input": f"add {i} 100"} for i in range(5)])
    assert [o["output"] for o in outputs] == [f"The sum is {i + 100}." for i in range(5)]


def test_stream_yields_actions_steps_output_as_langchain_objects(serve: Serve) -> None:
    _, agent = remote(serve)
    chunks = list(agent.stream({"input": "add 20 22"}))
    assert [sorted(c) for c in chunks] == [
        ["actions", "messages"],
        ["messages", "steps"],
        ["messages", "output"],
    ]
    action = chunks[0]["actions"][0]
    assert isinstance(action, AgentActionMessageLog)
    assert (action.tool, action.tool_input) == ("add", {"a": 20, "b": 22})
    assert isinstance(action.message_log[0], AIMessageChunk)
    step = chunks[1]["steps"][0]
    assert step["action"] == action and step["observation"] == 42
    assert chunks[2]["output"] == "The sum is 42."
    assert chunks[2]["messages"] == [AIMessage(content="The sum is 42.")]


def test_astream_events_streams_tokens_and_tool_events(serve: Serve) -> None:
    _, agent = remote(serve)

    async def collect() -> list[dict[str, object]]:
        return [e async for e in agent.astream_events({"input": "add 1 1"}, version="v2")]

    events = asyncio.run(collect())
    tokens = [
        e["data"]["chunk"].content  # type: ignore[index]
        for e in events
        if e["event"] == "on_chat_model_stream"
    ]
    assert "".join(t for t in tokens if isinstance(t, str)) == "The sum is 2."
    tool_end = next(e for e in events if e["event"] == "on_tool_end")
    assert (tool_end["name"], tool_end["data"]["output"]) == ("add", 2)  # type: ignore[index]
    assert events[0]["event"] == "on_chain_start" and events[0]["name"] == "AgentExecutor"
    assert events[-1]["event"] == "on_chain_stream"
    assert events[-1]["data"]["chunk"]["output"] == "The sum is 2."  # type: ignore[index]


def test_astream_events_filters_by_type(serve: Serve) -> None:
    _, agent = remote(serve)

    async def collect() -> list[str]:
        stream = agent.astream_events({"input": "add 1 2"}, include_types=["tool"])
        return [e["event"] async for e in stream]

    assert asyncio.run(collect()) == ["on_tool_start", "on_tool_end"]


def test_concurrent_streams_do_not_mix(serve: Serve) -> None:
    _, agent = remote(serve)

    async def one(i: int) -> list[object]:
        chunks = [c async for c in agent.astream({"input": f"add {i} 1000"})]
        return [c["output"] for c in chunks if "output" in c]

    async def many() -> list[list[object]]:
        return await asyncio.gather(*(one(i) for i in range(40)))

    assert asyncio.run(many()) == [[f"The sum is {i + 1000}."] for i in range(40)]


def test_schemas_and_raw_wire_shapes(serve: Serve) -> None:
    url, _ = remote(serve)
    with httpx.Client(base_url=url) as client:
        # the tool-calling agent declares no input or output keys (as in LangChain)
        assert client.get("/agent/input_schema").json() == {
            "title": "AgentExecutorInput",
            "type": "object",
            "properties": {},
            "required": [],
        }
        output = client.get("/agent/output_schema").json()
        assert (output["title"], output["properties"]) == ("AgentExecutorOutput", {})
        config = client.get("/agent/config_schema").json()
        assert sorted(config["properties"]) == ["metadata", "run_name", "tags"]
        reply = client.post("/agent/invoke", json={"input": {"input": "add 3 4"}}).json()
        assert reply["output"] == {"input": "add 3 4", "output": "The sum is 7."}
        assert reply["metadata"]["feedback_tokens"] == []
        with client.stream(
            "POST", "/agent/stream", json={"input": {"input": "add 1 2"}}
        ) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            names = [line for line in response.iter_lines() if line.startswith("event:")]
        assert names == [
            "event: metadata",
            "event: data",
            "event: data",
            "event: data",
            "event: end",
        ]
