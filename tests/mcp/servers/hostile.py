"""A low-level mcp 2.x `Server` that attacks its client, for actloop's bounds tests.

python hostile.py endless   tools/list answers every page with a next cursor, for ever
python hostile.py           tools: `spawn` (starts two children, one ignoring SIGTERM, and
                            answers their pids), `flood` (prints N lines that are not JSON-RPC
                            on stdout, then answers)
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import anyio
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server

ENDLESS = sys.argv[1:2] == ["endless"]
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"lines": {"type": "integer"}}}
CHILD = "import signal, time\n{}\ntime.sleep(3600)"


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    page = int(params.cursor) if params is not None and params.cursor else 0
    if not ENDLESS:
        tools = [types.Tool(name=n, input_schema=SCHEMA) for n in ("spawn", "flood")]
        return types.ListToolsResult(tools=tools)
    tools = [types.Tool(name=f"t{page}_{i}", input_schema=SCHEMA) for i in range(50)]
    return types.ListToolsResult(tools=tools, next_cursor=str(page + 1))


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "spawn":
        ignore = "signal.signal(signal.SIGTERM, signal.SIG_IGN)"
        children = [
            subprocess.Popen(  # noqa: ASYNC220  # quick to start; a test server
                [sys.executable, "-c", CHILD.format(code)], stdout=subprocess.DEVNULL
            )
            for code in ("", ignore)
        ]
        await anyio.sleep(0.5)  # the SIGTERM handler is in place before the answer
        text = " ".join(str(child.pid) for child in children)
    else:
        lines = int((params.arguments or {}).get("lines", 0))
        data = "".join(f"log line {i}: not JSON-RPC\n" for i in range(lines)).encode()
        while data:
            data = data[os.write(WIRE, data) :]
        text = f"flooded {lines}"
    return types.CallToolResult(content=[types.TextContent(text=text)])


WIRE = os.dup(1)
"""The stdio channel: mcp 2.x points fd 1 at stderr while it serves; a library or child process
holding the original stdout still writes to the channel, as this does."""
server = Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
