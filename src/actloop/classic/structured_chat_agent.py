"""`StructuredChatAgent` (AgentType.STRUCTURED_CHAT_ZERO_SHOT_REACT_DESCRIPTION): tools with any
arguments, called by a fenced JSON blob, on a chat prompt."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

from actloop.callbacks import Callbacks
from actloop.classic._agent import Agent
from actloop.classic.structured_chat import (
    FORMAT_INSTRUCTIONS,
    PREFIX,
    SUFFIX,
    StructuredChatOutputParserWithRetries,
)
from actloop.output_parsers import AgentOutputParser
from actloop.prompts import (
    BasePromptTemplate,
    ChatPromptTemplate,
    HumanMessagePromptTemplate,
    SystemMessagePromptTemplate,
)
from actloop.runnables._base import Runnable
from actloop.steps import AgentAction
from actloop.tools import BaseTool

__all__ = ["HUMAN_MESSAGE_TEMPLATE", "StructuredChatAgent"]

HUMAN_MESSAGE_TEMPLATE = "{input}\n\n{agent_scratchpad}"


class StructuredChatAgent(Agent):
    """The structured-chat agent as a legacy `Agent` (a system prompt listing the tools' args)."""

    _agent_type: ClassVar[str] = "structured-chat-zero-shot-react-description"

    @property
    def observation_prefix(self) -> str:
        return "Observation: "

    @property
    def llm_prefix(self) -> str:
        return "Thought:"

    @property
    def _stop(self) -> list[str]:
        return ["Observation:"]

    def _construct_scratchpad(self, intermediate_steps: list[tuple[AgentAction, Any]]) -> Any:
        scratchpad = super()._construct_scratchpad(intermediate_steps)
        if scratchpad:
            return (
                "This was your previous work "
                f"(but I haven't seen any of it! I only see what "
                f"you return as final answer):\n{scratchpad}"
            )
        return scratchpad

    @classmethod
    def _get_default_output_parser(cls, **kwargs: Any) -> AgentOutputParser:
        return StructuredChatOutputParserWithRetries()

    @classmethod
    def create_prompt(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls,
        tools: Sequence[BaseTool],
        prefix: str = PREFIX,
        suffix: str = SUFFIX,
        human_message_template: str = HUMAN_MESSAGE_TEMPLATE,
        format_instructions: str = FORMAT_INSTRUCTIONS,
        input_variables: list[str] | None = None,
        memory_prompts: list[BasePromptTemplate] | None = None,
    ) -> BasePromptTemplate:
        """A system message listing each tool with its args, then the human template."""
        lines: list[str] = []
        for tool in tools:
            args_schema = re.sub("}", "}}", re.sub("{", "{{", str(tool.args)))
            lines.append(f"{tool.name}: {tool.description}, args: {args_schema}")
        tool_names = ", ".join(tool.name for tool in tools)
        instructions = format_instructions.format(tool_names=tool_names)
        template = f"{prefix}\n\n{chr(10).join(lines)}\n\n{instructions}\n\n{suffix}"
        messages: list[Any] = [
            SystemMessagePromptTemplate.from_template(template),
            *(memory_prompts or []),
            HumanMessagePromptTemplate.from_template(human_message_template),
        ]
        return ChatPromptTemplate(
            messages=messages, input_variables=input_variables or ["input", "agent_scratchpad"]
        )

    @classmethod
    def from_llm_and_tools(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls,
        llm: Runnable[Any, Any],
        tools: Sequence[BaseTool],
        callback_manager: Callbacks = None,
        output_parser: AgentOutputParser | None = None,
        prefix: str = PREFIX,
        suffix: str = SUFFIX,
        human_message_template: str = HUMAN_MESSAGE_TEMPLATE,
        format_instructions: str = FORMAT_INSTRUCTIONS,
        input_variables: list[str] | None = None,
        memory_prompts: list[BasePromptTemplate] | None = None,
        **kwargs: Any,
    ) -> Agent:
        """The agent with its chat prompt for `tools`."""
        prompt = cls.create_prompt(
            tools,
            prefix,
            suffix,
            human_message_template,
            format_instructions,
            input_variables,
            memory_prompts,
        )
        return cls._from_prompt(llm, tools, prompt, callback_manager, output_parser, kwargs)
