"""Tools: BaseTool, Tool, StructuredTool, the @tool decorator, and the executor's own tools.

Compatible with langchain-core's tools, with two deliberate differences: arguments that fail
validation become an observation naming the tool, field and reason instead of raising (SPEC B10),
and a tool function's `RunnableConfig` parameter receives the run's config (SPEC B5).
"""

from actloop.exceptions import ToolException
from actloop.tools._agent_tools import ExceptionTool, InvalidTool
from actloop.tools._base import ArgsSchema, BaseTool
from actloop.tools._notes import CallNote, call_note
from actloop.tools._openai import convert_to_openai_function, convert_to_openai_tool
from actloop.tools._structured import StructuredTool, Tool, tool
from actloop.tools.categories import ToolCategories
from actloop.tools.render import render_text_description, render_text_description_and_args

__all__ = [
    "ArgsSchema",
    "BaseTool",
    "CallNote",
    "ExceptionTool",
    "InvalidTool",
    "StructuredTool",
    "Tool",
    "ToolCategories",
    "ToolException",
    "call_note",
    "convert_to_openai_function",
    "convert_to_openai_tool",
    "render_text_description",
    "render_text_description_and_args",
    "tool",
]
