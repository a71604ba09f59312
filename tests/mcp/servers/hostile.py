"""A low-level mcp 2.x `Server` that attacks its client, for actloop's bounds tests.

python hostile.py endless [SECONDS]
                            tools/list answers every page with a next cursor, for ever (each
                            page after SECONDS, default 0)
python hostile.py           tools: `spawn` (starts two children, one ignoring SIGTERM, and
                            answers their pids), `leave` (the same, then the server exits),
                            `flood` (prints N lines that are not JSON-RPC on stdout, then
                            answers), `stall` (the same, then never answers)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import anyio
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server

ENDLESS = sys.argv[1:2] == ["endless"]
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"lines": {"type": "integer"}}}
CHILD = "import signal, time\n{}\ntime.sleep(3600)"


def _spawn() -> list[int]:
    """Two children in the server's process group, the second ignoring SIGTERM; their pids
    are written to stderr too (the test reads them there when the server exits)."""
    ignore = "signal.signal(signal.SIGTERM, signal.SIG_IGN)"
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD.format(code)], stdout=subprocess.DEVNULL)
        for code in ("", ignore)
    ]
    time.sleep(1.0)  # the SIGTERM handler is in place before the answer
    pids = [child.pid for child in children]
    print("children:", *pids, file=sys.stderr, flush=True)
    return pids


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    page = int(params.cursor) if params is not None and params.cursor else 0
    if not ENDLESS:
        names = ("spawn", "leave", "flood", "stall")
        tools = [types.Tool(name=n, input_schema=SCHEMA) for n in names]
        return types.ListToolsResult(tools=tools)
    await anyio.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
    tools = [types.Tool(name=f"t{page}_{i}", input_schema=SCHEMA) for i in range(50)]
    return types.ListToolsResult(tools=tools, next_cursor=str(page + 1))


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "spawn":
        text = " ".join(str(pid) for pid in _spawn())
    elif params.name == "leave":
        _spawn()
        os._exit(0)  # the server exits by itself; its children stay in its process group
    else:
        lines = int((params.arguments or {}).get("lines", 0))
        data = "".join(f"log line {i}: not JSON-RPC\n" for i in range(lines)).encode()
        while data:
            data = data[os.write(WIRE, data) :]
        if params.name == "stall":
            await anyio.sleep(3600)
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
