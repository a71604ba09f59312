"""Both protocol eras over stdio and streamable HTTP: a 2026-07-28 server (mcp 2.x `MCPServer`:
`server/discover`, no handshake, the version in each request's `_meta`) and a 2025-era server
(FastMCP of mcp 1.x, in a venv of its own: the `initialize` handshake, sessions). The trace
context of the tool's span reaches either server in the request's `_meta`."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_fixtures import DEMO, ERA2025, HttpServer, mcp1_python

from actloop import AgentExecutor
from actloop.mcp import MCPTimeoutError, MCPToolset
from actloop.messages import AIMessage
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.testing import ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tracing import instrument, uninstrument
from support.tracing import Spans

OLD_TOOLS = ["add", "hang", "whoami", "unlock", "traced"]


@pytest.fixture(scope="module")
def mcp1() -> str:
    return mcp1_python()


@pytest.fixture
def old_http(mcp1: str) -> Iterator[HttpServer]:
    server = HttpServer(ERA2025, python=mcp1)
    try:
        yield server
    finally:
        server.close()


def _old(transport: str, mcp1: str, old_http: HttpServer | None) -> MCPToolset:
    if transport == "stdio":
        return MCPToolset.stdio(mcp1, [ERA2025], timeout=3.0)
    assert old_http is not None
    return MCPToolset.http(old_http.url, timeout=3.0)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_2025_era_server_with_the_handshake(
    transport: str, mcp1: str, request: pytest.FixtureRequest, no_orphans: None
) -> None:
    old_http = request.getfixturevalue("old_http") if transport == "http" else None
    with _old(transport, mcp1, old_http) as toolset:
        assert toolset.protocol_version == "2025-11-25"
        assert toolset.name == "era2025"
        assert [t.name for t in toolset.get_tools()] == OLD_TOOLS
        assert toolset.call("add", {"a": 2, "b": 3}) == {"result": 5}
        with pytest.raises(MCPTimeoutError) as caught:
            toolset.call("hang", {})
        assert str(caught.value) == "MCP server 'era2025' did not answer tool 'hang' within 3 s"
        assert toolset.call("unlock", {}) == {"result": "unlocked"}  # list_changed notified
        assert [t.name for t in toolset.get_tools()] == [*OLD_TOOLS, "secret"]
        assert toolset.call("secret", {}) == {"result": "the secret is 42"}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_2026_era_server_without_a_handshake(
    transport: str, http_server: HttpServer, no_orphans: None
) -> None:
    if transport == "stdio":
        toolset = MCPToolset.stdio(sys.executable, [DEMO])
    else:
        toolset = MCPToolset.http(http_server.url)
    assert toolset.protocol_version is None
    with toolset:
        assert toolset.protocol_version == "2026-07-28"
        assert toolset.name == "demo"
        assert toolset.call("add", {"a": 20, "b": 22}) == {"result": 42}
    assert toolset.protocol_version is None


PROMPT = ChatPromptTemplate.from_messages(
    [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
)


def _traced_run(toolset: MCPToolset) -> tuple[str, Spans]:
    """An instrumented agent run calling the server's `traced` tool: its observation (the
    traceparent the server got) and the spans."""
    spans = Spans()
    instrument(tracer_provider=spans.provider)
    try:
        tools = toolset.get_tools()
        call: dict[str, Any] = {"name": "traced", "args": {}, "id": "c1"}
        model = ScriptedChatModel([AIMessage("", tool_calls=[call]), "done"])
        agent = create_tool_calling_agent(model, tools, PROMPT)
        executor = AgentExecutor(agent=agent, tools=tools, return_intermediate_steps=True)
        result = executor.invoke({"input": "go"})
    finally:
        uninstrument()
    [(_, observation)] = result["intermediate_steps"]
    return observation, spans


@pytest.mark.parametrize("era", ["2026", "2025"])
def test_the_tools_trace_context_reaches_the_server_in_meta(
    era: str, request: pytest.FixtureRequest, no_orphans: None
) -> None:
    python = sys.executable if era == "2026" else request.getfixturevalue("mcp1")
    with MCPToolset.stdio(python, [DEMO if era == "2026" else ERA2025]) as toolset:
        traceparent, spans = _traced_run(toolset)
        assert toolset.call("traced", {}) == ""  # no span, no trace context
    [tool_span] = [s for s in spans.finished() if s.name == "execute_tool traced"]
    version, trace_id, _parent, _flags = traceparent.split("-")
    assert (version, trace_id) == ("00", format(tool_span.context.trace_id, "032x"))
    spans.provider.shutdown()
