"""Hierarchical tool selection for large tool sets: `tool_catalog(categories)` gives the agent two
tools instead of hundreds. `list_tools(category)` describes the tools of one category (their names,
descriptions and arguments); `call_tool(name, arguments)` runs one of them. The agent picks a
category, then a tool in it, and its prompt stays small whatever the number of tools.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from actloop.tools._base import BaseTool
from actloop.tools._structured import StructuredTool
from actloop.tools.render import render_text_description_and_args

__all__ = ["tool_catalog"]


def _index(categories: Mapping[str, Sequence[BaseTool]]) -> dict[str, BaseTool]:
    """Every tool by name; a name in two categories is a developer mistake."""
    by_name: dict[str, BaseTool] = {}
    for category, tools in categories.items():
        for tool in tools:
            if tool.name in by_name:
                raise ValueError(
                    f"tool {tool.name!r} appears twice in the catalog (category {category!r}); "
                    "give each tool one category and a unique name"
                )
            by_name[tool.name] = tool
    return by_name


def tool_catalog(
    categories: Mapping[str, Sequence[BaseTool]],
    descriptions: Mapping[str, str] | None = None,
) -> list[BaseTool]:
    """`[list_tools, call_tool]` over `categories` ({category: tools}); `descriptions` says what
    each category is for (shown in `list_tools`' description)."""
    if not categories:
        raise ValueError("tool_catalog needs at least one category of tools")
    by_name = _index(categories)
    about = descriptions or {}
    listing = "\n".join(
        f"- {name}: {about[name]}" if name in about else f"- {name}" for name in categories
    )

    def list_tools(category: str) -> str:
        tools = categories.get(category)
        if tools is None:
            return f"Error: no category {category!r}; choose one of {', '.join(categories)}."
        return render_text_description_and_args(list(tools))

    def call_tool(name: str, arguments: dict[str, Any] | str) -> Any:
        tool = by_name.get(name)
        if tool is None:
            return f"Error: no tool {name!r}; call list_tools with a category to see its tools."
        if isinstance(arguments, str) and not tool.is_single_input:
            try:
                arguments = json.loads(arguments)
            except ValueError:
                return f"Error: the arguments of {name!r} must be a JSON object."
        return tool.run(arguments)

    return [
        StructuredTool.from_function(
            list_tools,
            name="list_tools",
            description=f"List the tools of one category. Categories:\n{listing}",
        ),
        StructuredTool.from_function(
            call_tool,
            name="call_tool",
            description="Call a tool found with list_tools: its name and its arguments "
            "(an object, or a string for a tool with one argument).",
        ),
    ]
