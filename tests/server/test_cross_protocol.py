"""One durable thread driven across the protocols `actloop serve` speaks, each with its official
client, against a real server process (with a token) over the scripted agent of `agents.py`:
started over OpenAI Responses (`openai`), paused for approval; seen `interrupted` and approved
over the Agent Protocol (`langgraph-sdk`); its answer read back over A2A (`a2a-sdk` `GetTask`) and
Responses; a second turn over MCP (`mcp`, by `thread_id`), seen in the thread's history over the
Agent Protocol and as the thread's next A2A task."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from a2a.client import Client as A2AClient
from a2a.client import ClientConfig, create_client
from a2a.types.a2a_pb2 import GetTaskRequest
from google.protobuf.json_format import MessageToDict
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent
from openai import AsyncOpenAI

from support.serve import start_serve, stop_serve

TOKEN = "cr0ss-t0ken"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SENT = "Sent: sent 'hello'"
LOG = "\nInvoking: `send` with `{'text': 'hello'}`\n\n\n"


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    """`actloop serve` as a process with a token, durable (so `send`, needing approval, is
    there)."""
    env = {"ACTLOOP_TEST_DB": str(tmp_path / "runs.sqlite")}
    proc, url = start_serve("--executor", "server.agents:make_executor", "--token", TOKEN, env=env)
    try:
        yield url
    finally:
        stop_serve(proc)


@pytest.fixture
async def openai_sdk(url: str) -> AsyncIterator[AsyncOpenAI]:
    async with AsyncOpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0) as sdk:
        yield sdk


@pytest.fixture
async def langgraph(url: str) -> AsyncIterator[LangGraphClient]:
    async with get_client(url=url, api_key=TOKEN) as client:
        yield client


@pytest.fixture
async def a2a(url: str) -> AsyncIterator[A2AClient]:
    async with httpx.AsyncClient(headers=AUTH, timeout=30) as http:
        config = ClientConfig(httpx_client=http, streaming=False)
        async with await create_client(url, client_config=config) as client:
            yield client


async def ask_over_mcp(url: str, arguments: dict[str, Any]) -> tuple[str, Any]:
    """Call the `agent` tool with the official MCP client: its text and structured content."""
    async with httpx2.AsyncClient(headers=AUTH, timeout=30) as transport:
        streams = streamable_http_client(f"{url}/mcp", http_client=transport)
        async with McpClient(streams) as client:
            result = await client.call_tool("agent", arguments)
    assert not result.is_error
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text, result.structured_content


def answered(
    t: str, call: str, name: str, args: dict[str, Any], result: str, text: str
) -> list[dict[str, Any]]:
    """The messages of a turn `t` that called `name` once (call id `call`) and answered `text`."""
    asked = {"name": name, "args": args, "id": call, "type": "tool_call"}
    return [
        {"type": "ai", "content": "", "id": f"{t}-ai-0", "tool_calls": [asked]},
        {
            "type": "tool",
            "content": result,
            "tool_call_id": call,
            "name": name,
            "id": f"{t}-tool-0-0",
        },
        {"type": "ai", "content": text, "id": f"{t}-ai-1", "tool_calls": []},
    ]


async def test_one_thread_across_responses_agent_protocol_a2a_and_mcp(
    url: str, openai_sdk: AsyncOpenAI, langgraph: LangGraphClient, a2a: A2AClient
) -> None:
    # 1. OpenAI Responses starts the thread; the run pauses on `send`
    paused = await openai_sdk.responses.create(model="agent", input="send hello")
    thread = paused.id.split("_", 2)[2]
    assert paused.id == f"resp_1_{thread}"
    assert paused.status == "incomplete"
    assert [item.to_dict() for item in paused.output] == [
        {
            "type": "function_call",
            "id": f"fc_1_{thread}_0-0",
            "call_id": "0-0",
            "name": "send",
            "arguments": '{"text":"hello"}',
            "status": "completed",
        },
        {
            "type": "mcp_approval_request",
            "id": "0-0",
            "name": "send",
            "arguments": '{"text":"hello"}',
            "server_label": "agent",
        },
    ]

    # 2. the Agent Protocol sees it interrupted on that call, and approves it
    waiting = {
        "value": {
            "action_requests": [
                {"id": "0-0", "name": "send", "args": {"text": "hello"}, "description": LOG}
            ],
            "review_configs": [
                {"action_name": "send", "allowed_decisions": ["approve", "edit", "reject"]}
            ],
        },
        "id": f"{thread}/0-0",
    }
    assert (await langgraph.threads.get(thread))["status"] == "interrupted"
    state = await langgraph.threads.get_state(thread)
    assert (state["next"], state["interrupts"]) == (["tools"], [waiting])
    asked = {"type": "human", "content": "send hello", "id": f"{thread}-human-0"}
    first_turn = [asked, *answered(thread, "0-0", "send", {"text": "hello"}, "sent 'hello'", SENT)]
    done = await langgraph.runs.wait(thread, "agent", command={"resume": {"approve": True}})
    assert done == {"input": "send hello", "output": SENT, "messages": first_turn}
    assert (await langgraph.threads.get(thread))["status"] == "idle"

    # 3. A2A: turn 1 is task `thread`, completed with the answer; Responses reads it too
    task = MessageToDict(await a2a.get_task(GetTaskRequest(id=thread)))
    assert (task["id"], task["contextId"]) == (thread, thread)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [a["parts"] for a in task["artifacts"]] == [[{"text": SENT}]]
    assert (await openai_sdk.responses.retrieve(paused.id)).output_text == SENT

    # 4. MCP takes the thread's second turn
    text, structured = await ask_over_mcp(url, {"input": "add 2 40", "thread_id": thread})
    assert (text, structured) == (
        "The sum is 42.",
        {"output": "The sum is 42.", "thread_id": thread},
    )

    # 5. the Agent Protocol's history holds both turns (newest first); A2A sees task `thread:2`
    turn = f"{thread}:2"
    second_turn = [
        {"type": "human", "content": "add 2 40", "id": f"{turn}-human-0"},
        *answered(turn, "2:0-0", "add", {"a": 2, "b": 40}, "42", "The sum is 42."),
    ]
    history = await langgraph.threads.get_history(thread)
    assert [h["values"] for h in history] == [
        {"input": "add 2 40", "output": "The sum is 42.", "messages": first_turn + second_turn},
        {"input": "send hello", "output": SENT, "messages": first_turn},
    ]
    latest = await langgraph.threads.get(thread)
    assert (latest["status"], latest["values"]["messages"]) == ("idle", first_turn + second_turn)
    task = MessageToDict(await a2a.get_task(GetTaskRequest(id=turn)))
    assert (task["id"], task["contextId"], task["status"]["state"]) == (
        turn,
        thread,
        "TASK_STATE_COMPLETED",
    )
    assert [a["parts"] for a in task["artifacts"]] == [[{"text": "The sum is 42."}]]
    again = await openai_sdk.responses.retrieve(f"resp_2_{thread}")
    assert again.output_text == "The sum is 42."
