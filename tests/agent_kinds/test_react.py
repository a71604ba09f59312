"""ReAct: the output parser (every SPEC A6 case), the text scratchpad, the prompt and the agent."""

from __future__ import annotations

from typing import Any

import pytest

from actloop.agents import AgentAction, AgentFinish
from actloop.exceptions import OutputParserException
from actloop.format_scratchpad import format_log_to_messages, format_log_to_str
from actloop.messages import AIMessage, HumanMessage
from actloop.prompts import PromptTemplate
from actloop.react import REACT_PROMPT, ReActSingleInputOutputParser, create_react_agent
from actloop.testing import ScriptedChatModel
from actloop.tools import BaseTool, Tool, tool
from actloop.tools.render import render_text_description, render_text_description_and_args

URL = (
    "\nFor troubleshooting, visit: "
    "https://docs.langchain.com/oss/python/langchain/errors/OUTPUT_PARSING_FAILURE "
)
MISSING_ACTION = "Invalid Format: Missing 'Action:' after 'Thought:'"
MISSING_INPUT = "Invalid Format: Missing 'Action Input:' after 'Action:'"


def parse(text: str) -> AgentAction | AgentFinish:
    return ReActSingleInputOutputParser().parse(text)


@pytest.mark.parametrize(
    ("text", "tool", "tool_input"),
    [
        ("Thought: look\nAction: search\nAction Input: weather in SF", "search", "weather in SF"),
        ('Action: search\nAction Input: "quoted"\n', "search", 'quoted"\n'),
        ('Action: search\nAction Input: "quoted"', "search", "quoted"),
        ("Action: search\nAction Input:   spaced   ", "search", "spaced"),
        ("Action:search\nAction Input:\n\n  x\n", "search", "x\n"),
        ("Action 1: search\nAction 1 Input 1: x", "search", "x"),
        ("Action 12 :search\nAction  3  Input  4  : y", "search", "y"),
        ("Action: a Action: b Action Input: c", "a Action: b", "c"),
        ("Action:  \t tool \n\nAction Input: multi\nline", "tool", "multi\nline"),
        (
            "Action: s\nAction Input: x\nAction: t\nAction Input: y",
            "s",
            "x\nAction: t\nAction Input: y",
        ),
        ("Action Input: early\nAction: s\nAction Input: late", "s", "late"),
        ("Action: \nAction Input: ", "", ""),
        ('Action: s\nAction Input: ""x""', "s", "x"),
        ('Action: s\nAction Input: \t "x" \t', "s", 'x" \t'),
    ],
)
def test_actions(text: str, tool: str, tool_input: str) -> None:
    assert parse(text) == AgentAction(tool, tool_input, text)


@pytest.mark.parametrize(
    ("text", "output"),
    [
        ("Thought: done\nFinal Answer: 42", "42"),
        ("Final Answer:  spaced out \n", "spaced out"),
        ("Final Answer: first\nFinal Answer: last", "last"),
        ("Final Answer:", ""),
        (
            "Action: search\nFinal Answer: no input so it is an answer",
            "no input so it is an answer",
        ),
    ],
)
def test_final_answers(text: str, output: str) -> None:
    assert parse(text) == AgentFinish({"output": output}, text)


def test_action_and_final_answer_is_an_error() -> None:
    text = "Action: search\nAction Input: x\nFinal Answer: y"
    with pytest.raises(OutputParserException) as info:
        parse(text)
    assert str(info.value) == (
        "Parsing LLM output produced both a final answer and a parse-able action:: " + text + URL
    )
    assert (info.value.observation, info.value.llm_output, info.value.send_to_llm) == (
        None,
        None,
        False,
    )


@pytest.mark.parametrize(
    ("text", "observation"),
    [
        ("I just think", MISSING_ACTION),
        ("", MISSING_ACTION),
        ("Action Input: x", MISSING_ACTION),
        ("Action search", MISSING_ACTION),
        ("Action: search", MISSING_INPUT),
        ("Action 1 2: search\nAction: s\nInput: x", MISSING_INPUT),
    ],
)
def test_missing_parts_go_back_to_the_model(text: str, observation: str) -> None:
    with pytest.raises(OutputParserException) as info:
        parse(text)
    assert str(info.value) == f"Could not parse LLM output: `{text}`" + URL
    assert (info.value.observation, info.value.llm_output, info.value.send_to_llm) == (
        observation,
        text,
        True,
    )


def test_action_input_only_before_the_action_is_a_plain_error() -> None:
    text = "Action Input: x\nAction: search"
    with pytest.raises(OutputParserException) as info:
        parse(text)
    assert str(info.value) == f"Could not parse LLM output: `{text}`" + URL
    assert (info.value.observation, info.value.send_to_llm) == (None, False)


def test_parser_runnable_takes_strings_and_messages() -> None:
    parser = ReActSingleInputOutputParser()
    text = "Action: s\nAction Input: x"
    assert parser.invoke(text) == AgentAction("s", "x", text)
    assert parser.invoke(AIMessage(text)) == AgentAction("s", "x", text)
    assert parser.invoke(AIMessage([{"type": "text", "text": text}])) == AgentAction("s", "x", text)
    assert parser.OutputType == AgentAction | AgentFinish
    assert "Action Input: the input to the action" in parser.get_format_instructions()


async def test_parser_ainvoke() -> None:
    assert await ReActSingleInputOutputParser().ainvoke("Final Answer: 1") == AgentFinish(
        {"output": "1"}, "Final Answer: 1"
    )


def test_format_log_to_str() -> None:
    steps: list[tuple[AgentAction, Any]] = [
        (AgentAction("s", "x", "Thought: a\nAction: s\nAction Input: x"), "obs 1"),
        (AgentAction("t", "y", "log2"), {"k": 1}),
    ]
    assert format_log_to_str(steps) == (
        "Thought: a\nAction: s\nAction Input: x\nObservation: obs 1\nThought: "
        "log2\nObservation: {'k': 1}\nThought: "
    )
    assert format_log_to_str(steps, "O> ", "T> ") == (
        "Thought: a\nAction: s\nAction Input: x\nO> obs 1\nT> log2\nO> {'k': 1}\nT> "
    )
    assert format_log_to_str([]) == ""


def test_format_log_to_messages() -> None:
    steps = [(AgentAction("s", "x", "log"), 3)]
    assert format_log_to_messages(steps) == [AIMessage("log"), HumanMessage("3")]
    assert format_log_to_messages(steps, "Result: {observation}") == [
        AIMessage("log"),
        HumanMessage("Result: 3"),
    ]


def test_react_prompt_is_the_hub_text() -> None:
    assert REACT_PROMPT.input_variables == ["agent_scratchpad", "input", "tool_names", "tools"]
    assert REACT_PROMPT.template == (
        "Answer the following questions as best you can. "
        "You have access to the following tools:\n\n"
        "{tools}\n\n"
        "Use the following format:\n\n"
        "Question: the input question you must answer\n"
        "Thought: you should always think about what to do\n"
        "Action: the action to take, should be one of [{tool_names}]\n"
        "Action Input: the input to the action\n"
        "Observation: the result of the action\n"
        "... (this Thought/Action/Action Input/Observation can repeat N times)\n"
        "Thought: I now know the final answer\n"
        "Final Answer: the final answer to the original input question\n\n"
        "Begin!\n\n"
        "Question: {input}\n"
        "Thought:{agent_scratchpad}"
    )


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


class Lookup(BaseTool):
    name: str = "lookup"
    description: str = "Find a word."

    def _run(self, word: str) -> str:
        return word


def test_render_text_description() -> None:
    echo = Tool(name="echo", func=lambda text: text, description="Echo it.")
    tools = [multiply, Lookup()]
    assert render_text_description(tools) == (
        "multiply(a: 'int', b: 'int') -> 'int' - Multiply two integers.\nlookup - Find a word."
    )
    assert render_text_description([echo]) == "echo(text) - Echo it."
    assert render_text_description_and_args([multiply]) == (
        "multiply(a: 'int', b: 'int') -> 'int' - Multiply two integers., args: "
        "{'a': {'title': 'A', 'type': 'integer'}, 'b': {'title': 'B', 'type': 'integer'}}"
    )


def test_create_react_agent_validates_the_prompt() -> None:
    model = ScriptedChatModel([])
    prompt = PromptTemplate.from_template("{input} {tools}")
    with pytest.raises(ValueError) as info:
        create_react_agent(model, [multiply], prompt)
    assert str(info.value) in (
        "Prompt missing required variables: {'tool_names', 'agent_scratchpad'}",
        "Prompt missing required variables: {'agent_scratchpad', 'tool_names'}",
    )


@pytest.mark.parametrize(
    ("stop_sequence", "stop"),
    [(True, ["\nObservation"]), (False, None), (["\nObs", "STOP"], ["\nObs", "STOP"])],
)
def test_create_react_agent_pipeline(stop_sequence: bool | list[str], stop: Any) -> None:
    model = ScriptedChatModel(["Action: multiply\nAction Input: 2"])
    prompt = PromptTemplate.from_template("{tools}|{tool_names}|{input}|{agent_scratchpad}")
    agent = create_react_agent(model, [multiply, Lookup()], prompt, stop_sequence=stop_sequence)
    steps = [(AgentAction("lookup", "w", "Action: lookup"), "found")]
    result = agent.invoke({"input": "q", "intermediate_steps": steps})
    assert result == AgentAction("multiply", "2", "Action: multiply\nAction Input: 2")
    assert model.calls[0].stop == stop
    assert model.calls[0].messages == [
        HumanMessage(
            "multiply(a: 'int', b: 'int') -> 'int' - Multiply two integers.\nlookup - Find a word."
            "|multiply, lookup|q|Action: lookup\nObservation: found\nThought: "
        )
    ]
    assert agent.OutputType == AgentAction | AgentFinish


def test_create_react_agent_custom_parser_and_renderer() -> None:
    class Always(ReActSingleInputOutputParser):
        def parse(self, text: str) -> AgentAction | AgentFinish:
            return AgentFinish({"output": text.upper()}, text)

    model = ScriptedChatModel(["hi"])
    agent = create_react_agent(
        model,
        [multiply],
        REACT_PROMPT,
        Always(),
        tools_renderer=lambda tools: "TOOLS:" + ",".join(t.name for t in tools),
    )
    assert agent.invoke({"input": "q", "intermediate_steps": []}) == AgentFinish(
        {"output": "HI"}, "hi"
    )
    assert "TOOLS:multiply\n" in str(model.calls[0].messages[0].content)
