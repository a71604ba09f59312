"""An MCPServer (mcp 2.x) whose own name and whose one tool's name hold terminal escape sequences
(an OSC window-title write and a clear-screen); the tool naps so the live display's spinner
shows it."""

from __future__ import annotations

import time

from mcp.server.mcpserver import MCPServer

SERVER_NAME = "esc\x1b]0;SERVER-TITLE\x07"
TOOL_NAME = "nap\x1b[2J\x1b]0;TOOL-TITLE\x07"

server = MCPServer(SERVER_NAME, log_level="WARNING")


@server.tool(name=TOOL_NAME, structured_output=False)
def nap() -> str:
    """Sleep a second, then say so."""
    time.sleep(1.0)
    return "rested"


if __name__ == "__main__":
    server.run("stdio")
