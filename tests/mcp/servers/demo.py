"""A FastMCP server with well-behaved and badly-behaved tools, for actloop's MCP tests.

python demo.py                 serve over stdio
python demo.py --http PORT     serve streamable HTTP on 127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import (
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

PORT = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--http" else 8000
server = FastMCP("demo", host="127.0.0.1", port=PORT, log_level="WARNING")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
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
    png = ImageContent(type="image", data=data, mimeType="image/png")
    note = EmbeddedResource(
        type="resource",
        resource=TextResourceContents(uri="file:///notes.txt", mimeType="text/plain", text="hi"),
    )
    return [TextContent(type="text", text="a picture:"), png, note]


@server.tool()
def boom(reason: str) -> str:
    """Always fails."""
    raise ValueError(f"cannot do it: {reason}")


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
    print("debug: this is not JSON-RPC", flush=True)
    print("{broken json", flush=True)
    return "quiet now"


@server.tool()
def garble() -> str:
    """Prints a fragment with no newline, so its own answer arrives corrupted."""
    print("partial output ", end="", flush=True)
    return "never seen"


@server.tool(annotations=ToolAnnotations(idempotentHint=True))
def whoami() -> dict[str, object]:
    """The server's process id, working directory and ACTLOOP_TEST_VALUE."""
    return {"pid": os.getpid(), "cwd": os.getcwd(), "value": os.environ.get("ACTLOOP_TEST_VALUE")}


def _secret() -> str:
    """Only offered after unlock."""
    return "the secret is 42"


@server.tool()
async def unlock(ctx: Context) -> str:  # type: ignore[type-arg]
    """Adds the tool `secret`, removes `unlock`, and tells the client the list changed."""
    server.add_tool(_secret, name="secret")
    server.remove_tool("unlock")
    await ctx.session.send_tool_list_changed()
    return "unlocked"


if __name__ == "__main__":
    server.run("streamable-http" if sys.argv[1:2] == ["--http"] else "stdio")
