"""MCPToolset against real MCP servers: listing, schemas, validation, results, prefixes,
sync and async, stdio and streamable HTTP, and `tools/list_changed`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp_fixtures import DEMO, HttpServer

from actloop.exceptions import ConfigurationError
from actloop.mcp import MCPTool, MCPToolset

ALL = ["add", "shout", "profile", "picture", "boom", "hang", "crash", "noisy", "garble"]
ALL += ["whoami", "big", "traced", "unlock"]


def by_name(tools: list[object]) -> dict[str, MCPTool]:
    return {t.name: t for t in tools if isinstance(t, MCPTool)}


def test_tools_carry_the_servers_names_descriptions_and_schemas(demo: MCPToolset) -> None:
    tools = demo.get_tools()
    assert [t.name for t in tools] == ALL
    add = by_name(tools)["add"]
    assert demo.name == "demo"
    assert add.description == "Add two integers."
    assert add.args_schema == {
        "properties": {
            "a": {"title": "A", "type": "integer"},
            "b": {"title": "B", "type": "integer"},
        },
        "required": ["a", "b"],
        "title": "addArguments",
        "type": "object",
    }
    assert add.metadata == {"mcp_server": "demo"}
    # a durable run re-runs a call cut by a crash only for tools the server marks safe to repeat
    assert [t.name for t in tools if t.idempotent] == ["add", "whoami"]


def test_results_text_structured_described_and_errors(demo: MCPToolset) -> None:
    tools = by_name(demo.get_tools())
    assert tools["add"].invoke({"a": 2, "b": 40}) == {"result": 42}
    assert tools["profile"].invoke({"name": "Ada"}) == {"name": "Ada", "letters": 3}
    assert tools["shout"].invoke("hello") == {"result": "HELLO"}  # a plain string fills the field
    assert tools["picture"].invoke({}) == (
        "a picture:\n[image: image/png, 68 bytes]\n[resource: file:///notes.txt, text/plain]\nhi"
    )
    assert tools["boom"].invoke({"reason": "no fuel"}) == (
        "Error: tool 'boom' of MCP server 'demo' failed: Error executing tool boom: "
        "cannot do it: no fuel"
    )


def test_structured_false_returns_the_text() -> None:
    with MCPToolset.stdio(sys.executable, [DEMO], structured=False) as toolset:
        tools = by_name(toolset.get_tools())
        assert tools["add"].invoke({"a": 2, "b": 40}) == "42"
        assert tools["profile"].invoke({"name": "Ada"}) == '{\n  "name": "Ada",\n  "letters": 3\n}'


def test_arguments_are_checked_against_the_servers_schema_before_the_call(
    demo: MCPToolset,
) -> None:
    add = by_name(demo.get_tools())["add"]
    assert add.invoke({"a": "two", "b": 3}) == (
        "Invalid arguments for tool 'add': field 'a': Input should be a valid integer. "
        "Fix the arguments and try again."
    )
    assert add.invoke({"a": 1}) == (
        "Invalid arguments for tool 'add': field 'b': Field required. "
        "Fix the arguments and try again."
    )


def test_prefix_env_and_cwd(tmp_path: Path) -> None:
    with MCPToolset.stdio(
        sys.executable,
        [DEMO],
        env={"ACTLOOP_TEST_VALUE": "seven"},
        cwd=str(tmp_path),
        prefix="demo_",
    ) as toolset:
        tools = by_name(toolset.get_tools())
        assert sorted(tools) == sorted(f"demo_{n}" for n in ALL)
        me = tools["demo_whoami"].invoke({})
        assert (me["cwd"], me["value"]) == (str(tmp_path), "seven")
        assert tools["demo_whoami"].remote_name == "whoami"
        assert tools["demo_add"].invoke({"a": 1, "b": 1}) == {"result": 2}


async def test_async_twins_over_stdio(no_orphans: None) -> None:
    async with MCPToolset.stdio(sys.executable, [DEMO], prefix="d_") as toolset:
        tools = by_name(await toolset.aget_tools())
        assert await tools["d_add"].ainvoke({"a": 5, "b": 6}) == {"result": 11}
        assert await toolset.acall("shout", {"text": "x"}) == {"result": "X"}


def test_streamable_http(http_server: HttpServer) -> None:
    with MCPToolset.http(http_server.url, headers={"X-Test": "1"}) as toolset:
        tools = by_name(toolset.get_tools())
        assert [t.name for t in tools.values()] == ALL
        assert tools["add"].invoke({"a": 2, "b": 3}) == {"result": 5}
        assert tools["whoami"].invoke({})["pid"] == http_server.process.pid


async def test_streamable_http_async(http_server: HttpServer) -> None:
    async with MCPToolset.http(http_server.url) as toolset:
        tools = by_name(await toolset.aget_tools())
        assert await tools["profile"].ainvoke({"name": "Bo"}) == {"name": "Bo", "letters": 2}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_tools_list_changed_refreshes_the_list(
    transport: str, http_server: HttpServer, no_orphans: None
) -> None:
    if transport == "stdio":
        toolset = MCPToolset.stdio(sys.executable, [DEMO])
    else:
        toolset = MCPToolset.http(http_server.url)
    with toolset:
        unlock = by_name(toolset.get_tools())["unlock"]
        assert unlock.invoke({}) == {"result": "unlocked"}
        tools = by_name(toolset.get_tools())
        assert sorted(tools) == sorted([*ALL[:-1], "secret"])
        assert tools["secret"].invoke({}) == {"result": "the secret is 42"}
        assert unlock.invoke({}) == (
            "Error: MCP server 'demo' does not offer tool 'unlock' (any more); it offers: "
            "'add', 'shout', 'profile', 'picture', 'boom', 'hang', 'crash', 'noisy', 'garble', "
            "'whoami', 'big', 'traced', 'secret'"
        )


def test_needs_a_command_or_a_url() -> None:
    with pytest.raises(ConfigurationError, match="MCPToolset needs either command"):
        MCPToolset(command="x", url="http://127.0.0.1:1/mcp")
    with pytest.raises(ConfigurationError, match="MCPToolset needs either command"):
        MCPToolset()


def test_name_given_wins_and_closing_twice_is_fine(no_orphans: None) -> None:
    toolset = MCPToolset.stdio(sys.executable, [DEMO], name="calc").open()
    assert toolset.name == "calc"
    assert by_name(toolset.get_tools())["add"].metadata == {"mcp_server": "calc"}
    toolset.close()
    toolset.close()
    assert toolset.call("add", {"a": 1, "b": 1}) == {"result": 2}  # a closed toolset reopens
    toolset.close()
