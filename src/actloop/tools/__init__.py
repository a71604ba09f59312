"""Tools: BaseTool, Tool, StructuredTool, the @tool decorator, and the executor's own tools.

Compatible with langchain-core's tools, with two deliberate differences: arguments that fail
validation become an observation naming the tool, field and reason instead of raising (SPEC B10),
and a tool function's `RunnableConfig` parameter receives the run's config (SPEC B5).
"""

from typing import TYPE_CHECKING

from actloop.exceptions import ToolException
from actloop.tools._agent_tools import ExceptionTool, InvalidTool
from actloop.tools._base import ArgsSchema, BaseTool
from actloop.tools._input import InputCall, NeedsInput, Question, current_input
from actloop.tools._notes import CallNote, call_note
from actloop.tools._openai import convert_to_openai_function, convert_to_openai_tool
from actloop.tools._structured import StructuredTool, Tool, tool
from actloop.tools.categories import ToolCategories
from actloop.tools.render import render_text_description, render_text_description_and_args

if TYPE_CHECKING:
    from actloop.tools._injected import (
        InjectedState,
        InjectedStore,
        InjectedToolArg,
        InjectedToolCallId,
        ToolRuntime,
    )

_INJECTED = frozenset(
    ("InjectedState", "InjectedStore", "InjectedToolArg", "InjectedToolCallId", "ToolRuntime")
)


def __getattr__(name: str) -> object:
    """The injected-argument markers and `ToolRuntime`, loaded when first asked for (only
    `create_agent` agents fill them in; `import actloop` stays without them)."""
    if name in _INJECTED:
        from actloop.tools import _injected

        return getattr(_injected, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ArgsSchema",
    "BaseTool",
    "CallNote",
    "ExceptionTool",
    "InjectedState",
    "InjectedStore",
    "InjectedToolArg",
    "InjectedToolCallId",
    "InputCall",
    "InvalidTool",
    "NeedsInput",
    "Question",
    "StructuredTool",
    "Tool",
    "ToolCategories",
    "ToolException",
    "ToolRuntime",
    "call_note",
    "convert_to_openai_function",
    "convert_to_openai_tool",
    "current_input",
    "render_text_description",
    "render_text_description_and_args",
    "tool",
]
