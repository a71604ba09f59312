"""The XML agent kind: `<tool>`/`<tool_input>` tags, `<observation>` in a text scratchpad and a
`<final_answer>` (LangChain's `create_xml_agent`, `XMLAgentOutputParser`, `format_xml`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from actloop.output_parsers import AgentOutputParser
from actloop.prompts import BasePromptTemplate
from actloop.prompts._agent_checks import require_variables, with_stop
from actloop.runnables._base import Runnable
from actloop.runnables._compose import RunnablePassthrough
from actloop.steps import AgentAction, AgentFinish
from actloop.tools import BaseTool
from actloop.tools.render import ToolsRenderer, render_text_description

__all__ = ["XML_AGENT_INSTRUCTIONS", "XMLAgentOutputParser", "create_xml_agent", "format_xml"]

XML_AGENT_INSTRUCTIONS = """You are a helpful assistant. Help the user answer any questions.

You have access to the following tools:

{tools}

In order to use a tool, you can use <tool></tool> and <tool_input></tool_input> tags. \
You will then get back a response in the form <observation></observation>
For example, if you have a tool called 'search' that could run a google search, in order to \
search for the weather in SF you would respond:

<tool>search</tool><tool_input>weather in SF</tool_input>
<observation>64 degrees</observation>

When you are done, respond with a final answer between <final_answer></final_answer>. \
For example:

<final_answer>The weather in SF is 64 degrees</final_answer>

Begin!

Question: {question}"""
"""LangChain's legacy XMLAgent prompt text (`agent_instructions`)."""

EscapeFormat = Literal["minimal"] | None
_ESCAPES = {
    "<tool>": "[[tool]]",
    "</tool>": "[[/tool]]",
    "<tool_input>": "[[tool_input]]",
    "</tool_input>": "[[/tool_input]]",
    "<observation>": "[[observation]]",
    "</observation>": "[[/observation]]",
}


def _escape(text: str) -> str:
    for tag, stand_in in _ESCAPES.items():
        text = text.replace(tag, stand_in)
    return text


def _unescape(text: str) -> str:
    for tag, stand_in in _ESCAPES.items():
        text = text.replace(stand_in, tag)
    return text


def format_xml(
    intermediate_steps: Sequence[tuple[AgentAction, Any]],
    *,
    escape_format: EscapeFormat = "minimal",
) -> str:
    """The steps as `<tool>..</tool><tool_input>..</tool_input><observation>..</observation>`;
    tags inside the values are escaped (`minimal`) so they cannot break the format."""
    log = ""
    for action, observation in intermediate_steps:
        tool, tool_input, seen = action.tool, str(action.tool_input), str(observation)
        if escape_format == "minimal":
            tool, tool_input, seen = _escape(tool), _escape(tool_input), _escape(seen)
        log += (
            f"<tool>{tool}</tool><tool_input>{tool_input}"
            f"</tool_input><observation>{seen}</observation>"
        )
    return log


def _between(text: str, start: str, end: str) -> list[str]:
    """What `re.findall(f"{start}(.*?){end}", text, re.DOTALL)` finds, in linear time (the regex
    is quadratic on an unclosed `start` repeated): each `start` up to the next `end`."""
    found: list[str] = []
    at = text.find(start)
    while at != -1:
        closed = text.find(end, at + len(start))
        if closed == -1:
            break
        found.append(text[at + len(start) : closed])
        at = text.find(start, closed + len(end))
    return found


class XMLAgentOutputParser(AgentOutputParser):
    """`<tool>name</tool><tool_input>x</tool_input>` is an action, `<final_answer>` a finish."""

    escape_format: EscapeFormat = "minimal"

    def __init__(self, escape_format: EscapeFormat = "minimal") -> None:
        self.escape_format = escape_format

    def _clean(self, text: str) -> str:
        return _unescape(text) if self.escape_format == "minimal" else text

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """An action, a finish, or ValueError for malformed XML."""
        tools = _between(text, "<tool>", "</tool>")
        if tools:
            if len(tools) != 1:
                raise ValueError(
                    "Malformed tool invocation: expected exactly one <tool> block, but found "
                    f"{len(tools)}."
                )
            inputs = _between(text, "<tool_input>", "</tool_input>")
            if len(inputs) > 1:
                raise ValueError(
                    "Malformed tool invocation: expected at most one <tool_input> block, but "
                    f"found {len(inputs)}."
                )
            tool_input = inputs[0] if inputs else ""
            return AgentAction(self._clean(tools[0]), self._clean(tool_input), text)
        if "<final_answer>" in text and "</final_answer>" in text:
            answers = _between(text, "<final_answer>", "</final_answer>")
            if len(answers) != 1:
                raise ValueError(
                    "Malformed output: expected exactly one <final_answer>...</final_answer> block."
                )
            return AgentFinish({"output": self._clean(answers[0])}, text)
        raise ValueError(
            "Malformed output: expected either a tool invocation or a final answer in XML format."
        )

    def get_format_instructions(self) -> str:
        """Not given: the prompt carries the instructions."""
        raise NotImplementedError

    @property
    def _type(self) -> str:
        return "xml-agent"


def _scratchpad(inputs: dict[str, Any]) -> str:
    return format_xml(inputs["intermediate_steps"])


def create_xml_agent(
    llm: Runnable[Any, Any],
    tools: Sequence[BaseTool],
    prompt: BasePromptTemplate,
    tools_renderer: ToolsRenderer = render_text_description,
    *,
    stop_sequence: bool | list[str] = True,
) -> Runnable[dict[str, Any], AgentAction | AgentFinish]:
    """`scratchpad | prompt | llm (stop at </tool_input>) | XMLAgentOutputParser`."""
    require_variables(prompt, {"tools", "agent_scratchpad"})
    prompt = prompt.partial(tools=tools_renderer(list(tools)))
    llm_with_stop = with_stop(llm, stop_sequence, ["</tool_input>"])
    return (
        RunnablePassthrough.assign(agent_scratchpad=_scratchpad)
        | prompt
        | llm_with_stop
        | XMLAgentOutputParser()
    )
