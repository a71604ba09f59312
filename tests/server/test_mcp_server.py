"""`actloop serve`'s `/mcp`: the served agent as an MCP tool, driven by the official `mcp` client
in both protocol eras (the 2025 `initialize` handshake and the 2026-07-28 revision) and by
actloop's own `MCPToolset` (an actloop agent calling an actloop agent), against a real server
process over loopback with a scripted model (tests/server/agents.py)."""

from __future__ import annotations

import asyncio
import fcntl
import json
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from actloop import AgentExecutor, RunnableMultiActionAgent
from actloop.checkpoint import SqliteCheckpointer
from actloop.mcp import MCPToolset
from actloop.messages import AIMessage, BaseMessage, HumanMessage
from actloop.prompts import ChatPromptTemplate
from actloop.server import create_app
from actloop.testing import FunctionChatModel, ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent
from support.serve import Serve, free_port, start_serve, stop_serve

from .agents import make_executor

TOKEN = "mcp-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ERAS = {"auto": "2026-07-28", "legacy": "2025-11-25"}
TOOL = {
    "name": "agent",
    "description": (
        "Ask an actloop agent; it answers using its tools: add (Add two integers.); nap (Sleep, "
        "then record that the nap ended in $ACTLOOP_TEST_LOG (when set).); flaky (Fail while the "
        "file named by $ACTLOOP_TEST_FAIL exists (a run that fails, then resumes).); send (Send "
        "a message (needs a person's approval).). Give a result's thread_id to continue that "
        "conversation."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "input": {"type": "string"},
            "thread_id": {
                "type": "string",
                "description": "continue this thread (a result's thread_id) with a new turn",
            },
        },
        "required": ["input"],
        "additionalProperties": False,
    },
    "outputSchema": {
        "type": "object",
        "properties": {"output": {}, "thread_id": {"type": "string"}},
        "required": ["output", "thread_id"],
    },
}

Progress = list[tuple[float, float | None, str | None]]


@dataclass
class Served:
    url: str
    down: Path
    """While this file exists, the `flaky` tool raises."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`actloop serve` with a token, durable (so the `send` tool that needs approval is there)."""
    folder = tmp_path_factory.mktemp("mcp")
    env = {
        "ACTLOOP_TEST_DB": str(folder / "runs.sqlite"),
        "ACTLOOP_TEST_FAIL": str(folder / "down"),
    }
    proc, url = start_serve("--executor", "server.agents:make_executor", "--token", TOKEN, env=env)
    try:
        yield Served(url, folder / "down")
    finally:
        stop_serve(proc)


@pytest.fixture
async def http(served: Served) -> AsyncIterator[httpx.AsyncClient]:
    """The threads API of the served agent, with the token."""
    async with httpx.AsyncClient(base_url=served.url, headers=AUTH, timeout=30) as client:
        yield client


@asynccontextmanager
async def connect(url: str, mode: str = "auto") -> AsyncIterator[Client]:
    """The official client on `url`/mcp with the bearer token, in the given era."""
    transport = httpx2.AsyncClient(headers=AUTH, timeout=30)
    async with transport:
        streams = streamable_http_client(f"{url}/mcp", http_client=transport)
        async with Client(streams, mode=mode) as client:
            assert client.protocol_version == ERAS[mode]
            yield client


async def call(
    client: Client, arguments: dict[str, Any], name: str = "agent"
) -> tuple[CallToolResult, Progress]:
    """Call the tool with a progress token; the result and the progress notifications."""
    seen: Progress = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    result = await client.call_tool(name, arguments, progress_callback=progress)
    return result, seen


def text(result: CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    return result.content[0].text


async def follow_to_end(http: httpx.AsyncClient, thread: str) -> list[str]:
    """The names of the thread's events until its run is over (the stream ends then)."""
    names: list[str] = []
    async with http.stream("GET", f"/threads/{thread}/events") as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                names.append(line[7:])
    return names


async def state_of(http: httpx.AsyncClient, thread: str) -> dict[str, Any]:
    """`GET /threads/{thread}`: the Agent Protocol's thread (its status and values)."""
    response = await http.get(f"/threads/{thread}")
    assert response.status_code == 200
    return response.json()


async def turns(http: httpx.AsyncClient, thread: str) -> int:
    """How many turns the thread has (its history holds one state per turn)."""
    response = await http.get(f"/threads/{thread}/history")
    assert response.status_code == 200
    return len(response.json())


async def resume(http: httpx.AsyncClient, thread: str, decision: Any) -> None:
    """Resume the thread's run over the Agent Protocol (`command.resume`), in the background."""
    body = {"assistant_id": "agent", "command": {"resume": decision}}
    response = await http.post(f"/threads/{thread}/runs", json=body)
    assert (response.status_code, response.json()["status"]) == (200, "running")


@pytest.mark.parametrize("mode", ERAS)
async def test_the_agent_is_listed_as_one_tool(served: Served, mode: str) -> None:
    async with connect(served.url, mode) as client:
        listed = await client.list_tools()
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools] == [TOOL]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_call_reports_each_step_and_answers(
    served: Served, http: httpx.AsyncClient, mode: str
) -> None:
    thread = f"sums-{mode}"
    async with connect(served.url, mode) as client:
        result, progress = await call(client, {"input": "add 2 40", "thread_id": thread})
        assert (text(result), result.is_error) == ("The sum is 42.", False)
        assert result.structured_content == {"output": "The sum is 42.", "thread_id": thread}
        assert progress == [(1.0, None, "calling add"), (2.0, None, "add returned")]
        # the same thread goes on with a new turn
        result, progress = await call(client, {"input": "add 5 6", "thread_id": thread})
        assert (text(result), result.structured_content) == (
            "The sum is 11.",
            {"output": "The sum is 11.", "thread_id": thread},
        )
    state = await state_of(http, thread)
    assert (state["status"], state["values"]["input"]) == ("idle", "add 5 6")
    assert await turns(http, thread) == 2


async def test_a_call_without_a_thread_starts_a_new_one(
    served: Served, http: httpx.AsyncClient
) -> None:
    async with connect(served.url) as client:
        result = await client.call_tool("agent", {"input": "add 1 1"})  # no progress token
    assert text(result) == "The sum is 2."
    assert result.structured_content is not None
    thread = result.structured_content["thread_id"]
    state = await state_of(http, thread)
    assert (state["status"], state["values"]["output"]) == ("idle", "The sum is 2.")


async def test_a_failed_run_names_only_the_error_type_and_resumes(
    served: Served, http: httpx.AsyncClient
) -> None:
    served.down.write_text("")
    try:
        async with connect(served.url, "legacy") as client:
            result, progress = await call(client, {"input": "flaky ping", "thread_id": "broken"})
    finally:
        served.down.unlink()
    assert result.is_error and result.structured_content is None
    assert text(result) == (
        "the run of thread 'broken' failed (RuntimeError); it keeps its finished steps: resume "
        'it with POST /threads/broken/runs {"assistant_id": "agent", "command": {"resume": null}}'
    )
    assert progress == [(1.0, None, "calling flaky")]
    await resume(http, "broken", None)
    assert (await follow_to_end(http, "broken"))[-1] == "end"
    state = await state_of(http, "broken")
    assert (state["status"], state["values"]["output"]) == ("idle", "Flaky said: echo ping")


@pytest.mark.parametrize("mode", ERAS)
async def test_a_pending_approval_names_the_thread_then_is_approved(
    served: Served, http: httpx.AsyncClient, mode: str
) -> None:
    thread = f"outbox-{mode}"
    async with connect(served.url, mode) as client:
        result, progress = await call(client, {"input": "send hello", "thread_id": thread})
        assert result.is_error
        assert text(result) == (
            f'thread {thread!r} is paused: send({{"text":"hello"}}) [call 0-0] waits for a '
            "person's approval. Approve or reject it on the server's page, or with POST "
            f'/threads/{thread}/runs {{"assistant_id": "agent", "command": {{"resume": '
            f'{{"approve": ["0-0"]}}}}}}; then GET /threads/{thread}/state has the answer.'
        )
        assert result.structured_content == {
            "thread_id": thread,
            "status": "paused",
            "pending_approvals": [{"id": "0-0", "tool": "send", "tool_input": {"text": "hello"}}],
        }
        assert progress == [(1.0, None, "calling send")]
        assert (await state_of(http, thread))["status"] == "interrupted"
        # the thread waits: a new turn is refused until the call is decided
        again, _ = await call(client, {"input": "add 1 2", "thread_id": thread})
        assert (again.is_error, text(again)) == (
            True,
            f"thread {thread!r} has a run waiting for approval; resume it instead",
        )
        await resume(http, thread, {"approve": ["0-0"]})
        assert (await follow_to_end(http, thread))[-1] == "end"
        state = await state_of(http, thread)
        assert (state["status"], state["values"]["output"]) == ("idle", "Sent: sent 'hello'")
        # decided and finished: the thread goes on over MCP
        result, _ = await call(client, {"input": "add 1 2", "thread_id": thread})
        assert text(result) == "The sum is 3."
    assert await turns(http, thread) == 2


async def test_a_client_that_leaves_does_not_stop_the_run(
    served: Served, http: httpx.AsyncClient
) -> None:
    first = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        first.set()

    async with connect(served.url) as client, anyio.create_task_group() as group:

        async def slow() -> None:
            await client.call_tool(
                "agent", {"input": "slow 3", "thread_id": "left"}, progress_callback=progress
            )

        group.start_soon(slow)
        await first.wait()
        group.cancel_scope.cancel()  # the client gives up on the call and leaves
    assert (await follow_to_end(http, "left"))[-1] == "end"
    state = await state_of(http, "left")
    assert (state["status"], state["values"]["output"]) == ("idle", "Napped 3 times.")


async def test_bad_calls_get_a_reason(served: Served) -> None:
    cases = [
        ({"input": 5}, "argument 'input' must be a string"),
        ({}, "missing argument 'input'"),
        ({"input": "add 1 1", "extra": "x"}, "unexpected argument 'extra'"),
        (
            {"input": "add 1 1", "thread_id": "no spaces"},
            ("thread_id must be 1-100 letters, digits, '-', '_' or '.'"),
        ),
    ]
    async with connect(served.url) as client:
        for arguments, reason in cases:
            result, progress = await call(client, arguments)
            assert (result.is_error, text(result), progress) == (True, reason, [])
        with pytest.raises(MCPError) as caught:
            await client.call_tool("other", {"input": "add 1 1"})
    assert caught.value.message == "no tool 'other' (this server has 'agent')"


MCP1 = Path(sys.prefix) / "mcp1-server"
"""The venv with the last 1.x SDK that tests/mcp makes (the same place and lock)."""


@pytest.fixture(scope="module")
def mcp1() -> str:
    """The Python of a venv with `mcp` 1.x: the client generation most MCP hosts were built on."""
    python = MCP1 / "bin" / "python"
    with open(str(MCP1) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (MCP1 / ".installed").exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(MCP1)], check=True)
            subprocess.run([str(python), "-m", "pip", "install", "-q", "mcp>=1.30,<2"], check=True)
            (MCP1 / ".installed").touch()
    return str(python)


def test_a_2025_era_client_of_the_1x_sdk(served: Served, mcp1: str) -> None:
    script = Path(__file__).with_name("mcp1_client.py")
    command = [mcp1, str(script), f"{served.url}/mcp", TOKEN, "old-client", "add 3 4"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "protocol": "2025-11-25",
        "server": "actloop",
        "session": None,  # no sessions: any server process answers any request
        "tools": ["agent"],
        "text": ["The sum is 7."],
        "structured": {"output": "The sum is 7.", "thread_id": "old-client"},
        "error": False,
        "progress": [[1.0, None, "calling add"], [2.0, None, "add returned"]],
    }


def test_the_guard_covers_mcp(served: Served) -> None:
    """The MCP client's requests pass the guard; a page's, one without the token, one naming
    another host or too big do not; GET (a server-to-client stream) and DELETE (ending a
    session) get 405: no sessions here."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    sse = {"Accept": "application/json, text/event-stream"}
    url = f"{served.url}/mcp"
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"json": ping, "headers": sse}, 401, "missing or wrong bearer token"),
        (
            {"content": json.dumps(ping), "headers": {**AUTH, **sse, "Content-Type": "text/plain"}},
            415,
            "the request body must be sent as Content-Type: application/json",
        ),
        (
            {"json": ping, "headers": {**AUTH, **sse, "Origin": "http://evil.test"}},
            403,
            "requests from origin 'http://evil.test' are not allowed",
        ),
        (
            {"json": ping, "headers": {**AUTH, **sse, "Host": "evil.test"}},
            421,
            "Host 'evil.test' is not served here (see actloop serve --allowed-host)",
        ),
        (
            {
                "json": {**ping, "params": {"_meta": {"pad": "x" * (1 << 20)}}},
                "headers": {**AUTH, **sse},
            },
            413,
            "request body too large (limit 1048576 bytes)",
        ),
    ]
    with httpx.Client(timeout=30) as client:
        for options, status, reason in cases:
            response = client.post(url, **options)
            assert (response.status_code, response.json()) == (status, {"error": reason})
        chunks = iter(
            [
                b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "',
                *[b"x" * 65536] * 20,
                b'"}}',
            ]
        )
        streamed = {**AUTH, **sse, "Content-Type": "application/json"}  # no length: chunked
        response = client.post(url, content=chunks, headers=streamed)
        assert (response.status_code, response.json()) == (
            413,
            {"error": "request body too large (limit 1048576 bytes)"},
        )
        for method in ("GET", "DELETE"):
            response = client.request(method, url, headers={**AUTH, **sse})
            assert (response.status_code, response.json(), response.headers["allow"]) == (
                405,
                {"error": "this MCP server keeps no sessions: send requests with POST"},
                "POST",
            )


def test_a_page_of_a_cors_origin_may_call(serve: Serve, tmp_path: Path) -> None:
    """With `--cors-origin`, a page of that origin passes the preflight of an MCP request (the
    SDK's headers are allowed) and its POST gets the answer with the CORS header."""
    origin = "http://ui.test"
    executor = make_executor(SqliteCheckpointer(tmp_path / "runs.sqlite"))
    url = serve(create_app(executor, token=TOKEN, cors_origins=[origin])) + "/mcp"
    asked = "authorization,content-type,mcp-protocol-version,mcp-method,mcp-name"
    preflight = {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": asked,
    }
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {**AUTH, "Origin": origin, "Accept": "application/json, text/event-stream"}
    with httpx.Client(timeout=30) as client:
        response = client.options(url, headers=preflight)
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == origin
        allowed = response.headers["access-control-allow-headers"].lower()
        assert set(asked.split(",")) <= set(allowed.replace(" ", "").split(","))
        response = client.post(url, json=ping, headers=headers)
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == origin
        data = next(line for line in response.text.splitlines() if line.startswith("data: "))
        assert json.loads(data[6:]) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_openapi_names_the_route(served: Served) -> None:
    document = httpx.get(f"{served.url}/openapi.json", headers=AUTH).json()
    route = document["paths"]["/mcp"]
    assert list(route) == ["post"]
    assert route["post"]["summary"] == (
        "MCP, streamable HTTP without sessions (GET, DELETE: 405): the agent as a tool"
    )


def test_an_actloop_agent_calls_the_served_agent(served: Served) -> None:
    """actloop's MCPToolset on the served URL: one agent asks another."""
    model = ScriptedChatModel(
        [
            AIMessage(
                "",
                tool_calls=[{"name": "agent", "args": {"input": "add 20 22"}, "id": "c1"}],
            ),
            "The other agent says: The sum is 42.",
        ]
    )
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    with MCPToolset.http(f"{served.url}/mcp", headers=AUTH, structured=False) as toolset:
        tools = toolset.get_tools()
        assert [t.name for t in tools] == ["agent"]
        executor = AgentExecutor(
            agent=create_tool_calling_agent(model, tools, prompt),
            tools=tools,
            return_intermediate_steps=True,
        )
        output = executor.invoke({"input": "ask the other agent for 20 + 22"})
    assert output["output"] == "The other agent says: The sum is 42."
    assert [s[1] for s in output["intermediate_steps"]] == ["The sum is 42."]


@dataclass
class OwnLoop:
    """An app served by uvicorn on a loop of the test's own (in a thread), so the test can run
    the server's coroutines there (`ThreadService.cancel`, what another protocol's cancel does)."""

    app: Any
    url: str
    loop: asyncio.AbstractEventLoop

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=30)


@pytest.fixture
def own_loop(tmp_path: Path) -> Iterator[OwnLoop]:
    app = create_app(make_executor(SqliteCheckpointer(tmp_path / "runs.sqlite")), token=TOKEN)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(server.serve(),))
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:  # as the `serve` fixture waits: uvicorn has no event for it
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield OwnLoop(app, f"http://127.0.0.1:{port}", loop)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        loop.close()


async def test_a_cancelled_run_is_an_error_result(own_loop: OwnLoop) -> None:
    """A run cancelled on the server (as another protocol's cancel does) ends the call with an
    error result naming the thread; the thread can be resumed."""
    service = own_loop.app.state.threads
    cancelled = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        if not cancelled.is_set():
            cancelled.set()
            assert await anyio.to_thread.run_sync(own_loop.run, service.cancel("halted"))

    async with connect(own_loop.url) as client:
        arguments = {"input": "slow 3", "thread_id": "halted"}
        result = await client.call_tool("agent", arguments, progress_callback=progress)
    assert cancelled.is_set() and result.is_error
    assert text(result) == (
        "the run of thread 'halted' was cancelled; resume it with POST /threads/halted/runs "
        '{"assistant_id": "agent", "command": {"resume": null}}'
    )
    async with httpx.AsyncClient(base_url=own_loop.url, headers=AUTH, timeout=30) as http:
        await resume(http, "halted", None)
        assert (await follow_to_end(http, "halted"))[-1] == "end"
        state = await state_of(http, "halted")
    assert (state["status"], state["values"]["output"]) == ("idle", "Napped 3 times.")


def heard(messages: list[BaseMessage]) -> str:
    """A model that repeats every question of the conversation so far."""
    return "I have heard: " + ", ".join(m.text for m in messages if isinstance(m, HumanMessage))


async def test_a_conversation_goes_on_over_turns(serve: Serve, tmp_path: Path) -> None:
    """An agent with a `chat_history` input: the thread gives each new turn the earlier ones
    (the client is not asked for them)."""
    prompt = ChatPromptTemplate.from_messages(
        [
            ("placeholder", "{chat_history}"),
            ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}"),
        ]
    )
    runnable = create_tool_calling_agent(FunctionChatModel(heard), [], prompt)
    # declared input keys, as LangChain's agents do: the thread fills `chat_history`
    keys = ["input", "chat_history"]
    agent = RunnableMultiActionAgent(runnable, input_keys_arg=keys, return_keys_arg=["output"])
    store = SqliteCheckpointer(tmp_path / "talk.sqlite")
    executor = AgentExecutor(agent=agent, tools=[], checkpointer=store)
    url = serve(create_app(executor, token=TOKEN))
    async with connect(url) as client:
        listed = await client.list_tools()
        assert listed.tools[0].input_schema["properties"] == TOOL["inputSchema"]["properties"]
        first = await client.call_tool("agent", {"input": "hello", "thread_id": "talk"})
        second = await client.call_tool("agent", {"input": "again", "thread_id": "talk"})
    assert (text(first), text(second)) == ("I have heard: hello", "I have heard: hello, again")


def test_without_the_mcp_sdk_mcp_answers_501(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server extra without the mcp extra: the rest serves, `/mcp` says what is missing."""
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "mcp", None)
    url = serve(create_app(make_executor(SqliteCheckpointer(tmp_path / "runs.sqlite"))))
    with httpx.Client(base_url=url, timeout=30) as client:
        response = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert (response.status_code, response.json()) == (
            501,
            {"error": "serving MCP needs the mcp extra: pip install 'actloop[mcp]'"},
        )
        assert client.get("/health").status_code == 200
