"""`OpenAIFunctionsAgent` (AgentType.OPENAI_FUNCTIONS): a chat model called with `functions=`,
one function call per step; and the multi-function reply parser (`_parse_ai_message`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from actloop.callbacks import Callbacks
from actloop.classic.openai_functions import (
    OpenAIFunctionsAgentOutputParser,
    format_to_openai_function_messages,
)
from actloop.exceptions import OutputParserException
from actloop.executor import BaseMultiActionAgent, BaseSingleActionAgent
from actloop.messages import AIMessage, BaseMessage, SystemMessage
from actloop.messages._tool_calls import loads_lenient
from actloop.prompts import (
    BasePromptTemplate,
    ChatPromptTemplate,
    HumanMessagePromptTemplate,
    MessagesPlaceholder,
)
from actloop.runnables._base import Runnable
from actloop.steps import AgentAction, AgentActionMessageLog, AgentFinish
from actloop.tools import BaseTool
from actloop.tools._openai import convert_to_openai_function

__all__ = ["OpenAIFunctionsAgent", "OpenAIMultiFunctionsAgent", "_parse_ai_message"]

Steps = list[tuple[AgentAction, Any]]


def _check_scratchpad(prompt: BasePromptTemplate) -> None:
    """A functions agent's prompt must take the scratchpad (as LangChain checks)."""
    if "agent_scratchpad" not in prompt.input_variables:
        raise ValueError(
            "`agent_scratchpad` should be one of the variables in the prompt, "
            f"got {prompt.input_variables}"
        )


def _prompt_messages(
    prompt: BasePromptTemplate, keys: list[str], steps: Steps, kwargs: dict[str, Any]
) -> list[BaseMessage]:
    """The prompt's messages: the `keys` inputs from `kwargs`, the steps as function messages."""
    selected = {k: kwargs[k] for k in keys}
    scratchpad = format_to_openai_function_messages(steps)
    return prompt.format_prompt(**selected, agent_scratchpad=scratchpad).to_messages()


class _FunctionsAgentAction(AgentActionMessageLog):
    """An action of the multi-function agent (LangChain's private class of that name)."""

    __slots__ = ()


class OpenAIFunctionsAgent(BaseSingleActionAgent):
    """Calls the chat model with the tools as OpenAI functions; its function call is the action."""

    _agent_type: ClassVar[str] = "openai-functions"

    def __init__(
        self,
        *,
        llm: Runnable[Any, Any],
        tools: Sequence[BaseTool],
        prompt: BasePromptTemplate,
        output_parser: type[OpenAIFunctionsAgentOutputParser] = OpenAIFunctionsAgentOutputParser,
    ) -> None:
        _check_scratchpad(prompt)
        self.llm = llm
        self.tools = list(tools)
        self.prompt = prompt
        self.output_parser = output_parser

    def get_allowed_tools(self) -> list[str] | None:
        return [t.name for t in self.tools]

    @property
    def input_keys(self) -> list[str]:
        return [k for k in self.prompt.input_variables if k != "agent_scratchpad"]

    @property
    def functions(self) -> list[dict[str, Any]]:
        """The tools as OpenAI function schemas."""
        return [dict(convert_to_openai_function(t)) for t in self.tools]

    def _messages(self, steps: Steps, kwargs: dict[str, Any]) -> list[BaseMessage]:
        return _prompt_messages(self.prompt, self.input_keys, steps, kwargs)

    def plan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> AgentAction | AgentFinish:
        """One model call with the functions; its reply parsed."""
        config: Any = {"callbacks": callbacks} if callbacks is not None else {}
        reply = self.llm.invoke(
            self._messages(intermediate_steps, kwargs), config, functions=self.functions
        )
        return self.output_parser.parse_ai_message(reply)

    async def aplan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> AgentAction | AgentFinish:
        """Async `plan`."""
        config: Any = {"callbacks": callbacks} if callbacks is not None else {}
        reply = await self.llm.ainvoke(
            self._messages(intermediate_steps, kwargs), config, functions=self.functions
        )
        return self.output_parser.parse_ai_message(reply)

    @classmethod
    def create_prompt(
        cls,
        system_message: SystemMessage | None = None,
        extra_prompt_messages: list[Any] | None = None,
    ) -> ChatPromptTemplate:
        """System message, extra messages, `{input}`, then the scratchpad placeholder."""
        system = system_message or SystemMessage(content="You are a helpful AI assistant.")
        messages: list[Any] = [
            system,
            *(extra_prompt_messages or []),
            HumanMessagePromptTemplate.from_template("{input}"),
            MessagesPlaceholder(variable_name="agent_scratchpad"),
        ]
        return ChatPromptTemplate(messages=messages)

    @classmethod
    def from_llm_and_tools(
        cls,
        llm: Runnable[Any, Any],
        tools: Sequence[BaseTool],
        callback_manager: Callbacks = None,
        extra_prompt_messages: list[Any] | None = None,
        system_message: SystemMessage | None = None,
        **kwargs: Any,
    ) -> OpenAIFunctionsAgent:
        """The agent with its default prompt."""
        prompt = cls.create_prompt(system_message, extra_prompt_messages)
        return cls(llm=llm, tools=tools, prompt=prompt, **kwargs)


def _arguments(function_call: dict[str, Any]) -> Any:
    try:
        return loads_lenient(function_call["arguments"])
    except json.JSONDecodeError as exc:
        raise OutputParserException(
            f"Could not parse tool input: {function_call} because the `arguments` is not valid "
            "JSON."
        ) from exc


def _parse_ai_message(message: BaseMessage) -> list[AgentAction] | AgentFinish:
    """The multi-function agent's reply: each entry of the `actions` argument is an action."""
    if not isinstance(message, AIMessage):
        raise TypeError(f"Expected an AI message got {type(message)}")
    function_call = message.additional_kwargs.get("function_call", {})
    if not function_call:
        return AgentFinish({"output": message.content}, str(message.content))
    arguments = _arguments(function_call)
    try:
        tools = arguments["actions"]
    except (TypeError, KeyError) as exc:
        raise OutputParserException(
            f"Could not parse tool input: {function_call} because the `arguments` JSON does "
            "not contain `actions` key."
        ) from exc
    actions: list[AgentAction] = []
    for schema in tools:
        if "action" in schema:
            tool_input = schema["action"]
        else:
            tool_input = {k: v for k, v in schema.items() if k != "action_name"}
        if "__arg1" in tool_input:
            tool_input = tool_input["__arg1"]
        name = schema["action_name"]
        content_msg = f"responded: {message.content}\n" if message.content else "\n"
        log = f"\nInvoking: `{name}` with `{tool_input}`\n{content_msg}\n"
        actions.append(
            _FunctionsAgentAction(tool=name, tool_input=tool_input, log=log, message_log=[message])
        )
    return actions


def _tool_selection(tools: Sequence[BaseTool]) -> dict[str, Any]:
    """The one function the multi-function agent offers: a list of `{action_name, action}`."""
    action = {
        "title": "Action",
        "anyOf": [{"title": t.name, "type": "object", "properties": t.args} for t in tools],
    }
    action_name = {
        "title": "action_name",
        "enum": [t.name for t in tools],
        "type": "string",
        "description": "Name of the action to take. The name provided here should match up with "
        "the parameters for the action below.",
    }
    item = {
        "title": "tool_call",
        "type": "object",
        "properties": {"action_name": action_name, "action": action},
        "required": ["action_name", "action"],
    }
    return {
        "name": "tool_selection",
        "description": "A list of actions to take.",
        "parameters": {
            "title": "tool_selection",
            "description": "A list of actions to take.",
            "type": "object",
            "properties": {"actions": {"title": "actions", "type": "array", "items": item}},
            "required": ["actions"],
        },
    }


class OpenAIMultiFunctionsAgent(BaseMultiActionAgent):
    """AgentType.OPENAI_MULTI_FUNCTIONS: one `tool_selection` function call lists several
    actions, run in one step."""

    _agent_type: ClassVar[str] = "openai-multi-functions"

    def __init__(
        self,
        *,
        llm: Runnable[Any, Any],
        tools: Sequence[BaseTool],
        prompt: BasePromptTemplate,
        callback_manager: Callbacks = None,
    ) -> None:
        _check_scratchpad(prompt)
        self.llm = llm
        self.tools = list(tools)
        self.prompt = prompt

    def get_allowed_tools(self) -> list[str] | None:
        return [t.name for t in self.tools]

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    @property
    def functions(self) -> list[dict[str, Any]]:
        """The `tool_selection` function schema."""
        return [_tool_selection(self.tools)]

    def _messages(self, steps: Steps, kwargs: dict[str, Any]) -> list[BaseMessage]:
        keys = [k for k in self.prompt.input_variables if k != "agent_scratchpad"]
        return _prompt_messages(self.prompt, keys, steps, kwargs)

    def plan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> list[AgentAction] | AgentFinish:
        """One model call with `tool_selection`; its actions (or the finish)."""
        config: Any = {"callbacks": callbacks} if callbacks is not None else {}
        messages = self._messages(intermediate_steps, kwargs)
        return _parse_ai_message(self.llm.invoke(messages, config, functions=self.functions))

    async def aplan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> list[AgentAction] | AgentFinish:
        """Async `plan`."""
        config: Any = {"callbacks": callbacks} if callbacks is not None else {}
        messages = self._messages(intermediate_steps, kwargs)
        reply = await self.llm.ainvoke(messages, config, functions=self.functions)
        return _parse_ai_message(reply)

    @classmethod
    def create_prompt(
        cls,
        system_message: SystemMessage | None = None,
        extra_prompt_messages: list[Any] | None = None,
    ) -> ChatPromptTemplate:
        """System message, extra messages, `{input}`, then the scratchpad placeholder."""
        return OpenAIFunctionsAgent.create_prompt(system_message, extra_prompt_messages)

    @classmethod
    def from_llm_and_tools(
        cls,
        llm: Runnable[Any, Any],
        tools: Sequence[BaseTool],
        callback_manager: Callbacks = None,
        extra_prompt_messages: list[Any] | None = None,
        system_message: SystemMessage | None = None,
        **kwargs: Any,
    ) -> OpenAIMultiFunctionsAgent:
        """The agent with its default prompt."""
        prompt = cls.create_prompt(system_message, extra_prompt_messages)
        return cls(llm=llm, tools=tools, prompt=prompt, **kwargs)
