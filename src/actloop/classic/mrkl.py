"""`ZeroShotAgent` (AgentType.ZERO_SHOT_REACT_DESCRIPTION): the ReAct text format driven by an
`LLMChain`, with LangChain's `MRKLOutputParser` and prompt pieces."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from actloop.callbacks import Callbacks
from actloop.classic._agent import Agent, validate_tools_single_input
from actloop.exceptions import OutputParserException
from actloop.output_parsers import AgentOutputParser
from actloop.prompts import PromptTemplate
from actloop.react import (
    ACTION_INPUT_PATTERN,
    ACTION_PATTERN,
    FINAL_ANSWER_ACTION,
    FINAL_ANSWER_AND_PARSABLE_ACTION_ERROR_MESSAGE,
    FORMAT_INSTRUCTIONS,
    MISSING_ACTION_INPUT_AFTER_ACTION_ERROR_MESSAGE,
    ReActSingleInputOutputParser,
    format_error,
)
from actloop.runnables._base import Runnable
from actloop.steps import AgentAction, AgentFinish
from actloop.tools import BaseTool, render_text_description

__all__ = [
    "FINAL_ANSWER_ACTION",
    "FINAL_ANSWER_AND_PARSABLE_ACTION_ERROR_MESSAGE",
    "FORMAT_INSTRUCTIONS",
    "MISSING_ACTION_AFTER_THOUGHT_ERROR_MESSAGE",
    "MISSING_ACTION_INPUT_AFTER_ACTION_ERROR_MESSAGE",
    "PREFIX",
    "SUFFIX",
    "MRKLOutputParser",
    "ZeroShotAgent",
]

MISSING_ACTION_AFTER_THOUGHT_ERROR_MESSAGE = "Invalid Format: Missing 'Action:' after 'Thought:"
"""LangChain's MRKL text (the ReAct parser's has a closing quote)."""
PREFIX = "Answer the following questions as best you can. You have access to the following tools:"
SUFFIX = """Begin!

Question: {input}
Thought:{agent_scratchpad}"""


class MRKLOutputParser(ReActSingleInputOutputParser):
    """The ReAct parser, except: a final answer written before an action wins, and a
    `SELECT ...` action input keeps its quotes (as LangChain's MRKL parser does)."""

    format_instructions: str = FORMAT_INSTRUCTIONS

    def __init__(self, format_instructions: str = FORMAT_INSTRUCTIONS) -> None:
        self.format_instructions = format_instructions

    def get_format_instructions(self) -> str:
        """The format instructions this parser was built with."""
        return self.format_instructions

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """An action, a finish, or `OutputParserException`."""
        action = ACTION_PATTERN.search(text)
        action_input = ACTION_INPUT_PATTERN.search(text, action.end()) if action else None
        if action is None or action_input is None:
            return self._no_action(text, action is not None)
        answer_at = text.find(FINAL_ANSWER_ACTION)
        if answer_at != -1:
            if answer_at < action.start():
                start = answer_at + len(FINAL_ANSWER_ACTION)
                end = text.find("\n\n", start)
                return AgentFinish({"output": text[start:end].strip()}, text[:end])
            raise OutputParserException(f"{FINAL_ANSWER_AND_PARSABLE_ACTION_ERROR_MESSAGE}: {text}")
        tool = text[action.end() : action_input.start()].strip()
        tool_input = text[action_input.end() :].lstrip().strip(" ")
        if not tool_input.startswith("SELECT "):
            tool_input = tool_input.strip('"')
        return AgentAction(tool, tool_input, text)

    @staticmethod
    def _no_action(text: str, has_action: bool) -> AgentFinish:
        if FINAL_ANSWER_ACTION in text:
            answer = text.rsplit(FINAL_ANSWER_ACTION, maxsplit=1)[-1]
            return AgentFinish({"output": answer.strip()}, text)
        if not has_action:
            raise format_error(text, MISSING_ACTION_AFTER_THOUGHT_ERROR_MESSAGE)
        if ACTION_INPUT_PATTERN.search(text) is None:
            raise format_error(text, MISSING_ACTION_INPUT_AFTER_ACTION_ERROR_MESSAGE)
        raise OutputParserException(f"Could not parse LLM output: `{text}`")

    @property
    def _type(self) -> str:
        return "mrkl"


def _check_described(cls: type, tools: Sequence[BaseTool]) -> None:
    validate_tools_single_input(cls.__name__, tools)
    if len(tools) == 0:
        raise ValueError(f"Got no tools for {cls.__name__}. At least one tool must be provided.")


class ZeroShotAgent(Agent):
    """Picks a tool from the tools' descriptions alone (the ReAct text format)."""

    _agent_type: ClassVar[str] = "zero-shot-react-description"

    @classmethod
    def _get_default_output_parser(cls, **kwargs: Any) -> AgentOutputParser:
        return MRKLOutputParser()

    @property
    def observation_prefix(self) -> str:
        return "Observation: "

    @property
    def llm_prefix(self) -> str:
        return "Thought:"

    @classmethod
    def create_prompt(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls,
        tools: Sequence[BaseTool],
        prefix: str = PREFIX,
        suffix: str = SUFFIX,
        format_instructions: str = FORMAT_INSTRUCTIONS,
        input_variables: list[str] | None = None,
    ) -> PromptTemplate:
        """Prefix, the tools described, the format instructions naming them, then the suffix."""
        tool_strings = render_text_description(list(tools))
        tool_names = ", ".join(tool.name for tool in tools)
        instructions = format_instructions.format(tool_names=tool_names)
        template = f"{prefix}\n\n{tool_strings}\n\n{instructions}\n\n{suffix}"
        if input_variables:
            return PromptTemplate(template=template, input_variables=input_variables)
        return PromptTemplate.from_template(template)

    @classmethod
    def from_llm_and_tools(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls,
        llm: Runnable[Any, Any],
        tools: Sequence[BaseTool],
        callback_manager: Callbacks = None,
        output_parser: AgentOutputParser | None = None,
        prefix: str = PREFIX,
        suffix: str = SUFFIX,
        format_instructions: str = FORMAT_INSTRUCTIONS,
        input_variables: list[str] | None = None,
        **kwargs: Any,
    ) -> Agent:
        """The agent with a prompt built from the pieces given."""
        cls._validate_tools(tools)
        prompt = cls.create_prompt(tools, prefix, suffix, format_instructions, input_variables)
        return cls._from_prompt(llm, tools, prompt, callback_manager, output_parser, kwargs)

    @classmethod
    def _validate_tools(cls, tools: Sequence[BaseTool]) -> None:
        _check_described(cls, tools)
