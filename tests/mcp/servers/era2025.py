"""A 2025-era server: FastMCP of the `mcp` 1.x SDK (the initialize handshake, sessions), run by
the tests with the Python of a venv that has mcp 1.x (`mcp_fixtures.mcp1_python`).

python era2025.py                 serve over stdio
python era2025.py --http PORT     serve streamable HTTP on 127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.fastmcp import Context, FastMCP  # pyright: ignore[reportMissingImports]

PORT = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--http" else 8000
server = FastMCP("era2025", host="127.0.0.1", port=PORT, log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def hang() -> str:
    """Never answers."""
    await asyncio.sleep(3600)
    return "unreachable"


@server.tool()
def whoami() -> dict[str, object]:
    """The server's process id."""
    return {"pid": os.getpid()}


def _secret() -> str:
    """Only offered after unlock."""
    return "the secret is 42"


@server.tool()
async def unlock(ctx: Context) -> str:  # type: ignore[type-arg]
    """Adds the tool `secret` and tells the client the list changed (a notification)."""
    server.add_tool(_secret, name="secret")
    await ctx.session.send_tool_list_changed()
    return "unlocked"


@server.tool(structured_output=False)
def traced(ctx: Context) -> str:  # type: ignore[type-arg]
    """The W3C traceparent the request carried in its `_meta` ('' if none)."""
    meta = ctx.request_context.meta
    extra = meta.model_extra if meta is not None else None
    return str((extra or {}).get("traceparent", ""))


if __name__ == "__main__":
    server.run("streamable-http" if sys.argv[1:2] == ["--http"] else "stdio")
