"""An MCPServer (mcp 2.x) with well-behaved and badly-behaved tools, for actloop's MCP tests.

python demo.py                 serve over stdio
python demo.py --http PORT     serve streamable HTTP on 127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

PORT = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--http" else 8000
server = MCPServer("demo", log_level="WARNING")
WIRE = os.dup(1)
"""The stdio channel: mcp 2.x points fd 1 at stderr while it serves, so a stray print no
longer reaches the channel; a library or child process holding the original stdout still does."""


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@server.tool()
def profile(name: str) -> dict[str, object]:
    """A structured record about a person."""
    return {"name": name, "letters": len(name)}


@server.tool(structured_output=False)
def picture() -> list[TextContent | ImageContent | EmbeddedResource]:
    """A caption, a tiny PNG and an embedded text resource."""
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 60).decode()
    png = ImageContent(type="image", data=data, mime_type="image/png")
    note = EmbeddedResource(
        type="resource",
        resource=TextResourceContents(uri="file:///notes.txt", mime_type="text/plain", text="hi"),
    )
    return [TextContent(type="text", text="a picture:"), png, note]


@server.tool()
def boom(reason: str) -> str:
    """Always fails (a ToolError: mcp 2.x keeps other exceptions' text on the server)."""
    raise ToolError(f"cannot do it: {reason}")


@server.tool()
async def hang() -> str:
    """Never answers."""
    await asyncio.sleep(3600)
    return "unreachable"


@server.tool()
def crash() -> str:
    """Kills the server in the middle of the call."""
    print("fatal: the disk is on fire", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def noisy() -> str:
    """Prints stray lines on stdout (the stdio channel) before answering."""
    os.write(WIRE, b"debug: this is not JSON-RPC\n{broken json\n")
    return "quiet now"


@server.tool()
def garble() -> str:
    """Prints a fragment with no newline, so its own answer arrives corrupted."""
    os.write(WIRE, b"partial output ")
    return "never seen"


@server.tool(annotations=ToolAnnotations(idempotent_hint=True))
def whoami() -> dict[str, object]:
    """The server's process id, working directory and ACTLOOP_TEST_VALUE."""
    return {"pid": os.getpid(), "cwd": os.getcwd(), "value": os.environ.get("ACTLOOP_TEST_VALUE")}


@server.tool(structured_output=False)
def big(megabytes: int) -> str:
    """A text result of `megabytes` MB (one line on stdio)."""
    return "x" * (megabytes * 1_000_000)


@server.tool(structured_output=False)
def traced(ctx: Context) -> str:  # type: ignore[type-arg]
    """The W3C traceparent the request carried in its `_meta` ('' if none)."""
    meta = ctx.request_context.meta or {}
    return str(meta.get("traceparent", ""))


def _secret() -> str:
    """Only offered after unlock."""
    return "the secret is 42"


@server.tool()
async def unlock(ctx: Context) -> str:  # type: ignore[type-arg]
    """Adds the tool `secret`, removes `unlock`, and tells the client the list changed."""
    server.add_tool(_secret, name="secret")
    server.remove_tool("unlock")
    await ctx.notify_tools_changed()
    return "unlocked"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=PORT)
    else:
        server.run("stdio")
