"""`actloop run --mcp "COMMAND ARGS"` and `--mcp-url URL`: the tools of MCP servers, beside the
built-ins. Each server is started (or reached) before the run and ended when the run ends."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
from typing import Any

from actloop.exceptions import ConfigurationError

__all__ = ["add_mcp_options", "mcp_tools"]


def add_mcp_options(parser: argparse.ArgumentParser) -> None:
    """`--mcp` and `--mcp-url`: for `run`, and `runs resume` (the servers the run started with)."""
    parser.add_argument(
        "--mcp",
        action="append",
        metavar='"COMMAND ARGS"',
        help="add the tools of an MCP server started by this command (stdio; repeatable)",
    )
    parser.add_argument(
        "--mcp-url",
        action="append",
        metavar="URL",
        help="add the tools of an MCP server at this streamable HTTP URL (repeatable)",
    )


def mcp_tools(
    args: argparse.Namespace, resources: contextlib.ExitStack, taken: set[str]
) -> list[Any]:
    """The tools of every `--mcp`/`--mcp-url` server; a name already in `taken` (a built-in or
    another server's tool) makes the server's tools take the prefix `SERVER_` (`SERVER2_`, ...)."""
    commands: list[str] = getattr(args, "mcp", None) or []
    urls: list[str] = getattr(args, "mcp_url", None) or []
    if not commands and not urls:
        return []
    from actloop.mcp import MCPError, MCPTool, MCPToolset

    # a server that does not start cannot hold the run past its --timeout either
    run_limit: float | None = getattr(args, "timeout", None)
    limit = 30.0 if run_limit is None else min(30.0, run_limit)
    toolsets: list[MCPToolset] = []
    for command in commands:
        parts = shlex.split(command)
        if not parts:
            raise ConfigurationError('--mcp needs a command, e.g. --mcp "python server.py"')
        # a command started from a shell sees the shell's environment; the SDK's default is less
        toolsets.append(
            MCPToolset.stdio(parts[0], parts[1:], env=dict(os.environ), connect_timeout=limit)
        )
    toolsets += [MCPToolset.http(url, connect_timeout=limit) for url in urls]
    tools: list[Any] = []
    for toolset in toolsets:
        try:
            found = resources.enter_context(toolset).get_tools()
        except MCPError as exc:
            raise ConfigurationError(str(exc)) from exc
        if any(t.name in taken for t in found):
            _prefix(toolset, [t for t in found if isinstance(t, MCPTool)], taken)
        taken.update(t.name for t in found)
        tools += found
    return tools


def _prefix(toolset: Any, tools: list[Any], taken: set[str]) -> None:
    """Rename the toolset's tools with the first prefix `NAME_`, `NAME2_`, ... that clashes with
    nothing in `taken`."""
    n = 1
    prefix = f"{toolset.name}_"
    while any(prefix + t.remote_name in taken for t in tools):
        n += 1
        prefix = f"{toolset.name}{n}_"
    toolset.prefix = prefix
    for tool in tools:
        tool.name = prefix + tool.remote_name
