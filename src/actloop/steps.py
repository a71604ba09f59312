"""What an agent decides and what running it produced: actions, finishes and steps.

The data layer's home of these models (the loop core and every agent kind import them from here);
users import them from `actloop.agents`, the name they report (`__module__`), which also holds
LangChain 1.x's `create_agent` on top of the executor.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from actloop.messages import AIMessage, BaseMessage, FunctionMessage, HumanMessage
from actloop.messages._record import Record

__all__ = [
    "AgentAction",
    "AgentActionMessageLog",
    "AgentFinish",
    "AgentStep",
    "ToolAgentAction",
]


class AgentAction(Record):
    """A request to run `tool` with `tool_input`; `log` is the model text it came from."""

    __slots__ = ("log", "tool", "tool_input")
    type: ClassVar[str] = "AgentAction"
    _fields = ("tool", "tool_input", "log")

    tool: str
    """Name of the tool to run."""
    tool_input: str | dict[str, Any]
    """Input for the tool."""
    log: str
    """The model output this action was parsed from."""

    def __init__(self, tool: str, tool_input: str | dict[str, Any], log: str) -> None:
        self.tool = tool
        self.tool_input = tool_input
        self.log = log

    @property
    def messages(self) -> Sequence[BaseMessage]:
        """The model turn this action stands for: `[AIMessage(content=log)]`."""
        return [AIMessage(self.log)]


class AgentActionMessageLog(AgentAction):
    """An action parsed from chat messages; `message_log` holds those messages."""

    __slots__ = ("message_log",)
    type: ClassVar[str] = "AgentActionMessageLog"
    _dump_as: ClassVar[dict[str, type[Record]]] = {"message_log": BaseMessage}
    _fields = ("tool", "tool_input", "log", "message_log")

    message_log: Sequence[BaseMessage]
    """The model messages the action was parsed from."""

    def __init__(
        self,
        tool: str,
        tool_input: str | dict[str, Any],
        log: str,
        message_log: Sequence[BaseMessage],
    ) -> None:
        self.tool = tool
        self.tool_input = tool_input
        self.log = log
        self.message_log = message_log

    @property
    def messages(self) -> Sequence[BaseMessage]:
        """The model turn this action stands for: its `message_log`."""
        return self.message_log


class ToolAgentAction(AgentActionMessageLog):
    """An action from a model tool call; `tool_call_id` links the result to the call."""

    __slots__ = ("tool_call_id",)
    type: ClassVar[str] = "AgentActionMessageLog"
    """Same as the parent's, as in LangChain (it never overrode the discriminator)."""
    _fields = ("tool", "tool_input", "log", "message_log", "tool_call_id")

    tool_call_id: str | None
    """Id of the model's tool call."""

    def __init__(
        self,
        tool: str,
        tool_input: str | dict[str, Any],
        log: str,
        message_log: Sequence[BaseMessage],
        tool_call_id: str | None,
    ) -> None:
        self.tool = tool
        self.tool_input = tool_input
        self.log = log
        self.message_log = message_log
        self.tool_call_id = tool_call_id


class AgentFinish(Record):
    """The agent's final answer: `return_values` (usually `{"output": ...}`) and its `log`."""

    __slots__ = ("log", "return_values")
    type: ClassVar[str] = "AgentFinish"
    _fields = ("return_values", "log")

    return_values: dict[str, Any]
    log: str

    def __init__(self, return_values: dict[str, Any], log: str) -> None:
        self.return_values = return_values
        self.log = log

    @property
    def messages(self) -> Sequence[BaseMessage]:
        """The final model turn: `[AIMessage(content=log)]`."""
        return [AIMessage(self.log)]


class AgentStep(Record):
    """One executed action and the observation its tool returned."""

    __slots__ = ("action", "observation")
    type: ClassVar[str] = "AgentStep"
    _dump_as: ClassVar[dict[str, type[Record]]] = {"action": AgentAction}
    _dump_type: ClassVar[bool] = False
    _fields = ("action", "observation")

    action: AgentAction
    observation: Any
    """What the tool returned, as returned (not coerced to text)."""

    def __init__(self, action: AgentAction, observation: Any) -> None:
        self.action = action
        self.observation = observation

    @property
    def messages(self) -> Sequence[BaseMessage]:
        """The observation as the model sees it (a function message for message-log actions)."""
        content = _observation_text(self.observation)
        if isinstance(self.action, AgentActionMessageLog):
            return [FunctionMessage(content, name=self.action.tool)]
        return [HumanMessage(content)]


def _observation_text(observation: Any) -> str:
    """Text form of an observation: itself if a string, else JSON, else `str()`."""
    if isinstance(observation, str):
        return observation
    try:
        return json.dumps(observation, ensure_ascii=False)
    except Exception:
        return str(observation)


for _cls in (AgentAction, AgentActionMessageLog, ToolAgentAction, AgentFinish, AgentStep):
    _cls.__module__ = "actloop.agents"  # the public path, as before the move
