"""The JSON-blob ReAct parsers of the chat agent kinds: `ChatOutputParser` and
`ReActJsonSingleInputOutputParser` (a fenced JSON `action`/`action_input`, or `Final Answer:`)."""

from __future__ import annotations

import json
import re
from typing import Any

from actloop.exceptions import OutputParserException
from actloop.output_parsers import AgentOutputParser
from actloop.steps import AgentAction, AgentFinish

__all__ = [
    "FINAL_ANSWER_ACTION",
    "FORMAT_INSTRUCTIONS",
    "ChatOutputParser",
    "ReActJsonSingleInputOutputParser",
]

FINAL_ANSWER_ACTION = "Final Answer:"
FORMAT_INSTRUCTIONS = (
    "The way you use the tools is by specifying a json blob.\nSpecifically, this json should "
    "have a `action` key (with the name of the tool to use) and a `action_input` key (with the "
    'input to the tool going here).\n\nThe only values that should be in the "action" field '
    "are: {tool_names}\n\nThe $JSON_BLOB should only contain a SINGLE action, do NOT return a "
    "list of multiple actions. Here is an example of a valid $JSON_BLOB:\n\n```\n{{{{\n  "
    '"action": $TOOL_NAME,\n  "action_input": $INPUT\n}}}}\n```\n\nALWAYS use the following '
    "format:\n\nQuestion: the input question you must answer\nThought: you should always think "
    "about what to do\nAction:\n```\n$JSON_BLOB\n```\nObservation: the result of the action\n"
    "... (this Thought/Action/Observation can repeat N times)\nThought: I now know the final "
    "answer\nFinal Answer: the final answer to the original input question"
)
"""LangChain's chat agent format instructions (with a `{tool_names}` variable)."""


def _parse_json_blob(pattern: re.Pattern[str], text: str) -> AgentAction | AgentFinish:
    """The fenced JSON action, else the text after `Final Answer:` (LangChain's rule)."""
    includes_answer = FINAL_ANSWER_ACTION in text
    try:
        found = pattern.search(text)
        if not found:
            raise ValueError("action not found")
        response: Any = json.loads(found.group(1).strip())
        if includes_answer and "action" in response:
            raise OutputParserException(
                f"Parsing LLM output produced a final answer and a parse-able action: {text}"
            )
        return AgentAction(response["action"], response.get("action_input", {}), text)
    except Exception as exc:
        if not includes_answer:
            raise OutputParserException(f"Could not parse LLM output: {text}") from exc
        output = text.rsplit(FINAL_ANSWER_ACTION, maxsplit=1)[-1].strip()
        return AgentFinish({"output": output}, text)


class ChatOutputParser(AgentOutputParser):
    """The chat zero-shot agent's parser: a ```json fence on its own line."""

    format_instructions: str = FORMAT_INSTRUCTIONS
    pattern: re.Pattern[str] = re.compile(r"^.*?`{3}(?:json)?\n(.*?)`{3}.*?$", re.DOTALL)

    def get_format_instructions(self) -> str:
        """The chat agent's format instructions."""
        return self.format_instructions

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """An action from the JSON blob, or the final answer."""
        return _parse_json_blob(self.pattern, text)

    @property
    def _type(self) -> str:
        return "chat"


class ReActJsonSingleInputOutputParser(AgentOutputParser):
    """Like `ChatOutputParser`, but the newline after the fence is optional."""

    pattern: re.Pattern[str] = re.compile(r"^.*?`{3}(?:json)?\n?(.*?)`{3}.*?$", re.DOTALL)

    def get_format_instructions(self) -> str:
        """The chat agent's format instructions."""
        return FORMAT_INSTRUCTIONS

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """An action from the JSON blob, or the final answer."""
        return _parse_json_blob(self.pattern, text)

    @property
    def _type(self) -> str:
        return "react-json-single-input"
