"""Scratchpads: the agent's earlier steps written back into its next prompt.

Same output as langchain-classic's `format_scratchpad` functions; they run once per step, so they
avoid repeated string concatenation and quadratic de-duplication.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from actloop.agents import AgentAction, ToolAgentAction
from actloop.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

__all__ = [
    "format_log_to_messages",
    "format_log_to_str",
    "format_to_openai_tool_messages",
    "format_to_tool_messages",
]

Steps = Sequence[tuple[AgentAction, Any]]
T = TypeVar("T")


def from_steps(formatter: Callable[[Steps], T]) -> Callable[[dict[str, Any]], T]:
    """`lambda x: formatter(x["intermediate_steps"])`, the scratchpad step of agent pipelines."""
    return lambda x: formatter(x["intermediate_steps"])


def format_log_to_str(
    intermediate_steps: Steps,
    observation_prefix: str = "Observation: ",
    llm_prefix: str = "Thought: ",
) -> str:
    """Each step as `log + "\\n" + observation_prefix + observation + "\\n" + llm_prefix`."""
    return "".join(
        f"{action.log}\n{observation_prefix}{observation}\n{llm_prefix}"
        for action, observation in intermediate_steps
    )


def format_log_to_messages(
    intermediate_steps: Steps,
    template_tool_response: str = "{observation}",
) -> list[BaseMessage]:
    """Each step as an AI message (the log) and a human message (the formatted observation)."""
    thoughts: list[BaseMessage] = []
    for action, observation in intermediate_steps:
        thoughts.append(AIMessage(action.log))
        thoughts.append(HumanMessage(template_tool_response.format(observation=observation)))
    return thoughts


def observation_text(observation: Any) -> str:
    """An observation as message text: itself if a string, else JSON, else `str()`."""
    if isinstance(observation, str):
        return observation
    try:
        return json.dumps(observation, ensure_ascii=False)
    except Exception:
        return str(observation)


def _tool_message(action: ToolAgentAction, observation: Any) -> ToolMessage:
    return ToolMessage(
        observation_text(observation),
        tool_call_id=action.tool_call_id,
        additional_kwargs={"name": action.tool},
    )


def _key(message: BaseMessage) -> tuple[Any, ...]:
    """Equal messages have equal keys: buckets for de-duplication without O(n^2) comparisons."""
    content = message.content
    calls: list[Any] | None = getattr(message, "tool_calls", None)
    return (
        type(message),
        content if isinstance(content, str) else None,
        getattr(message, "tool_call_id", None),
        calls[0].get("id") if calls else None,
    )


def format_to_tool_messages(intermediate_steps: Steps) -> list[BaseMessage]:
    """The message log of each tool-call action then its `ToolMessage`; each message once."""
    messages: list[BaseMessage] = []
    seen: dict[tuple[Any, ...], list[BaseMessage]] = {}
    for action, observation in intermediate_steps:
        if not isinstance(action, ToolAgentAction):
            plain = AIMessage(action.log)  # added unchecked, but later ones are checked against it
            seen.setdefault(_key(plain), []).append(plain)
            messages.append(plain)
            continue
        new: list[tuple[tuple[Any, ...], BaseMessage]] = []
        for message in (*action.message_log, _tool_message(action, observation)):
            key = _key(message)
            if not any(m is message or m == message for m in seen.get(key, ())):
                new.append((key, message))
        for key, message in new:  # checked against earlier steps only, as in LangChain
            seen.setdefault(key, []).append(message)
            messages.append(message)
    return messages


format_to_openai_tool_messages = format_to_tool_messages
"""LangChain's older name for `format_to_tool_messages`."""
