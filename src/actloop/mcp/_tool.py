"""MCPTool: one tool of an MCP server, as an actloop tool.

Its `args_schema` is the server's JSON schema, so arguments are checked before the call and a
bad call becomes the usual observation naming the tool, field and reason (SPEC B10). Failures of
the server are `MCPError`s, which the default `handle_tool_error` turns into `Error: ...`. A
call the server answers with elicitations raises `NeedsInput` (see `_input`): a durable run
pauses for a person's answers and re-sends the call with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from actloop.mcp._errors import error_observation
from actloop.tools import BaseTool

if TYPE_CHECKING:
    from actloop.mcp._toolset import MCPToolset

__all__ = ["MCPTool"]


class MCPTool(BaseTool):
    """A tool served by an MCP server; calls go through its toolset's connection."""

    toolset: MCPToolset
    """The toolset whose server runs the tool."""
    remote_name: str
    """The tool's name on the server (`name` may carry the toolset's prefix)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("handle_tool_error", error_observation)
        super().__init__(**kwargs)

    @property
    def server(self) -> str:
        """The name of the server the tool's calls go to."""
        return self.toolset.name

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The arguments as one dict: a plain string fills the only field, or none."""
        schema = self.args_schema if isinstance(self.args_schema, dict) else {}
        fields = list(schema.get("properties") or {})
        if isinstance(tool_input, str) and not fields:
            return (), {}
        args, kwargs = super()._to_args_and_kwargs(tool_input, tool_call_id)
        if args and fields:
            kwargs = {fields[0]: args[0], **kwargs}
        return (), kwargs

    def _run(self, **kwargs: Any) -> Any:
        return self.toolset.call(self.remote_name, kwargs)

    async def _arun(self, **kwargs: Any) -> Any:
        return await self.toolset.acall(self.remote_name, kwargs)
