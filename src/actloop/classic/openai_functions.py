"""The OpenAI-functions agent kind: `functions=` bound to the model, a function call per step,
`FunctionMessage` observations (LangChain's `create_openai_functions_agent`, its parser and
scratchpad)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from actloop.exceptions import OutputParserException
from actloop.format_scratchpad import from_steps
from actloop.messages import AIMessage, BaseMessage, FunctionMessage
from actloop.messages._tool_calls import loads_lenient
from actloop.output_parsers import AgentOutputParser, AnyGeneration
from actloop.outputs import ChatGeneration
from actloop.prompts import BasePromptTemplate
from actloop.runnables._base import Runnable
from actloop.runnables._compose import RunnablePassthrough
from actloop.steps import AgentAction, AgentActionMessageLog, AgentFinish
from actloop.tools import BaseTool
from actloop.tools._openai import convert_to_openai_function

__all__ = [
    "OpenAIFunctionsAgentOutputParser",
    "create_openai_functions_agent",
    "format_to_openai_function_messages",
    "format_to_openai_functions",
]

_logger = logging.getLogger(__name__)

Steps = Sequence[tuple[AgentAction, Any]]


def _function_message(action: AgentAction, observation: Any) -> FunctionMessage:
    """The observation as a function message: a string as is, anything else as JSON if it can."""
    if isinstance(observation, str):
        return FunctionMessage(name=action.tool, content=observation)
    try:
        content = json.dumps(observation, ensure_ascii=False)
    except TypeError:
        content = str(observation)
    except Exception:
        _logger.exception("Unexpected error converting observation to string.")
        content = str(observation)
    return FunctionMessage(name=action.tool, content=content)


def format_to_openai_function_messages(intermediate_steps: Steps) -> list[BaseMessage]:
    """Each step as the model's function-call message and a `FunctionMessage` with the result
    (an action without its message becomes an AIMessage of its log)."""
    messages: list[BaseMessage] = []
    for action, observation in intermediate_steps:
        if isinstance(action, AgentActionMessageLog):
            messages.extend(action.message_log)
            messages.append(_function_message(action, observation))
        else:
            messages.append(AIMessage(content=action.log))
    return messages


format_to_openai_functions = format_to_openai_function_messages
"""LangChain's older name of `format_to_openai_function_messages`."""


def _arguments(function_call: dict[str, Any]) -> Any:
    raw = function_call["arguments"]
    try:
        return {} if len(raw.strip()) == 0 else loads_lenient(raw)
    except json.JSONDecodeError as exc:
        raise OutputParserException(
            f"Could not parse tool input: {function_call} because the `arguments` is not valid "
            "JSON."
        ) from exc


class OpenAIFunctionsAgentOutputParser(AgentOutputParser):
    """A reply's `function_call` becomes an action (with the message), no call a finish."""

    @property
    def _type(self) -> str:
        return "openai-functions-agent"

    @staticmethod
    def parse_ai_message(message: BaseMessage) -> AgentAction | AgentFinish:
        """The action of the message's function call, or a finish with its content."""
        if not isinstance(message, AIMessage):
            raise TypeError(f"Expected an AI message got {type(message)}")
        function_call = message.additional_kwargs.get("function_call", {})
        if not function_call:
            return AgentFinish({"output": message.content}, str(message.content))
        name = function_call["name"]
        arguments = _arguments(function_call)
        tool_input = arguments["__arg1"] if "__arg1" in arguments else arguments
        content_msg = f"responded: {message.content}\n" if message.content else "\n"
        log = f"\nInvoking: `{name}` with `{tool_input}`\n{content_msg}\n"
        return AgentActionMessageLog(
            tool=name, tool_input=tool_input, log=log, message_log=[message]
        )

    def parse_result(
        self, result: Sequence[AnyGeneration], *, partial: bool = False
    ) -> AgentAction | AgentFinish:
        """Parse the first generation's message (text alone cannot hold a function call)."""
        if not isinstance(result[0], ChatGeneration):
            raise ValueError("This output parser only works on ChatGeneration output")
        return self.parse_ai_message(result[0].message)

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """Not supported: this parser reads messages."""
        raise ValueError("Can only parse messages")


def create_openai_functions_agent(
    llm: Runnable[Any, Any], tools: Sequence[BaseTool], prompt: BasePromptTemplate
) -> Runnable[dict[str, Any], AgentAction | AgentFinish]:
    """`scratchpad | prompt | llm.bind(functions=...) | parser`, as LangChain builds it."""
    if "agent_scratchpad" not in [*prompt.input_variables, *prompt.partial_variables]:
        raise ValueError(
            "Prompt must have input variable `agent_scratchpad`, but wasn't found. "
            f"Found {prompt.input_variables} instead."
        )
    llm_with_tools = llm.bind(functions=[convert_to_openai_function(t) for t in tools])
    return (
        RunnablePassthrough.assign(agent_scratchpad=from_steps(format_to_openai_function_messages))
        | prompt
        | llm_with_tools
        | OpenAIFunctionsAgentOutputParser()
    )
