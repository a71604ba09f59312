"""Each agent kind solves a two-tool task through AgentExecutor, recovering from a parse error."""

from __future__ import annotations

from typing import Any

import pytest

from actloop.agents import AgentAction, ToolAgentAction
from actloop.executor import AgentExecutor
from actloop.json_agent import create_structured_json_agent
from actloop.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage
from actloop.prompts import ChatPromptTemplate
from actloop.react import REACT_PROMPT, create_react_agent
from actloop.testing import ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import Tool, tool

CAPITALS = {"France": "Paris", "Peru": "Lima"}


def capital(country: str) -> str:
    return CAPITALS.get(country.strip(), "unknown")


capital_tool = Tool(name="capital", func=capital, description="Capital city of a country.")


@tool
def length(text: str) -> int:
    """Number of characters in a text."""
    return len(text)


TOOLS = [capital_tool, length]

REACT_SCRIPT = [
    "I need the capital first.\nAction: capital\nAction Input: France",
    "Now I will measure it.\nAction: length",  # no Action Input: a parse error
    'Action: length\nAction Input: "Paris"',
    "I now know the final answer\nFinal Answer: Paris has 5 letters.",
]
REACT_STEPS = [
    (AgentAction("capital", "France", REACT_SCRIPT[0]), "Paris"),
    (
        AgentAction(
            "_Exception", "Invalid Format: Missing 'Action Input:' after 'Action:'", REACT_SCRIPT[1]
        ),
        "Invalid Format: Missing 'Action Input:' after 'Action:'",
    ),
    (AgentAction("length", "Paris", REACT_SCRIPT[2]), 5),
]


def react_executor(model: ScriptedChatModel) -> AgentExecutor:
    agent = create_react_agent(model, TOOLS, REACT_PROMPT)
    return AgentExecutor(
        agent=agent, tools=TOOLS, handle_parsing_errors=True, return_intermediate_steps=True
    )


def test_react_agent_solves_a_two_tool_task() -> None:
    model = ScriptedChatModel(REACT_SCRIPT)
    result = react_executor(model).invoke({"input": "How long is the name of France's capital?"})
    assert result == {
        "input": "How long is the name of France's capital?",
        "output": "Paris has 5 letters.",
        "intermediate_steps": REACT_STEPS,
    }
    model.assert_complete()
    assert [call.stop for call in model.calls] == [["\nObservation"]] * 4
    last_prompt = model.calls[-1].messages[0].content
    assert isinstance(last_prompt, str)
    assert last_prompt.endswith(
        "Question: How long is the name of France's capital?\n"
        "Thought:I need the capital first.\nAction: capital\nAction Input: France\n"
        "Observation: Paris\nThought: Now I will measure it.\nAction: length\n"
        "Observation: Invalid Format: Missing 'Action Input:' after 'Action:'\nThought: "
        'Action: length\nAction Input: "Paris"\nObservation: 5\nThought: '
    )
    assert last_prompt.startswith(
        "Answer the following questions as best you can. You have access to the following tools:"
        "\n\ncapital(country: 'str') -> 'str' - Capital city of a country.\n"
        "length(text: 'str') -> 'int' - Number of characters in a text.\n\n"
    )


async def test_react_agent_async() -> None:
    model = ScriptedChatModel(REACT_SCRIPT, chunk_size=3)
    result = await react_executor(model).ainvoke({"input": "q"})
    assert result["output"] == "Paris has 5 letters."
    assert result["intermediate_steps"] == REACT_STEPS


def call(name: str, args: dict[str, Any], id: str) -> Any:
    return {"name": name, "args": args, "id": id}


# "oops" fails both ways: not JSON (the parser's error) and not even partial JSON (a streamed
# "{oops" would merge into a call with {} arguments, as in langchain-core).
BAD_ARGS = AIMessage(
    "",
    additional_kwargs={
        "tool_calls": [
            {"id": "b1", "type": "function", "function": {"name": "length", "arguments": "oops"}}
        ]
    },
)
TOOL_SCRIPT = [
    AIMessage("", tool_calls=[call("capital", {"__arg1": "Peru"}, "c1")]),
    BAD_ARGS,
    AIMessage(
        "Measuring both.",
        tool_calls=[call("length", {"text": "Lima"}, "c2"), call("length", {"text": "Peru"}, "c3")],
    ),
    AIMessage("Lima has 4 letters, like Peru."),
]
PROMPT = ChatPromptTemplate.from_messages(
    [("system", "You are terse."), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
)


def tool_executor(model: ScriptedChatModel, stream_runnable: bool = True) -> AgentExecutor:
    agent = create_tool_calling_agent(model, TOOLS, PROMPT)
    return AgentExecutor(
        agent=agent,
        tools=TOOLS,
        handle_parsing_errors=True,
        return_intermediate_steps=True,
        stream_runnable=stream_runnable,
    )


@pytest.mark.parametrize("stream_runnable", [True, False])
def test_tool_calling_agent_solves_a_two_tool_task(stream_runnable: bool) -> None:
    model = ScriptedChatModel(TOOL_SCRIPT)
    result = tool_executor(model, stream_runnable).invoke({"input": "Peru's capital length?"})
    assert result["output"] == "Lima has 4 letters, like Peru."
    steps = result["intermediate_steps"]
    assert [(type(a).__name__, a.tool, a.tool_input, obs) for a, obs in steps] == [
        ("ToolAgentAction", "capital", "Peru", "Lima"),
        (
            "AgentAction",
            "_Exception",
            "Invalid or incomplete response",
            "Invalid or incomplete response",
        ),
        ("ToolAgentAction", "length", {"text": "Lima"}, 4),
        ("ToolAgentAction", "length", {"text": "Peru"}, 4),
    ]
    assert steps[1][0].log.startswith(
        "Could not parse tool input: {'name': 'length', 'arguments': 'oops'} because the "
        "`arguments` is not valid JSON."
    )
    assert [a.log for a, _ in steps if isinstance(a, ToolAgentAction)] == [
        "\nInvoking: `capital` with `Peru`\n\n\n",
        "\nInvoking: `length` with `{'text': 'Lima'}`\nresponded: Measuring both.\n\n",
        "\nInvoking: `length` with `{'text': 'Peru'}`\nresponded: Measuring both.\n\n",
    ]
    model.assert_complete()
    last = model.calls[-1].messages
    assert [type(m) for m in last] == [
        SystemMessage,
        HumanMessage,
        AIMessageChunk if stream_runnable else AIMessage,
        ToolMessage,
        AIMessage,  # the parse-error step: its log as an AI message
        AIMessageChunk if stream_runnable else AIMessage,
        ToolMessage,
        ToolMessage,
    ]
    assert [m.content for m in last[3:]] == [
        "Lima",
        steps[1][0].log,
        "Measuring both.",
        "4",
        "4",
    ]
    assert [m.tool_call_id for m in last if isinstance(m, ToolMessage)] == ["c1", "c2", "c3"]
    assert all(call.tools is not None and len(call.tools) == 2 for call in model.calls)


async def test_tool_calling_agent_async() -> None:
    model = ScriptedChatModel(TOOL_SCRIPT)
    result = await tool_executor(model).ainvoke({"input": "q"})
    assert result["output"] == "Lima has 4 letters, like Peru."
    assert len(result["intermediate_steps"]) == 4


def test_json_agent_solves_a_two_tool_task() -> None:
    model = ScriptedChatModel(
        [
            '```json\n{"action": "capital", "action_input": "France"}\n```',
            '{"action": "length", "action_input": {"text": "Paris"',
            '{"action": "length", "action_input": {"text": "Paris"}}',
            '{"action": "Final Answer", "action_input": "5"}',
        ]
    )
    agent = create_structured_json_agent(model, TOOLS)
    executor = AgentExecutor(
        agent=agent, tools=TOOLS, handle_parsing_errors=True, return_intermediate_steps=True
    )
    result = executor.invoke({"input": "q"})
    assert result["output"] == "5"
    assert [(a.tool, a.tool_input, obs) for a, obs in result["intermediate_steps"]] == [
        ("capital", "France", "Paris"),
        (
            "_Exception",
            "Your reply was not valid JSON: Expecting ',' delimiter: line 1 column 54 (char 53). "
            'Reply with exactly one JSON object like {"action": "<tool name>", "action_input": '
            '<its input>} or {"action": "Final Answer", "action_input": "<your answer>"}, and '
            "nothing else.",
            "Your reply was not valid JSON: Expecting ',' delimiter: line 1 column 54 (char 53). "
            'Reply with exactly one JSON object like {"action": "<tool name>", "action_input": '
            '<its input>} or {"action": "Final Answer", "action_input": "<your answer>"}, and '
            "nothing else.",
        ),
        ("length", {"text": "Paris"}, 5),
    ]
    model.assert_complete()
    assert [type(m).__name__ for m in model.calls[-1].messages] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "HumanMessage",
        "AIMessage",
        "HumanMessage",
        "AIMessage",
        "HumanMessage",
    ]
