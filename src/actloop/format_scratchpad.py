"""Scratchpads: the agent's earlier steps written back into its next prompt.

Same output as langchain-classic's `format_scratchpad` functions; they run once per step, so they
avoid repeated string concatenation and quadratic de-duplication.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Hashable, Sequence
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
_Bucket = BaseMessage | list[BaseMessage]
"""A bucket of logged messages: its one message, or a list when several share its key."""
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


def _bucket_key(message: BaseMessage) -> Hashable:
    """Equal messages have equal bucket keys (one of their own strings, so nothing is built):
    buckets for de-duplication without O(n^2) comparisons."""
    calls: list[ToolCall] | None = getattr(message, "tool_calls", None)
    if calls:
        return calls[0].get("id")
    content = message.content
    return content if isinstance(content, str) else None


class _ToolMessageLog:
    """The messages of steps formatted so far, extendable step by step.

    Each step's messages depend only on the steps before it, so the log of a longer run starts
    with the log of its first steps: an agent's formatter extends the log it already has.
    Messages already logged are found through buckets: tool messages by `tool_call_id`, the
    others by `_bucket_key`; a bucket holds its one message, or a list when several share it.
    """

    __slots__ = ("by_call", "messages", "others", "steps")

    def __init__(self) -> None:
        self.messages: list[BaseMessage] = []
        self.by_call: dict[Hashable, _Bucket] = {}
        """Tool messages (they have a `tool_call_id`) by that id."""
        self.others: dict[Hashable, _Bucket] = {}
        """Every other message by `_bucket_key`."""
        self.steps: list[tuple[AgentAction, Any]] = []
        """The step tuples formatted so far (kept to recognise the same run's next call)."""

    def extend(self, steps: Steps) -> None:
        for step in steps:
            self._add(*step)
            self.steps.append(step)

    def _add(self, action: AgentAction, observation: Any) -> None:
        if not isinstance(action, ToolAgentAction):
            plain = AIMessage(action.log)  # added unchecked, but later ones are checked against it
            self._remember(plain)
            self.messages.append(plain)
            return
        new: list[BaseMessage] = []
        for message in (*action.message_log, _tool_message(action, observation)):
            if not self._seen(message):
                new.append(message)
        for message in new:  # checked against earlier steps only, as in LangChain
            self._remember(message)
            self.messages.append(message)

    def _index(self, message: BaseMessage) -> tuple[dict[Hashable, _Bucket], Hashable]:
        """The buckets `message` belongs to, and its key there (equal messages: the same)."""
        call_id = getattr(message, "tool_call_id", None)
        if call_id is not None:
            return self.by_call, call_id
        return self.others, _bucket_key(message)

    def _seen(self, message: BaseMessage) -> bool:
        """Whether this message, or one equal to it, is in the log already."""
        index, key = self._index(message)
        bucket = index.get(key)
        if bucket is None:
            return False
        if isinstance(bucket, list):
            return any(m is message or m == message for m in bucket)
        return bucket is message or bool(bucket == message)

    def _remember(self, message: BaseMessage) -> None:
        """Put `message` in its bucket (a second message there turns the bucket into a list)."""
        index, key = self._index(message)
        bucket = index.get(key)
        if bucket is None:
            index[key] = message
        elif isinstance(bucket, list):
            bucket.append(message)
        else:
            index[key] = [bucket, message]


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
