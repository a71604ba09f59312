"""The executor's own tools: InvalidTool (unknown tool names) and ExceptionTool (parse errors)."""

from __future__ import annotations

from actloop.tools._base import BaseTool

__all__ = ["ExceptionTool", "InvalidTool"]


def _not_valid(requested_tool_name: str, available_tool_names: list[str]) -> str:
    return (
        f"{requested_tool_name} is not a valid tool, "
        f"try one of [{', '.join(available_tool_names)}]."
    )


class InvalidTool(BaseTool):
    """Run when the agent names an unknown tool; its observation lists the valid names."""

    name: str = "invalid_tool"
    description: str = "Called when tool name is invalid. Suggests valid tool names."

    def _run(self, requested_tool_name: str, available_tool_names: list[str]) -> str:
        return _not_valid(requested_tool_name, available_tool_names)

    async def _arun(self, requested_tool_name: str, available_tool_names: list[str]) -> str:
        return _not_valid(requested_tool_name, available_tool_names)


class ExceptionTool(BaseTool):
    """Run for a parse error: the observation is its input (the error text for the model)."""

    name: str = "_Exception"
    description: str = "Exception tool"

    def _run(self, query: str) -> str:
        return query

    async def _arun(self, query: str) -> str:
        return query
