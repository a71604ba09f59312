"""The conversational ReAct agent's parser: `AI: ...` ends the turn, `Action:`/`Action Input:`
calls a tool (LangChain's `ConvoOutputParser`)."""

from __future__ import annotations

from actloop.exceptions import OutputParserException
from actloop.output_parsers import AgentOutputParser
from actloop.steps import AgentAction, AgentFinish

__all__ = ["FORMAT_INSTRUCTIONS", "ConvoOutputParser"]

FORMAT_INSTRUCTIONS = (
    "To use a tool, please use the following format:\n\n```\nThought: Do I need to use a tool? "
    "Yes\nAction: the action to take, should be one of [{tool_names}]\nAction Input: the input "
    "to the action\nObservation: the result of the action\n```\n\nWhen you have a response to "
    "say to the Human, or if you do not need to use a tool, you MUST use the format:\n\n```\n"
    "Thought: Do I need to use a tool? No\n{ai_prefix}: [your response here]\n```"
)
_ACTION, _ACTION_INPUT = "Action: ", "Action Input: "


class ConvoOutputParser(AgentOutputParser):
    """`{ai_prefix}: answer` is a finish; `Action: t` / `Action Input: x` an action."""

    ai_prefix: str = "AI"
    format_instructions: str = FORMAT_INSTRUCTIONS

    def __init__(self, ai_prefix: str = "AI", format_instructions: str = FORMAT_INSTRUCTIONS):
        self.ai_prefix = ai_prefix
        self.format_instructions = format_instructions

    def get_format_instructions(self) -> str:
        """The conversational agent's format instructions."""
        return self.format_instructions

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """A finish after the AI prefix, else the action, else OutputParserException."""
        marker = f"{self.ai_prefix}:"
        if marker in text:
            return AgentFinish({"output": text.rsplit(marker, maxsplit=1)[-1].strip()}, text)
        # LangChain's `Action: (.*?)[\n]*Action Input: ([\s\S]*)` as a linear scan (the regex is
        # quadratic on a repeated `Action: x`): the first `Action: `, then the first
        # `Action Input: ` after it; the newlines before that belong to neither part.
        action = text.find(_ACTION)
        given = text.find(_ACTION_INPUT, action + len(_ACTION)) if action != -1 else -1
        if given == -1:
            raise OutputParserException(f"Could not parse LLM output: `{text}`")
        tool = text[action + len(_ACTION) : given].rstrip("\n")
        tool_input = text[given + len(_ACTION_INPUT) :].strip(" ").strip('"')
        return AgentAction(tool.strip(), tool_input, text)

    @property
    def _type(self) -> str:
        return "conversational"
