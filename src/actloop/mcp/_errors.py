"""Errors of MCP tools; each names the server (and the tool, when a call failed).

    ToolException
    └── MCPError: the server reported an error, or failed to answer
        ├── MCPTimeoutError: no answer within the per-call timeout or the handshake timeout
        └── MCPConnectionError: the server could not be started or reached, or went away

They are ToolExceptions, so an MCP tool's default `handle_tool_error` turns them into an
`Error: ...` observation the model can act on; with `handle_tool_error=False` they escape the run
with its steps attached, as any tool error does.
"""

from __future__ import annotations

from typing import Any, cast

from actloop.exceptions import ToolException

__all__ = [
    "Lost",
    "MCPConnectionError",
    "MCPError",
    "MCPTimeoutError",
    "NoAnswer",
    "TooMany",
    "error_observation",
    "garbage_note",
    "leaf",
    "reason",
]


class MCPError(ToolException):
    """An MCP server reported an error or failed to answer; `server` and `tool` say which."""

    def __init__(self, message: str, *, server: str, tool: str | None = None) -> None:
        super().__init__(message)
        self.server = server
        self.tool = tool


class MCPTimeoutError(MCPError):
    """The server did not answer in time."""


class MCPConnectionError(MCPError):
    """The server could not be started or reached, or its connection ended."""


def error_observation(exc: ToolException) -> str:
    """An MCP tool's default `handle_tool_error`: the error as an `Error: ...` observation."""
    return f"Error: {exc}"


def garbage_note(count: int, kept: list[str]) -> str:
    """What the server wrote on stdout during a call that was not an MCP message: how many
    lines, and the first of those still kept (only the last few are)."""
    if not count:
        return ""
    lines = "1 line" if count == 1 else f"{count} lines"
    which = "the first" if len(kept) == count else "the first kept"
    quote = f", {which}: {kept[0]!r}" if kept else ""
    return f"; it wrote {lines} on stdout that are not MCP messages{quote}"


def leaf(exc: BaseException) -> BaseException:
    """The innermost error of an exception group (anyio task groups wrap transport errors)."""
    inner: Any = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and inner:
        exc = cast("BaseException", inner[0])
        inner = getattr(exc, "exceptions", None)
    return exc


def reason(exc: BaseException) -> str:
    """What went wrong, in a few words."""
    exc = leaf(exc)
    return str(exc) or type(exc).__name__


class Lost(Exception):
    """Internal: the connection ended (or was never up) before the call was answered."""


class NoAnswer(Exception):
    """Internal: the server did not answer within the time allowed."""


class TooMany(Exception):
    """Internal: a paginated list went past its bound in pages or items."""
