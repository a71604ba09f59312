"""Tool-calling agents: the model's native tool calls become a multi-action plan.

`ToolsAgentOutputParser` turns an AI message into `ToolAgentAction`s (one per tool call) or an
`AgentFinish`, exactly as langchain-classic does, with one difference: tool-call arguments that
are valid JSON but not an object raise `OutputParserException` (LangChain fails with an
AttributeError), so the parser never fails with anything else on a model's reply.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from actloop.exceptions import OutputParserException
from actloop.format_scratchpad import (
    IncrementalToolMessages,
    format_to_tool_messages,
    from_steps,
)
from actloop.messages import AIMessage, BaseMessage, ToolCall
from actloop.output_parsers import AnyGeneration, MultiActionAgentOutputParser
from actloop.outputs import ChatGeneration
from actloop.prompts import ChatPromptTemplate
from actloop.prompts._agent_checks import require_variables
from actloop.runnables._base import Runnable
from actloop.runnables._compose import RunnablePassthrough
from actloop.steps import AgentAction, AgentFinish, ToolAgentAction

if TYPE_CHECKING:
    from actloop.tools._openai import ToolLike

__all__ = [
    "MessageFormatter",
    "OpenAIToolAgentAction",
    "OpenAIToolsAgentOutputParser",
    "ToolsAgentOutputParser",
    "create_tool_calling_agent",
    "parse_ai_message_to_openai_tool_action",
    "parse_ai_message_to_tool_action",
]

OpenAIToolAgentAction = ToolAgentAction
"""LangChain's OpenAI-specific name for a tool-call action."""

MessageFormatter = Callable[[Sequence[tuple[AgentAction, Any]]], list[BaseMessage]]
"""Turns `(action, observation)` steps into the scratchpad messages."""


def _raw_tool_calls(raw: list[dict[str, Any]]) -> list[ToolCall]:
    """OpenAI-style `additional_kwargs["tool_calls"]` as tool calls; bad JSON raises."""
    calls: list[ToolCall] = []
    for tool_call in raw:
        function = tool_call["function"]
        try:
            args = json.loads(function["arguments"] or "{}")
        except (ValueError, RecursionError) as e:  # JSONDecodeError, or too big/deep to decode
            msg = (
                f"Could not parse tool input: {function} because the `arguments` is not valid JSON."
            )
            raise OutputParserException(msg) from e
        if not isinstance(args, dict):
            msg = (
                f"Could not parse tool input: {function} because the `arguments` is not an object."
            )
            raise OutputParserException(msg)
        calls.append(
            {"name": function["name"], "args": args, "id": tool_call["id"], "type": "tool_call"}
        )
    return calls


def parse_ai_message_to_tool_action(message: BaseMessage) -> list[AgentAction] | AgentFinish:
    """One `ToolAgentAction` per tool call of the message, or a finish with its content."""
    if not isinstance(message, AIMessage):
        raise TypeError(f"Expected an AI message got {type(message)}")
    calls = message.tool_calls
    if not calls:
        raw = message.additional_kwargs.get("tool_calls")
        if not raw:
            return AgentFinish({"output": message.content}, str(message.content))
        calls = _raw_tool_calls(raw)
    content_msg = f"responded: {message.content}\n" if message.content else "\n"
    actions: list[AgentAction] = []
    for call in calls:
        # `__arg1` is how single-string tools are encoded for the model; unpack it.
        name, args = call["name"], call["args"]
        tool_input = args.get("__arg1", args)
        log = f"\nInvoking: `{name}` with `{tool_input}`\n{content_msg}\n"
        actions.append(ToolAgentAction(name, tool_input, log, [message], call["id"]))
    return actions


parse_ai_message_to_openai_tool_action = parse_ai_message_to_tool_action
"""LangChain's older name (it also made `ToolAgentAction`s)."""


class ToolsAgentOutputParser(MultiActionAgentOutputParser):
    """Parses an AI message's tool calls into actions; no tool calls means the final answer."""

    def parse_result(
        self, result: Sequence[AnyGeneration], *, partial: bool = False
    ) -> list[AgentAction] | AgentFinish:
        """The actions or finish of the first generation's message."""
        generation = result[0]
        if not isinstance(generation, ChatGeneration):
            raise ValueError("This output parser only works on ChatGeneration output")
        return parse_ai_message_to_tool_action(generation.message)

    def parse(self, text: str) -> list[AgentAction] | AgentFinish:
        """Text cannot carry tool calls: always raises ValueError, as LangChain."""
        raise ValueError("Can only parse messages")


class OpenAIToolsAgentOutputParser(ToolsAgentOutputParser):
    """LangChain's OpenAI-specific name for the same parser."""


def _per_agent(formatter: MessageFormatter) -> MessageFormatter:
    """The default formatter, made incremental for this agent (same output); others as given."""
    return IncrementalToolMessages() if formatter is format_to_tool_messages else formatter


def create_tool_calling_agent(
    llm: Runnable[Any, Any],
    tools: Sequence[ToolLike],
    prompt: ChatPromptTemplate,
    *,
    message_formatter: MessageFormatter = format_to_tool_messages,
) -> Runnable[dict[str, Any], list[AgentAction] | AgentFinish]:
    """A tool-calling agent: `prompt | llm.bind_tools(tools) | ToolsAgentOutputParser()`."""
    require_variables(prompt, {"agent_scratchpad"})
    bind_tools = getattr(llm, "bind_tools", None)
    if bind_tools is None:
        raise ValueError("This function requires a bind_tools() method be implemented on the LLM.")
    llm_with_tools: Runnable[Any, Any] = bind_tools(tools)
    return (
        RunnablePassthrough.assign(agent_scratchpad=from_steps(_per_agent(message_formatter)))
        | prompt
        | llm_with_tools
        | ToolsAgentOutputParser()
    )
