"""An MCPServer (mcp 2.x) that prints a banner on stdout before speaking MCP (a common mistake)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("chatty", log_level="WARNING")


@server.tool()
def ping() -> str:
    """Answers pong."""
    return "pong"


if __name__ == "__main__":
    print("Welcome to chatty v1.0!", flush=True)
    print("loading plugins... done", flush=True)
    server.run("stdio")
