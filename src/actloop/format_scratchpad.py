"""Scratchpads: the agent's earlier steps written back into its next prompt.

Same output as langchain-classic's `format_scratchpad` functions; they run once per step, so they
avoid repeated string concatenation and quadratic de-duplication.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from actloop.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from actloop.steps import AgentAction, ToolAgentAction

__all__ = [
    "IncrementalToolMessages",
    "format_log_to_messages",
    "format_log_to_str",
    "format_to_openai_tool_messages",
    "format_to_tool_messages",
]

Steps = Sequence[tuple[AgentAction, Any]]
_Key = tuple[type[BaseMessage], str | None, str | None, str | None]
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


def _key(message: BaseMessage) -> _Key:
    """Equal messages have equal keys: buckets for de-duplication without O(n^2) comparisons."""
    content = message.content
    calls: list[ToolCall] | None = getattr(message, "tool_calls", None)
    return (
        type(message),
        content if isinstance(content, str) else None,
        getattr(message, "tool_call_id", None),
        calls[0].get("id") if calls else None,
    )


class _ToolMessageLog:
    """The messages of steps formatted so far, extendable step by step.

    Each step's messages depend only on the steps before it, so the log of a longer run starts
    with the log of its first steps: an agent's formatter extends the log it already has.
    """

    __slots__ = ("messages", "seen", "steps")

    def __init__(self) -> None:
        self.messages: list[BaseMessage] = []
        self.seen: dict[_Key, list[BaseMessage]] = {}
        self.steps: list[tuple[AgentAction, Any]] = []
        """The step tuples formatted so far (kept to recognise the same run's next call)."""

    def extend(self, steps: Steps) -> None:
        for step in steps:
            self._add(*step)
            self.steps.append(step)

    def _add(self, action: AgentAction, observation: Any) -> None:
        seen, messages = self.seen, self.messages
        if not isinstance(action, ToolAgentAction):
            plain = AIMessage(action.log)  # added unchecked, but later ones are checked against it
            seen.setdefault(_key(plain), []).append(plain)
            messages.append(plain)
            return
        new: list[tuple[_Key, BaseMessage]] = []
        for message in (*action.message_log, _tool_message(action, observation)):
            key = _key(message)
            if not any(m is message or m == message for m in seen.get(key, ())):
                new.append((key, message))
        for key, message in new:  # checked against earlier steps only, as in LangChain
            seen.setdefault(key, []).append(message)
            messages.append(message)


def format_to_tool_messages(intermediate_steps: Steps) -> list[BaseMessage]:
    """The message log of each tool-call action then its `ToolMessage`; each message once."""
    log = _ToolMessageLog()
    log.extend(intermediate_steps)
    return log.messages


class IncrementalToolMessages:
    """`format_to_tool_messages` for one agent, reusing the previous call's work.

    An executor passes the same growing list of step tuples on every plan of a run; when the
    steps given start with exactly the steps formatted last time (the same objects), only the new
    ones are formatted, so a step costs O(new steps) instead of O(all steps). Anything else
    (another run, trimmed steps) starts afresh. The result is always a new list.
    """

    def __init__(self) -> None:
        self._log = _ToolMessageLog()
        self._lock = threading.Lock()

    def __call__(self, intermediate_steps: Steps) -> list[BaseMessage]:
        with self._lock:  # batch() may run one agent from several threads
            log = self._log
            done = len(log.steps)
            if len(intermediate_steps) < done or any(
                a is not b for a, b in zip(log.steps, intermediate_steps, strict=False)
            ):
                log, done = _ToolMessageLog(), 0
            log.extend(intermediate_steps[done:])
            self._log = log
            return list(log.messages)


format_to_openai_tool_messages = format_to_tool_messages
"""LangChain's older name for `format_to_tool_messages`."""
