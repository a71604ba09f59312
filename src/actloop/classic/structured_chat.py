"""The structured-chat agent kind: a fenced JSON blob with `action` and `action_input` (any
arguments), `"Final Answer"` to finish (LangChain's `create_structured_chat_agent`, its parser
and prompt pieces)."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any, cast

from actloop.exceptions import OutputParserException
from actloop.format_scratchpad import format_log_to_str
from actloop.json_agent import JSONAgentOutputParser
from actloop.messages._tool_calls import loads_lenient
from actloop.output_parsers import AgentOutputParser
from actloop.prompts import BasePromptTemplate
from actloop.prompts._agent_checks import require_variables, with_stop
from actloop.runnables._base import Runnable
from actloop.runnables._compose import RunnablePassthrough
from actloop.steps import AgentAction, AgentFinish
from actloop.tools import BaseTool
from actloop.tools.render import ToolsRenderer, render_text_description_and_args

__all__ = [
    "FORMAT_INSTRUCTIONS",
    "PREFIX",
    "SUFFIX",
    "StructuredChatOutputParser",
    "StructuredChatOutputParserWithRetries",
    "create_structured_chat_agent",
]

logger = logging.getLogger(__name__)

PREFIX = (
    "Respond to the human as helpfully and accurately as possible. "
    "You have access to the following tools:"
)
FORMAT_INSTRUCTIONS = (
    "Use a json blob to specify a tool by providing an action key (tool name) and an "
    'action_input key (tool input).\n\nValid "action" values: "Final Answer" or {tool_names}\n\n'
    'Provide only ONE action per $JSON_BLOB, as shown:\n\n```\n{{{{\n  "action": $TOOL_NAME,\n'
    '  "action_input": $INPUT\n}}}}\n```\n\nFollow this format:\n\nQuestion: input question to '
    "answer\nThought: consider previous and subsequent steps\nAction:\n```\n$JSON_BLOB\n```\n"
    "Observation: action result\n... (repeat Thought/Action/Observation N times)\nThought: I "
    'know what to respond\nAction:\n```\n{{{{\n  "action": "Final Answer",\n  "action_input": '
    '"Final response to human"\n}}}}\n```'
)
SUFFIX = (
    "Begin! Reminder to ALWAYS respond with a valid json blob of a single action. Use tools if "
    "necessary. Respond directly if appropriate. Format is Action:```$JSON_BLOB```then "
    "Observation:.\nThought:"
)


_FENCE = "```"
_PATTERN = re.compile(r"```(?:json\s+)?(\W.*?)```", re.DOTALL)
"""LangChain's pattern of the fenced blob; it is quadratic on an unclosed "```json" and spaces,
so unless a parser is given another pattern, `_fenced_blob` finds the same group by a scan."""


def _is_word(char: str) -> bool:
    """Whether `re`'s `\\w` matches `char` (a letter, digit or underscore, any script)."""
    return char.isalnum() or char == "_"


def _fenced_blob(text: str) -> str | None:
    """Group 1 of `_PATTERN.search(text)`, in linear time: after the first "```" that opens a
    blob, the text from its first non-word character up to the next "```"."""
    at = text.find(_FENCE)
    while at != -1:
        body = at + len(_FENCE)
        if text.startswith("json", body):  # `json\s+` then `\W`, giving back spaces if need be
            spaces = end = body + 4
            while end < len(text) and text[end].isspace():
                end += 1
            if end > spaces and end < len(text) and not _is_word(text[end]):
                closed = text.find(_FENCE, end + 1)
                if closed != -1:
                    return text[end:closed]
            if end - spaces >= 2:  # the last space as the `\W`: a fence may start right after
                closed = text.find(_FENCE, end)
                return text[end - 1 : closed] if closed != -1 else None
        elif body < len(text) and not _is_word(text[body]):
            closed = text.find(_FENCE, body + 1)
            return text[body:closed] if closed != -1 else None
        at = text.find(_FENCE, at + 1)
    return None


class StructuredChatOutputParser(AgentOutputParser):
    """The fenced JSON blob as an action (`"Final Answer"` finishes); no fence: the text is the
    answer."""

    format_instructions: str = FORMAT_INSTRUCTIONS
    pattern: re.Pattern[str] = _PATTERN

    def get_format_instructions(self) -> str:
        """The structured-chat format instructions."""
        return self.format_instructions

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """An action, a finish, or OutputParserException for a bad blob."""
        try:
            blob = self._blob(text)
            if blob is None:
                return AgentFinish({"output": text}, text)
            response: Any = loads_lenient(blob.strip())
            if isinstance(response, list):
                logger.warning("Got multiple action responses: %s", response)  # pyright: ignore[reportUnknownArgumentType]
                response = cast("list[Any]", response)[0]
            if response["action"] == "Final Answer":
                return AgentFinish({"output": response["action_input"]}, text)
            return AgentAction(response["action"], response.get("action_input", {}), text)
        except Exception as exc:
            raise OutputParserException(f"Could not parse LLM output: {text}") from exc

    def _blob(self, text: str) -> str | None:
        if self.pattern is _PATTERN:
            return _fenced_blob(text)
        match = self.pattern.search(text)  # a pattern of the user's: theirs to keep linear
        return None if match is None else match.group(1)

    @property
    def _type(self) -> str:
        return "structured_chat"


class StructuredChatOutputParserWithRetries(AgentOutputParser):
    """`StructuredChatOutputParser` behind one error message (LangChain's default parser of the
    legacy StructuredChatAgent; its LLM output-fixing variant is not provided)."""

    def __init__(self, base_parser: AgentOutputParser | None = None) -> None:
        self.base_parser = base_parser or StructuredChatOutputParser()

    def get_format_instructions(self) -> str:
        """The structured-chat format instructions."""
        return FORMAT_INSTRUCTIONS

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """The base parser's result; any failure as OutputParserException."""
        try:
            return self.base_parser.parse(text)
        except Exception as exc:
            raise OutputParserException(f"Could not parse LLM output: {text}") from exc

    @classmethod
    def from_llm(
        cls, llm: Any = None, base_parser: StructuredChatOutputParser | None = None
    ) -> StructuredChatOutputParserWithRetries:
        """The parser over `base_parser`; an `llm` for output fixing is not supported."""
        if llm is not None:
            raise ValueError("actloop has no OutputFixingParser; pass base_parser only")
        return cls(base_parser)

    @property
    def _type(self) -> str:
        return "structured_chat_with_retries"


def _scratchpad(inputs: dict[str, Any]) -> str:
    return format_log_to_str(inputs["intermediate_steps"])


def create_structured_chat_agent(
    llm: Runnable[Any, Any],
    tools: Sequence[BaseTool],
    prompt: BasePromptTemplate,
    tools_renderer: ToolsRenderer = render_text_description_and_args,
    *,
    stop_sequence: bool | list[str] = True,
) -> Runnable[dict[str, Any], AgentAction | AgentFinish]:
    """`scratchpad | prompt | llm (stop at Observation) | JSONAgentOutputParser`, as LangChain."""
    require_variables(prompt, {"tools", "tool_names", "agent_scratchpad"})
    prompt = prompt.partial(
        tools=tools_renderer(list(tools)), tool_names=", ".join(t.name for t in tools)
    )
    llm_with_stop = with_stop(llm, stop_sequence, ["\nObservation"])
    return (
        RunnablePassthrough.assign(agent_scratchpad=_scratchpad)
        | prompt
        | llm_with_stop
        | JSONAgentOutputParser()
    )
