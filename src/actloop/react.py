r"""ReAct agents: the `Thought / Action / Action Input / Observation` text format, its parser,
the standard prompt and `create_react_agent`.

The parser gives exactly the reference's results in linear time (SPEC B11). LangChain searches
`Action\s*\d*\s*:[\s]*(.*?)Action\s*\d*\s*Input\s*\d*\s*:[\s]*(.*)` (DOTALL); the adjacent
`\s*\d*\s*` split a whitespace run in many ways, so the search is quadratic on long runs. That
search finds: the first `Action<ws/digits>:` (no later start can match, as it would end after
this one), then the first `Action<ws/digits>Input<ws/digits>:` after it (the lazy group 1), and
group 2 is the rest of the text without its leading whitespace (`\s` and `str.isspace` agree on
every code point). Here each part is its own search, with `\s*(?:\d+\s*)?`: it matches the
same strings as `\s*\d*\s*`, but only in one way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from actloop.exceptions import OutputParserException
from actloop.format_scratchpad import format_log_to_str, from_steps
from actloop.output_parsers import AgentOutputParser
from actloop.prompts import BasePromptTemplate, PromptTemplate
from actloop.prompts._agent_checks import require_variables, with_stop
from actloop.runnables._base import Runnable
from actloop.runnables._compose import RunnablePassthrough
from actloop.steps import AgentAction, AgentFinish
from actloop.tools import BaseTool
from actloop.tools.render import ToolsRenderer, render_text_description

__all__ = [
    "ACTION_INPUT_PATTERN",
    "ACTION_PATTERN",
    "FINAL_ANSWER_ACTION",
    "FORMAT_INSTRUCTIONS",
    "REACT_PROMPT",
    "ReActSingleInputOutputParser",
    "create_react_agent",
    "format_error",
]

FINAL_ANSWER_ACTION = "Final Answer:"
MISSING_ACTION_AFTER_THOUGHT_ERROR_MESSAGE = "Invalid Format: Missing 'Action:' after 'Thought:'"
MISSING_ACTION_INPUT_AFTER_ACTION_ERROR_MESSAGE = (
    "Invalid Format: Missing 'Action Input:' after 'Action:'"
)
FINAL_ANSWER_AND_PARSABLE_ACTION_ERROR_MESSAGE = (
    "Parsing LLM output produced both a final answer and a parse-able action:"
)

FORMAT_INSTRUCTIONS = """Use the following format:

Question: the input question you must answer
Thought: you should always think about what to do
Action: the action to take, should be one of [{tool_names}]
Action Input: the input to the action
Observation: the result of the action
... (this Thought/Action/Action Input/Observation can repeat N times)
Thought: I now know the final answer
Final Answer: the final answer to the original input question"""

REACT_TEMPLATE = (
    "Answer the following questions as best you can. You have access to the following tools:"
    "\n\n{tools}\n\n"
    f"{FORMAT_INSTRUCTIONS}\n\n"
    "Begin!\n\nQuestion: {input}\nThought:{agent_scratchpad}"
)
"""The text of LangChain hub's `hwchase17/react` prompt."""

REACT_PROMPT = PromptTemplate.from_template(REACT_TEMPLATE)
"""The standard ReAct prompt; variables `tools`, `tool_names`, `input`, `agent_scratchpad`."""

ACTION_PATTERN = re.compile(r"Action\s*(?:\d+\s*)?:")
"""`Action:` (digits allowed before the colon); searched once, in linear time."""
ACTION_INPUT_PATTERN = re.compile(r"Action\s*(?:\d+\s*)?Input\s*(?:\d+\s*)?:")
"""`Action Input:` (digits allowed after either word); searched after the action."""


def format_error(text: str, observation: str) -> OutputParserException:
    """A reply missing a part of the format: the error goes back to the model as `observation`."""
    return OutputParserException(
        f"Could not parse LLM output: `{text}`",
        observation=observation,
        llm_output=text,
        send_to_llm=True,
    )


class ReActSingleInputOutputParser(AgentOutputParser):
    """Parses `Action: tool` / `Action Input: x` into an action, `Final Answer: y` into a finish."""

    def get_format_instructions(self) -> str:
        """The ReAct format instructions (with a `{tool_names}` variable)."""
        return FORMAT_INSTRUCTIONS

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """An action, a finish, or `OutputParserException` (same results as LangChain's)."""
        includes_answer = FINAL_ANSWER_ACTION in text
        action = ACTION_PATTERN.search(text)
        if action is not None:
            action_input = ACTION_INPUT_PATTERN.search(text, action.end())
            if action_input is not None:
                if includes_answer:
                    raise OutputParserException(
                        f"{FINAL_ANSWER_AND_PARSABLE_ACTION_ERROR_MESSAGE}: {text}"
                    )
                tool = text[action.end() : action_input.start()].strip()
                tool_input = text[action_input.end() :].lstrip().strip(" ").strip('"')
                return AgentAction(tool, tool_input, text)
        if includes_answer:
            answer = text[text.rindex(FINAL_ANSWER_ACTION) + len(FINAL_ANSWER_ACTION) :]
            return AgentFinish({"output": answer.strip()}, text)
        if action is None:
            raise format_error(text, MISSING_ACTION_AFTER_THOUGHT_ERROR_MESSAGE)
        if ACTION_INPUT_PATTERN.search(text) is None:
            raise format_error(text, MISSING_ACTION_INPUT_AFTER_ACTION_ERROR_MESSAGE)
        raise OutputParserException(f"Could not parse LLM output: `{text}`")


def create_react_agent(
    llm: Runnable[Any, Any],
    tools: Sequence[BaseTool],
    prompt: BasePromptTemplate,
    output_parser: AgentOutputParser | None = None,
    tools_renderer: ToolsRenderer = render_text_description,
    *,
    stop_sequence: bool | list[str] = True,
) -> Runnable[dict[str, Any], AgentAction | AgentFinish]:
    r"""A ReAct agent: scratchpad as text, `prompt | llm (stop at "\nObservation") | parser`.

    `llm` may be a text model (`actloop.llms.LLM`, `actloop.models.OpenAI`), a chat model, or a
    LangChain model as it is. `prompt` needs `tools`, `tool_names` and `agent_scratchpad`;
    `REACT_PROMPT` is LangChain hub's `hwchase17/react`. `stop_sequence=False` binds no stop.

    Examples (LangChain's own example, with actloop imports):
        ```python
        from actloop import AgentExecutor, create_react_agent
        from actloop.models import OpenAI
        from actloop.react import REACT_PROMPT

        prompt = REACT_PROMPT
        model = OpenAI()
        tools = ...

        agent = create_react_agent(model, tools, prompt)
        agent_executor = AgentExecutor(agent=agent, tools=tools)

        agent_executor.invoke({"input": "hi"})

        # Use with chat history
        from actloop.messages import AIMessage, HumanMessage

        agent_executor.invoke(
            {
                "input": "what's my name?",
                # Notice that chat_history is a string
                # since this prompt is aimed at LLMs, not chat models
                "chat_history": "Human: My name is Bob\nAI: Hello Bob!",
            }
        )
        ```
    """
    require_variables(prompt, {"tools", "tool_names", "agent_scratchpad"})
    prompt = prompt.partial(
        tools=tools_renderer(list(tools)),
        tool_names=", ".join([t.name for t in tools]),
    )
    llm_with_stop = with_stop(llm, stop_sequence, ["\nObservation"])
    parser = output_parser or ReActSingleInputOutputParser()
    return (
        RunnablePassthrough.assign(agent_scratchpad=from_steps(format_log_to_str))
        | prompt
        | llm_with_stop
        | parser
    )
