"""`tool_catalog`: the agent lists a category's tools, then calls one by name; mistakes are
observations, not crashes."""

from __future__ import annotations

import pytest

from actloop import (
    AgentExecutor,
    AIMessage,
    ChatPromptTemplate,
    create_tool_calling_agent,
    render_text_description_and_args,
    tool,
    tool_catalog,
)
from actloop.testing import ScriptedChatModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def upper(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


CATALOG = {"math": [add], "text": [upper]}


def _call(name: str, args: dict[str, object], id: str) -> dict[str, object]:
    return {"name": name, "args": args, "id": id, "type": "tool_call"}


def test_the_agent_picks_a_category_then_a_tool() -> None:
    tools = tool_catalog(CATALOG, {"math": "arithmetic", "text": "string edits"})
    model = ScriptedChatModel(
        [
            AIMessage("", tool_calls=[_call("list_tools", {"category": "math"}, "c1")]),
            AIMessage(
                "",
                tool_calls=[
                    _call("call_tool", {"name": "add", "arguments": {"a": 2, "b": 3}}, "c2"),
                    _call("call_tool", {"name": "upper", "arguments": "hi"}, "c3"),
                ],
            ),
            "5 and HI",
        ]
    )
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    executor = AgentExecutor(
        agent=create_tool_calling_agent(model, tools, prompt),
        tools=tools,
        return_intermediate_steps=True,
    )
    result = executor.invoke({"input": "2+3, and shout hi"})
    listing = render_text_description_and_args([add])
    assert listing.endswith("Add two integers., args: " + str(add.args))
    assert [s[1] for s in result["intermediate_steps"]] == [listing, 5, "HI"]
    assert [t["function"]["name"] for t in model.calls[0].tools or []] == [
        "list_tools",
        "call_tool",
    ]
    assert tools[0].description == (
        "List the tools of one category. Categories:\n- math: arithmetic\n- text: string edits"
    )


def test_list_tools_describes_the_category() -> None:
    listing = tool_catalog(CATALOG)[0].run("text")
    assert listing.startswith("upper")
    assert "Upper-case the text." in listing
    assert "add" not in listing


def test_mistakes_are_observations() -> None:
    list_tools, call_tool = tool_catalog(CATALOG)
    assert list_tools.run("files") == "Error: no category 'files'; choose one of math, text."
    assert call_tool.run({"name": "sub", "arguments": {}}) == (
        "Error: no tool 'sub'; call list_tools with a category to see its tools."
    )
    assert call_tool.run({"name": "add", "arguments": "not json"}) == (
        "Error: the arguments of 'add' must be a JSON object."
    )
    assert call_tool.run({"name": "add", "arguments": '{"a": 1, "b": 2}'}) == 3


def test_a_name_in_two_categories_is_refused() -> None:
    with pytest.raises(ValueError, match="tool 'add' appears twice"):
        tool_catalog({"a": [add], "b": [add]})
