"""Hierarchical tool selection: the model opens a category, then calls a tool in it (issue 14)."""

from typing import Any

import pytest

from actloop import (
    AgentExecutor,
    AIMessage,
    ChatPromptTemplate,
    ConfigurationError,
    HumanMessage,
    PromptTemplate,
    ToolMessage,
    create_tool_calling_agent,
    tool,
)
from actloop.react import create_react_agent
from actloop.testing import ScriptedChatModel
from actloop.tools.categories import ToolCategories


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool
def upper(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool
def clock() -> str:
    """The time now."""
    return "12:00"


MATH_OPEN = (
    "Category 'math' is open. Its tools:\n"
    "add(a: int, b: int) -> int - Add two integers.\n"
    "multiply(a: int, b: int) -> int - Multiply two integers."
)
TEXT_OPEN = "Category 'text' is open. Its tools:\nupper(text: str) -> str - Upper-case a text."
PROMPT = ChatPromptTemplate.from_messages(
    [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
)
MODES = ["sync", "async"]


def toolset() -> ToolCategories:
    return ToolCategories({"math": [add, multiply], "text": [upper]})


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def reply(*calls: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=list(calls))


def tool_names(model: ScriptedChatModel) -> list[list[str]]:
    """The tools each model call was bound to, by name."""
    return [[t["function"]["name"] for t in c.tools or []] for c in model.calls]


def view(messages: list[Any]) -> list[tuple[Any, ...]]:
    """What a chat model is shown: human text, each reply's calls, each result."""
    out: list[tuple[Any, ...]] = []
    for m in messages:
        if isinstance(m, HumanMessage):
            out.append(("human", m.content))
        elif isinstance(m, ToolMessage):
            out.append(("tool", m.tool_call_id, m.content))
        else:
            out.append(("ai", [(c["name"], c["args"]) for c in m.tool_calls], m.content))
    return out


async def run(executor: AgentExecutor, inputs: dict[str, Any], mode: str) -> dict[str, Any]:
    if mode == "sync":
        return executor.invoke(inputs)
    return await executor.ainvoke(inputs)


def test_the_tools_for_the_executor_and_for_a_prompt() -> None:
    tools = toolset()
    assert [t.name for t in tools.category_tools] == ["math", "text"]
    assert [t.name for t in tools.tools] == ["math", "text", "add", "multiply", "upper"]
    assert [t.description for t in tools.category_tools] == [
        "Open the math tools: add, multiply.",
        "Open the text tools: upper.",
    ]
    # No arguments; any input (a ReAct "Action Input") is ignored.
    math = tools.category_tools[0]
    assert math.args == {}
    assert math.invoke({}) == math.invoke("none") == MATH_OPEN


def test_a_description_replaces_the_default() -> None:
    tools = ToolCategories({"math": [add]}, descriptions={"math": "Arithmetic on integers."})
    model = ScriptedChatModel(["hi"])
    tools.wrap(model).invoke("hello")
    assert model.calls[0].tools == [
        {
            "type": "function",
            "function": {
                "name": "math",
                "description": "Arithmetic on integers.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_the_model_opens_a_category_then_calls_its_tools(mode: str) -> None:
    tools = toolset()
    model = ScriptedChatModel(
        [
            reply(call("math", "1")),
            reply(call("multiply", "2", a=6, b=7)),
            reply(call("text", "3")),
            reply(call("upper", "4", text="done")),
            "42, DONE",
        ]
    )
    agent = create_tool_calling_agent(tools.wrap(model), tools.tools, PROMPT)
    executor = AgentExecutor(agent=agent, tools=tools.tools, return_intermediate_steps=True)
    result = await run(executor, {"input": "6*7?"}, mode)
    model.assert_complete()

    assert tool_names(model) == [
        ["math", "text"],
        ["math", "text", "add", "multiply"],
        ["math", "text", "add", "multiply"],
        ["math", "text", "upper"],
        ["math", "text", "upper"],
    ]
    q = ("human", "6*7?")
    opened_math = [q, ("ai", [("math", {})], ""), ("tool", "1", MATH_OPEN)]
    multiplied = [("ai", [("multiply", {"a": 6, "b": 7})], ""), ("tool", "2", "42")]
    opened_text = [("ai", [("text", {})], ""), ("tool", "3", TEXT_OPEN)]
    assert [view(c.messages) for c in model.calls] == [
        [q],
        opened_math,
        [*opened_math, *multiplied],
        [*opened_math, *multiplied, *opened_text],
        [
            *opened_math,
            *multiplied,
            *opened_text,
            ("ai", [("upper", {"text": "done"})], ""),
            ("tool", "4", "DONE"),
        ],
    ]
    assert result["output"] == "42, DONE"
    assert [(a.tool, a.tool_input, o) for a, o in result["intermediate_steps"]] == [
        ("math", {}, MATH_OPEN),
        ("multiply", {"a": 6, "b": 7}, 42),
        ("text", {}, TEXT_OPEN),
        ("upper", {"text": "done"}, "DONE"),
    ]


def test_one_reply_may_open_two_categories_and_other_tools_stay_visible() -> None:
    tools = toolset()
    model = ScriptedChatModel([reply(call("text", "1"), call("math", "2")), "ok"])
    agent = create_tool_calling_agent(tools.wrap(model), [clock, *tools.tools], PROMPT)
    executor = AgentExecutor(agent=agent, tools=[clock, *tools.tools])
    assert executor.invoke({"input": "go"})["output"] == "ok"
    assert tool_names(model) == [
        ["clock", "math", "text"],
        ["clock", "math", "text", "add", "multiply", "upper"],
    ]
    assert tools.opened(model.calls[1].messages) == ["text", "math"]


def test_a_trimmed_away_opening_closes_its_category_again() -> None:
    tools = toolset()
    model = ScriptedChatModel([reply(call("math", "1")), reply(call("add", "2", a=1, b=2)), "3"])
    agent = create_tool_calling_agent(tools.wrap(model), tools.tools, PROMPT)
    executor = AgentExecutor(agent=agent, tools=tools.tools, trim_intermediate_steps=1)
    assert executor.invoke({"input": "1+2?"})["output"] == "3"
    # The last plan sees only the `add` step: no category is open in what the model is shown.
    assert tool_names(model) == [
        ["math", "text"],
        ["math", "text", "add", "multiply"],
        ["math", "text"],
    ]
    assert view(model.calls[2].messages) == [
        ("human", "1+2?"),
        ("ai", [("add", {"a": 1, "b": 2})], ""),
        ("tool", "2", "3"),
    ]


def test_a_tool_of_a_closed_category_still_runs() -> None:
    tools = toolset()
    model = ScriptedChatModel([reply(call("upper", "1", text="x")), "X"])
    agent = create_tool_calling_agent(tools.wrap(model), tools.tools, PROMPT)
    result = AgentExecutor(agent=agent, tools=tools.tools, return_intermediate_steps=True).invoke(
        {"input": "go"}
    )
    assert [(a.tool, o) for a, o in result["intermediate_steps"]] == [("upper", "X")]


REACT_PROMPT = PromptTemplate.from_template(
    "Tools:\n{tools}\nUse one of [{tool_names}].\nQuestion: {input}\n{agent_scratchpad}"
)


@pytest.mark.parametrize("mode", MODES)
async def test_a_react_agent_reads_the_categorys_tools_from_the_observation(mode: str) -> None:
    tools = toolset()
    model = ScriptedChatModel(
        [
            "Thought: a text task.\nAction: text\nAction Input: none",
            "Thought: upper-case it.\nAction: upper\nAction Input: hi",
            "Thought: done.\nFinal Answer: HI",
        ]
    )
    agent = create_react_agent(model, tools.category_tools, REACT_PROMPT)
    executor = AgentExecutor(agent=agent, tools=tools.tools, return_intermediate_steps=True)
    result = await run(executor, {"input": "Upper-case hi"}, mode)
    head = (
        "Tools:\nmath - Open the math tools: add, multiply.\ntext - Open the text tools: upper.\n"
        "Use one of [math, text].\nQuestion: Upper-case hi\n"
    )
    step1 = (
        "Thought: a text task.\nAction: text\nAction Input: none\n"
        f"Observation: {TEXT_OPEN}\nThought: "
    )
    step2 = "Thought: upper-case it.\nAction: upper\nAction Input: hi\nObservation: HI\nThought: "
    assert [[m.content for m in c.messages] for c in model.calls] == [
        [head],
        [head + step1],
        [head + step1 + step2],
    ]
    assert result["output"] == "HI"
    assert [(a.tool, o) for a, o in result["intermediate_steps"]] == [
        ("text", TEXT_OPEN),
        ("upper", "HI"),
    ]


@pytest.mark.parametrize(
    ("categories", "descriptions", "message"),
    [
        ({}, None, "ToolCategories needs at least one category: {'name': [tools]}"),
        ({"math": []}, None, "category 'math' has no tools; give it at least one"),
        (
            {"math": [add], "more": [add]},
            None,
            "the name 'add' is used twice; category and tool names must be unique",
        ),
        (
            {"add": [add]},
            None,
            "the name 'add' is used twice; category and tool names must be unique",
        ),
        (
            {"math": [add]},
            {"maths": "typo"},
            "descriptions name unknown categories ['maths']; the categories are ['math']",
        ),
    ],
)
def test_bad_categories_raise_at_construction(
    categories: dict[str, Any], descriptions: dict[str, str] | None, message: str
) -> None:
    with pytest.raises(ConfigurationError) as info:
        ToolCategories(categories, descriptions=descriptions)
    assert str(info.value) == message


def test_wrap_needs_a_model_with_bind_tools() -> None:
    with pytest.raises(ConfigurationError) as info:
        toolset().wrap("gpt")
    assert str(info.value) == "ToolCategories.wrap needs a chat model with bind_tools(); got 'gpt'"
