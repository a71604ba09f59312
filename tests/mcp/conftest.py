"""Real MCP servers (mcp 2.x `MCPServer`) from `tests/mcp/servers/`, over stdio (started by the
toolset) and on loopback streamable HTTP (started here on a free port), and a check that none is
left behind."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import pytest
from mcp_fixtures import DEMO, HttpServer, server_processes

from actloop.mcp import MCPToolset


@pytest.fixture
def http_server() -> Iterator[HttpServer]:
    server = HttpServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def no_orphans() -> Iterator[None]:
    """After the test (its toolsets closed), no stdio server process may be left running."""
    yield
    deadline = time.monotonic() + 10
    while server_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server_processes() == []


@pytest.fixture
def demo(no_orphans: None) -> Iterator[MCPToolset]:
    """The demo server over stdio, opened, with a short per-call timeout."""
    with MCPToolset.stdio(sys.executable, [DEMO], timeout=2.0) as toolset:
        yield toolset
