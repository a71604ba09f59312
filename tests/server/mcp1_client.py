"""A 2025-era MCP client (the `mcp` 1.x SDK, run by its own venv's Python): `initialize`, then
list the tools and call `agent` with a progress callback; prints what it saw as JSON.

Usage: python mcp1_client.py URL TOKEN THREAD_ID QUESTION
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main(url: str, token: str, thread: str, question: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"}
    seen: list[list[Any]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append([value, total, message])

    async with streamablehttp_client(url, headers=headers) as (read, write, session_id):
        async with ClientSession(read, write) as session:
            started = await session.initialize()
            listed = await session.list_tools()
            arguments = {"input": question, "thread_id": thread}
            result = await session.call_tool("agent", arguments, progress_callback=progress)
            return {
                "protocol": started.protocolVersion,
                "server": started.serverInfo.name,
                "session": session_id(),
                "tools": [t.name for t in listed.tools],
                "text": [c.text for c in result.content if c.type == "text"],
                "structured": result.structuredContent,
                "error": result.isError,
                "progress": seen,
            }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:5]))))
