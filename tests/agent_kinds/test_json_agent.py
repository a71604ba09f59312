"""The structured JSON agent: schema from tools, tolerant parser with useful observations, agent."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from actloop.agents import AgentAction, AgentFinish
from actloop.exceptions import OutputParserException
from actloop.json_agent import (
    JSON_AGENT_PROMPT,
    JSONAgentOutputParser,
    create_structured_json_agent,
    format_json_scratchpad,
    json_agent_schema,
    render_json_tools,
)
from actloop.messages import AIMessage, HumanMessage, SystemMessage
from actloop.prompts import ChatPromptTemplate
from actloop.testing import ScriptedChatModel
from actloop.tools import Tool, tool

ASK = (
    'Reply with exactly one JSON object like {"action": "<tool name>", "action_input": '
    '<its input>} or {"action": "Final Answer", "action_input": "<your answer>"}, and nothing else.'
)


@tool
def search(query: str, limit: int = 3, mode: Literal["web", "news"] = "web") -> str:
    """Search the web."""
    return query


@tool
def clock() -> str:
    """The time."""
    return "noon"


echo = Tool(name="echo", func=lambda text: text, description="Echo text.")


def parse(text: str) -> AgentAction | AgentFinish:
    return JSONAgentOutputParser().parse(text)


def test_schema_from_tools() -> None:
    def reply(name: str, action_input: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"action": {"const": name}, "action_input": action_input},
            "required": ["action", "action_input"],
        }

    assert json_agent_schema([search, clock, echo]) == {
        "oneOf": [
            reply(
                "search",
                {
                    "properties": {
                        "query": {"type": "string"},
                        "limit": {"type": "integer"},
                        "mode": {"enum": ["web", "news"], "type": "string"},
                    },
                    "required": ["query"],
                    "type": "object",
                },
            ),
            reply("clock", {"properties": {}, "type": "object"}),
            reply("echo", {"type": "string"}),
            reply("Final Answer", {"type": "string"}),
        ]
    }
    assert json_agent_schema([]) == {"oneOf": [reply("Final Answer", {"type": "string"})]}


def test_schema_keeps_only_simple_keywords() -> None:
    @tool
    def pick(tags: list[str], note: str | None = None) -> str:
        """Pick."""
        return ""

    (schema, _) = json_agent_schema([pick])["oneOf"]
    assert schema["properties"]["action_input"] == {
        "properties": {
            "tags": {"items": {"type": "string"}, "type": "array"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["tags"],
        "type": "object",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"action": "search", "action_input": {"query": "x"}}',
            AgentAction("search", {"query": "x"}, ""),
        ),
        ('{"action": "echo", "action_input": "hi"}', AgentAction("echo", "hi", "")),
        ('{"action": "clock"}', AgentAction("clock", {}, "")),
        ('{"action": "clock", "action_input": null}', AgentAction("clock", {}, "")),
        ('{"action": "unknown_tool", "action_input": {}}', AgentAction("unknown_tool", {}, "")),
        ('{"action": "Final Answer", "action_input": "42"}', AgentFinish({"output": "42"}, "")),
        ('{"action": "Final Answer", "action_input": 42}', AgentFinish({"output": 42}, "")),
        ('```json\n{"action": "echo", "action_input": "a"}\n```', AgentAction("echo", "a", "")),
        (
            'Sure! {"action": "echo", "action_input": "a"} Hope that helps {',
            AgentAction("echo", "a", ""),
        ),
        (
            'I will use {echo}: {"action": "echo", "action_input": "b"}',
            AgentAction("echo", "b", ""),
        ),
        (
            '[{"action": "echo", "action_input": "1"}, {"action": "echo"}]',
            AgentAction("echo", "1", ""),
        ),
        (
            '{"action": "Final Answer", "action_input": "two\nlines"}',
            AgentFinish({"output": "two\nlines"}, ""),
        ),
        (
            '{"action": "Final Answer", "action_input": "use ```code```"}',
            AgentFinish({"output": "use ```code```"}, ""),
        ),
    ],
)
def test_parses(text: str, expected: AgentAction | AgentFinish) -> None:
    expected.log = text
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "observation"),
    [
        ("I don't know", "Your reply was not valid JSON: it has no JSON object. " + ASK),
        ("", "Your reply was not valid JSON: it has no JSON object. " + ASK),
        (
            '{"action": "echo", "action_input": "x"',
            "Your reply was not valid JSON: Expecting ',' delimiter: line 1 column 39 (char 38). "
            + ASK,
        ),
        (
            "{'action': 'echo'}",
            "Your reply was not valid JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1). " + ASK,
        ),
        (
            '{"a": ' * 100_000,
            "Your reply was not valid JSON: it is too large or too deeply nested. " + ASK,
        ),
        (
            '{"action": 1' + "0" * 5000 + "}",
            "Your reply was not valid JSON: it is too large or too deeply nested. " + ASK,
        ),
        (
            '{"tool": "echo"}',
            'Your reply needs an "action" key with a tool name as a string. ' + ASK,
        ),
        (
            '{"action": ["echo"]}',
            'Your reply needs an "action" key with a tool name as a string. ' + ASK,
        ),
        ('{"action": "Final Answer"}', 'Put your final answer in "action_input". ' + ASK),
        (
            '{"action": "echo", "action_input": 5}',
            'The "action_input" of echo must be a JSON object or a string. ' + ASK,
        ),
        (
            '{"action": "echo", "action_input": ["a"]}',
            'The "action_input" of echo must be a JSON object or a string. ' + ASK,
        ),
    ],
)
def test_malformed_replies_tell_the_model_what_is_wrong(text: str, observation: str) -> None:
    with pytest.raises(OutputParserException) as info:
        parse(text)
    assert str(info.value).startswith(f"Could not parse LLM output: {text}\n")
    assert (info.value.observation, info.value.llm_output, info.value.send_to_llm) == (
        observation,
        text,
        True,
    )


def test_render_json_tools() -> None:
    assert render_json_tools([search, clock, echo]) == (
        "- search: Search the web.\n"
        '  action_input: {"query": string, "limit": integer (optional), '
        '"mode": "web" | "news" (optional)}\n'
        "- clock: The time.\n"
        "  action_input: {}\n"
        "- echo: Echo text.\n"
        '  action_input: "<text>"'
    )


def test_format_json_scratchpad() -> None:
    steps: list[tuple[AgentAction, Any]] = [
        (AgentAction("echo", "a", '{"action": "echo", "action_input": "a"}'), "a"),
        (AgentAction("_Exception", "bad", "oops"), "Your reply was not valid JSON"),
        (AgentAction("search", {}, "{}"), {"hits": ["é"]}),
    ]
    assert format_json_scratchpad(steps) == [
        AIMessage('{"action": "echo", "action_input": "a"}'),
        HumanMessage("Observation: a"),
        AIMessage("oops"),
        HumanMessage("Observation: Your reply was not valid JSON"),
        AIMessage("{}"),
        HumanMessage('Observation: {"hits": ["é"]}'),
    ]


def test_agent_binds_the_schema_and_fills_the_prompt() -> None:
    model = ScriptedChatModel(['{"action": "Final Answer", "action_input": "hi"}'])
    agent = create_structured_json_agent(model, [clock, echo])
    steps = [(AgentAction("clock", {}, '{"action": "clock"}'), "noon")]
    result = agent.invoke({"input": "time?", "intermediate_steps": steps})
    assert result == AgentFinish(
        {"output": "hi"}, '{"action": "Final Answer", "action_input": "hi"}'
    )
    assert model.calls[0].kwargs == {
        "response_format": {"type": "json_object", "schema": json_agent_schema([clock, echo])}
    }
    assert model.calls[0].messages == [
        SystemMessage(
            "Answer the user's question as well as you can. You can use these tools:\n\n"
            "- clock: The time.\n  action_input: {}\n"
            '- echo: Echo text.\n  action_input: "<text>"\n\n'
            "Reply with exactly one JSON object and nothing else. To use a tool, reply\n"
            '{"action": "<one of: clock, echo>", "action_input": <the tool\'s input>}\n'
            'and you will get its result as the next message, starting with "Observation:". '
            "When you know the answer, reply\n"
            '{"action": "Final Answer", "action_input": "<your answer>"}'
        ),
        HumanMessage("time?"),
        AIMessage('{"action": "clock"}'),
        HumanMessage("Observation: noon"),
    ]
    assert JSON_AGENT_PROMPT.input_variables == ["agent_scratchpad", "input", "tool_names", "tools"]


def test_agent_unconstrained_and_custom_prompt() -> None:
    model = ScriptedChatModel(['{"action": "echo", "action_input": "x"}'])
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = create_structured_json_agent(model, [echo], prompt, constrained=False)
    assert agent.invoke({"input": "q", "intermediate_steps": []}) == AgentAction(
        "echo", "x", '{"action": "echo", "action_input": "x"}'
    )
    assert model.calls[0].kwargs == {}
    assert model.calls[0].messages == [HumanMessage("q")]
    with pytest.raises(
        ValueError, match=r"^Prompt missing required variables: \{'agent_scratchpad'\}$"
    ):
        create_structured_json_agent(
            model, [echo], ChatPromptTemplate.from_messages([("human", "{input}")])
        )
