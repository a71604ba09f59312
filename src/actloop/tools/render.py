"""Tools as plain text for prompts (ReAct's `{tools}`), the same text langchain-core renders."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from inspect import signature
from typing import Any

from actloop.tools._base import BaseTool

__all__ = ["ToolsRenderer", "render_text_description", "render_text_description_and_args"]

ToolsRenderer = Callable[[list[BaseTool]], str]
"""A function that renders tools as text for a prompt."""


def _describe(tool: BaseTool) -> str:
    """`name(signature) - description` for function tools, else `name - description`."""
    func: Any = getattr(tool, "func", None)
    if func:
        return f"{tool.name}{signature(func)} - {tool.description}"
    return f"{tool.name} - {tool.description}"


def render_text_description(tools: Sequence[BaseTool]) -> str:
    """One line per tool: `search(query: str) - Look things up` (signature when it has a func)."""
    return "\n".join(_describe(tool) for tool in tools)


def render_text_description_and_args(tools: Sequence[BaseTool]) -> str:
    """One line per tool with its arguments: `search - Look things up, args: {...}`."""
    return "\n".join(f"{_describe(tool)}, args: {tool.args}" for tool in tools)
