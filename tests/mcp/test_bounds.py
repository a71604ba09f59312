"""Servers that attack the client: an endless tool list, children left in the process group
(one ignoring SIGTERM), a flood of stray stdout lines, results of many megabytes. Every attack
ends in bounded time and memory with an error naming the server, and nothing is left running."""

from __future__ import annotations

import sys
import time

import psutil
import pytest
from mcp_fixtures import DEMO, HOSTILE, HttpServer

from actloop.mcp import MCPConnectionError, MCPError, MCPTimeoutError, MCPToolset


def test_an_endless_tool_list_is_refused_after_100_pages(no_orphans: None) -> None:
    toolset = MCPToolset.stdio(sys.executable, [HOSTILE, "endless"], connect_timeout=120)
    with pytest.raises(MCPConnectionError) as caught:
        toolset.open()
    assert str(caught.value) == (
        "MCP server 'hostile' kept paging its tool list past 100 pages: refused (a server "
        "stuck in a loop?)"
    )


def test_a_slow_endless_tool_list_is_refused_within_connect_timeout(no_orphans: None) -> None:
    toolset = MCPToolset.stdio(sys.executable, [HOSTILE, "endless", "1"], connect_timeout=20)
    started = time.monotonic()
    with pytest.raises(MCPTimeoutError) as caught:
        toolset.open()
    assert time.monotonic() - started < 20 + 10  # the bound, plus ending the server
    assert str(caught.value) == "MCP server 'hostile' did not list its tools within 20 s"


def _gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alive = [p for p in pids if psutil.pid_exists(p) and _not_zombie(p)]
        if not alive:
            return True
        time.sleep(0.05)
    return False


def _not_zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_closing_ends_the_servers_children_even_one_ignoring_sigterm(no_orphans: None) -> None:
    with MCPToolset.stdio(sys.executable, [HOSTILE]) as toolset:
        pids = [int(p) for p in toolset.call("spawn", {}).split()]
        assert all(_not_zombie(p) for p in pids)
    assert _gone(pids)


def test_children_of_a_server_that_exited_by_itself_are_ended(no_orphans: None) -> None:
    toolset = MCPToolset.stdio(sys.executable, [HOSTILE])
    with toolset:
        with pytest.raises(MCPConnectionError) as caught:
            toolset.call("leave", {})
        message = str(caught.value)
        assert message.startswith(
            "MCP server 'hostile' closed the connection during tool 'leave' (it exited, crashed "
            "or dropped the connection; its last stderr line: children: "
        )
        pids = [int(p) for p in message.split("children: ")[1].split(")")[0].split()]
        assert len(pids) == 2
        assert _gone(pids)  # ended when the server's stream ended, before close


def test_a_flood_of_stray_stdout_lines_is_counted_not_kept(no_orphans: None) -> None:
    with MCPToolset.stdio(sys.executable, [HOSTILE], timeout=20) as toolset:
        assert toolset.call("flood", {"lines": 400_000}) == "flooded 400000"
        with pytest.raises(MCPTimeoutError) as caught:
            toolset.call("stall", {"lines": 400_000})
        assert str(caught.value) == (
            "MCP server 'hostile' did not answer tool 'stall' within 20 s; it wrote 400000 lines "
            "on stdout that are not MCP messages, the first kept: 'log line 399995: not JSON-RPC'"
        )


def test_a_result_of_80_mb_is_read_and_one_over_the_limit_is_a_clear_observation(
    no_orphans: None,
) -> None:
    with MCPToolset.stdio(sys.executable, [DEMO], max_result_bytes=100_000_000) as toolset:
        assert toolset.call("big", {"megabytes": 80}) == "x" * 80_000_000
    with MCPToolset.stdio(sys.executable, [DEMO], max_result_bytes=1_000_000) as toolset:
        big = next(t for t in toolset.get_tools() if t.name == "big")
        assert big.invoke({"megabytes": 2}) == (
            "Error: MCP server 'demo' answered tool 'big' with more than 1000000 bytes (the "
            "toolset's max_result_bytes); the answer was dropped"
        )
        assert toolset.call("add", {"a": 1, "b": 2}) == {"result": 3}  # the session goes on
        with pytest.raises(MCPError):
            toolset.call("big", {"megabytes": 1})  # 1 MB of text plus the JSON around it


def test_over_http_a_result_over_the_limit_is_a_clear_observation(
    http_server: HttpServer,
) -> None:
    with MCPToolset.http(http_server.url, max_result_bytes=1_000_000) as toolset:
        big = next(t for t in toolset.get_tools() if t.name == "big")
        assert big.invoke({"megabytes": 2}) == (
            "Error: MCP server 'demo' answered tool 'big' with more than 1000000 bytes (the "
            "toolset's max_result_bytes); the answer was dropped"
        )
        assert toolset.call("big", {"megabytes": 1}) == "x" * 1_000_000
