"""`get_buffer_string`: messages as one `"Role: text"` string (what text models see)."""

from __future__ import annotations

from collections.abc import Sequence

from actloop.messages._types import (
    AIMessage,
    BaseMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

__all__ = ["get_buffer_string"]


def get_buffer_string(
    messages: Sequence[BaseMessage],
    human_prefix: str = "Human",
    ai_prefix: str = "AI",
    *,
    system_prefix: str = "System",
    function_prefix: str = "Function",
    tool_prefix: str = "Tool",
    message_separator: str = "\n",
) -> str:
    """Messages as `"Human: ..."`/`"AI: ..."` lines; an AI message's tool calls follow its text."""
    lines: list[str] = []
    for m in messages:
        if isinstance(m, HumanMessage):
            role = human_prefix
        elif isinstance(m, AIMessage):
            role = ai_prefix
        elif isinstance(m, SystemMessage):
            role = system_prefix
        elif isinstance(m, FunctionMessage):
            role = function_prefix
        elif isinstance(m, ToolMessage):
            role = tool_prefix
        elif isinstance(role_attr := getattr(m, "role", None), str):
            role = role_attr
        else:
            raise ValueError(f"Got unsupported message type: {m}")
        line = f"{role}: {m.text}"
        if isinstance(m, AIMessage):
            if m.tool_calls:
                line += str(m.tool_calls)
            elif "function_call" in m.additional_kwargs:
                line += str(m.additional_kwargs["function_call"])
        lines.append(line)
    return message_separator.join(lines)
