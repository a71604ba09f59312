"""Tool-calling agents: the parser (native and OpenAI-style calls), tool messages, the agent."""

from __future__ import annotations

from typing import Any

import pytest

from actloop.agents import AgentAction, AgentFinish, ToolAgentAction
from actloop.exceptions import OutputParserException
from actloop.format_scratchpad import format_to_openai_tool_messages, format_to_tool_messages
from actloop.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.runnables import RunnableLambda
from actloop.testing import ScriptedChatModel
from actloop.tool_calling import (
    OpenAIToolsAgentOutputParser,
    ToolsAgentOutputParser,
    create_tool_calling_agent,
    parse_ai_message_to_tool_action,
)
from actloop.tools import tool

URL = (
    "\nFor troubleshooting, visit: "
    "https://docs.langchain.com/oss/python/langchain/errors/OUTPUT_PARSING_FAILURE "
)


def call(name: str, args: dict[str, Any], id: str) -> Any:
    return {"name": name, "args": args, "id": id}


def raw(name: str, arguments: str | None, id: str) -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_tool_calls_become_tool_agent_actions() -> None:
    message = AIMessage(
        "let me look",
        tool_calls=[call("search", {"q": "x"}, "c1"), call("echo", {"__arg1": "hi"}, "c2")],
    )
    assert ToolsAgentOutputParser().invoke(message) == [
        ToolAgentAction(
            "search",
            {"q": "x"},
            "\nInvoking: `search` with `{'q': 'x'}`\nresponded: let me look\n\n",
            [message],
            "c1",
        ),
        ToolAgentAction(
            "echo",
            "hi",
            "\nInvoking: `echo` with `hi`\nresponded: let me look\n\n",
            [message],
            "c2",
        ),
    ]


def test_no_content_log() -> None:
    message = AIMessage("", tool_calls=[call("search", {}, "c1")])
    (action,) = parse_ai_message_to_tool_action(message)  # type: ignore[misc]
    assert action.log == "\nInvoking: `search` with `{}`\n\n\n"


@pytest.mark.parametrize(
    ("content", "log"),
    [
        ("the answer", "the answer"),
        ("", ""),
        ([{"type": "text", "text": "a"}], "[{'type': 'text', 'text': 'a'}]"),
    ],
)
def test_no_tool_calls_is_a_finish(content: Any, log: str) -> None:
    message = AIMessage(content)
    assert ToolsAgentOutputParser().invoke(message) == AgentFinish({"output": content}, log)


def test_openai_style_additional_kwargs_tool_calls() -> None:
    # A chunk does not parse additional_kwargs itself, so the parser's fallback reads them.
    message = AIMessageChunk(
        "",
        additional_kwargs={
            "tool_calls": [raw("search", '{"q": "x"}', "c1"), raw("now", None, "c2")]
        },
    )
    assert parse_ai_message_to_tool_action(message) == [
        ToolAgentAction(
            "search", {"q": "x"}, "\nInvoking: `search` with `{'q': 'x'}`\n\n\n", [message], "c1"
        ),
        ToolAgentAction("now", {}, "\nInvoking: `now` with `{}`\n\n\n", [message], "c2"),
    ]


def test_invalid_json_arguments() -> None:
    # AIMessage keeps the bad call in invalid_tool_calls, leaving tool_calls empty.
    message = AIMessage("", additional_kwargs={"tool_calls": [raw("search", "{bad", "c1")]})
    assert message.tool_calls == []
    with pytest.raises(OutputParserException) as info:
        parse_ai_message_to_tool_action(message)
    assert str(info.value) == (
        "Could not parse tool input: {'name': 'search', 'arguments': '{bad'} because the "
        "`arguments` is not valid JSON." + URL
    )
    assert info.value.send_to_llm is False


@pytest.mark.parametrize("arguments", ["[1, 2]", "null", '"text"', "3"])
def test_json_arguments_that_are_not_objects(arguments: str) -> None:
    message = AIMessageChunk("", additional_kwargs={"tool_calls": [raw("f", arguments, "c1")]})
    with pytest.raises(OutputParserException) as info:
        parse_ai_message_to_tool_action(message)
    assert str(info.value) == (
        f"Could not parse tool input: {{'name': 'f', 'arguments': {arguments!r}}} because the "
        "`arguments` is not an object." + URL
    )


def test_parser_rejects_text_and_other_messages() -> None:
    parser = ToolsAgentOutputParser()
    with pytest.raises(
        ValueError, match=r"^This output parser only works on ChatGeneration output$"
    ):
        parser.invoke("text")
    with pytest.raises(ValueError, match=r"^Can only parse messages$"):
        parser.parse("text")
    with pytest.raises(TypeError) as info:
        parser.invoke(HumanMessage("hi"))
    assert str(info.value) == "Expected an AI message got <class 'actloop.messages.HumanMessage'>"
    assert parser.OutputType == list[AgentAction] | AgentFinish
    assert isinstance(OpenAIToolsAgentOutputParser(), ToolsAgentOutputParser)


def test_format_to_tool_messages() -> None:
    first = AIMessage("", tool_calls=[call("a", {}, "1"), call("b", {}, "2")])
    second = AIMessage("again", tool_calls=[call("a", {"x": 1}, "3")])
    steps: list[tuple[AgentAction, Any]] = [
        (ToolAgentAction("a", {}, "log", [first], "1"), "one"),
        (ToolAgentAction("b", {}, "log", [first], "2"), {"é": [1]}),
        (AgentAction("plain", "x", "plain log"), "ignored"),
        (ToolAgentAction("a", {"x": 1}, "log", [second], "3"), object),
    ]
    assert format_to_tool_messages(steps) == [
        first,
        ToolMessage("one", tool_call_id="1", additional_kwargs={"name": "a"}),
        ToolMessage('{"é": [1]}', tool_call_id="2", additional_kwargs={"name": "b"}),
        AIMessage("plain log"),
        second,
        ToolMessage("<class 'object'>", tool_call_id="3", additional_kwargs={"name": "a"}),
    ]
    assert format_to_openai_tool_messages is format_to_tool_messages


def test_format_to_tool_messages_dedupes_equal_messages_across_steps_only() -> None:
    same = AIMessage("x", tool_calls=[call("a", {}, "1")])
    copy = AIMessage("x", tool_calls=[call("a", {}, "1")])
    steps: list[tuple[AgentAction, Any]] = [
        (AgentAction("p", "", "x"), "o"),  # AIMessage("x"), added even if seen before
        (AgentAction("p", "", "x"), "o"),
        (ToolAgentAction("a", {}, "l", [same, same], "1"), "o"),  # within one step: kept twice
        (ToolAgentAction("a", {}, "l", [copy], "1"), "o"),  # equal to earlier ones: dropped
        (ToolAgentAction("b", {}, "l", [AIMessage("x")], "2"), "o"),  # equals the plain one
    ]
    assert format_to_tool_messages(steps) == [
        AIMessage("x"),
        AIMessage("x"),
        same,
        same,
        ToolMessage("o", tool_call_id="1", additional_kwargs={"name": "a"}),
        ToolMessage("o", tool_call_id="2", additional_kwargs={"name": "b"}),
    ]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


PROMPT = ChatPromptTemplate.from_messages(
    [("system", "be brief"), ("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
)


def test_create_tool_calling_agent_validates() -> None:
    model = ScriptedChatModel([])
    no_pad = ChatPromptTemplate.from_messages([("human", "{input}")])
    with pytest.raises(
        ValueError, match=r"^Prompt missing required variables: \{'agent_scratchpad'\}$"
    ):
        create_tool_calling_agent(model, [add], no_pad)
    with pytest.raises(ValueError) as info:
        create_tool_calling_agent(RunnableLambda(lambda x: x), [add], PROMPT)
    assert (
        str(info.value) == "This function requires a bind_tools() method be implemented on the LLM."
    )


def test_create_tool_calling_agent_pipeline() -> None:
    reply = AIMessage("", tool_calls=[call("add", {"a": 1, "b": 2}, "c9")])
    model = ScriptedChatModel([reply])
    agent = create_tool_calling_agent(model, [add], PROMPT)
    assert agent.OutputType == list[AgentAction] | AgentFinish
    earlier = AIMessage("", tool_calls=[call("add", {"a": 0, "b": 0}, "c0")])
    steps = [(ToolAgentAction("add", {"a": 0, "b": 0}, "log", [earlier], "c0"), 0)]
    result = agent.invoke({"input": "sum", "intermediate_steps": steps})
    assert result == [
        ToolAgentAction(
            "add",
            {"a": 1, "b": 2},
            "\nInvoking: `add` with `{'a': 1, 'b': 2}`\n\n\n",
            [reply],
            "c9",
        )
    ]
    assert model.calls[0].messages == [
        SystemMessage("be brief"),
        HumanMessage("sum"),
        earlier,
        ToolMessage("0", tool_call_id="c0", additional_kwargs={"name": "add"}),
    ]
    assert model.calls[0].tools == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers.",
                "parameters": {
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"],
                    "type": "object",
                },
            },
        }
    ]


def test_custom_message_formatter() -> None:
    model = ScriptedChatModel(["done"])
    agent = create_tool_calling_agent(
        model, [add], PROMPT, message_formatter=lambda steps: [HumanMessage(f"{len(steps)} steps")]
    )
    assert agent.invoke({"input": "q", "intermediate_steps": []}) == AgentFinish(
        {"output": "done"}, "done"
    )
    assert model.calls[0].messages[-1] == HumanMessage("0 steps")
