"""MCP tools: the tools of any Model Context Protocol server as actloop tools (extra `[mcp]`).

    from actloop.mcp import MCPToolset

    with MCPToolset.stdio("python", ["server.py"], prefix="files_") as files:
        executor = AgentExecutor(agent=..., tools=files.get_tools(), max_execution_time=60)

Built on the official `mcp` SDK (2.x; servers of both protocol eras), imported when a toolset is
made (`import actloop` stays free of it). A toolset works from sync and async code; each call
obeys its `timeout` and the run's deadline; server failures become `Error: ...` observations (or
`MCPError`s) naming the server.
"""

from actloop.mcp._errors import MCPConnectionError, MCPError, MCPTimeoutError
from actloop.mcp._tool import MCPTool
from actloop.mcp._toolset import MCPToolset

__all__ = ["MCPConnectionError", "MCPError", "MCPTimeoutError", "MCPTool", "MCPToolset"]

for _exported in (MCPConnectionError, MCPError, MCPTimeoutError, MCPTool, MCPToolset):
    _exported.__module__ = __name__  # the public path, as the root package pins for its packages
