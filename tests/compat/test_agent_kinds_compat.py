"""Agent kinds against langchain-classic: a corpus of model outputs parsed by both parsers gives the
same results and exception messages; both agent constructors render the same prompts."""

from __future__ import annotations

import ast
import itertools
import random
from collections.abc import Callable
from typing import Any

import langchain_core.messages as lc_messages
import langchain_core.prompts as lc_prompts
import langchain_core.tools as lc_tools
import pytest
from langchain_classic.agents import create_react_agent as lc_create_react_agent
from langchain_classic.agents import create_tool_calling_agent as lc_create_tool_calling_agent
from langchain_classic.agents.format_scratchpad import format_log_to_messages as lc_log_to_messages
from langchain_classic.agents.format_scratchpad import format_log_to_str as lc_log_to_str
from langchain_classic.agents.format_scratchpad import (
    format_to_tool_messages as lc_to_tool_messages,
)
from langchain_classic.agents.output_parsers import JSONAgentOutputParser as LcJSONParser
from langchain_classic.agents.output_parsers import ReActSingleInputOutputParser as LcReActParser
from langchain_classic.agents.output_parsers import ToolsAgentOutputParser as LcToolsParser
from langchain_classic.agents.output_parsers.tools import ToolAgentAction as LcToolAgentAction
from langchain_core.agents import AgentAction as LcAgentAction
from langchain_core.exceptions import OutputParserException as LcOutputParserException
from langchain_core.language_models import FakeListChatModel
from langchain_core.load import dumpd as lc_dumpd
from langchain_core.tools.render import render_text_description as lc_render
from langchain_core.tools.render import render_text_description_and_args as lc_render_args

from actloop import messages, prompts, tools
from actloop.agents import AgentAction, ToolAgentAction
from actloop.exceptions import OutputParserException
from actloop.format_scratchpad import (
    format_log_to_messages,
    format_log_to_str,
    format_to_tool_messages,
)
from actloop.json_agent import JSONAgentOutputParser
from actloop.react import REACT_PROMPT, ReActSingleInputOutputParser, create_react_agent
from actloop.serialization import dumpd
from actloop.testing import ScriptedChatModel
from actloop.tool_calling import ToolsAgentOutputParser, create_tool_calling_agent
from actloop.tools.render import render_text_description, render_text_description_and_args

# -- the ReAct corpus ---------------------------------------------------------------------------

WELL_FORMED = [
    "Thought: I should search.\nAction: search\nAction Input: weather in SF",
    "Thought: I should search.\nAction: search\nAction Input: weather in SF\n",
    'Thought: quote it\nAction: search\nAction Input: "weather in SF"',
    'Action: search\nAction Input: "weather in SF"\n',
    "Action: search\nAction Input: 'single quoted'",
    'Action: python\nAction Input: print("hi")',
    'Action: json_tool\nAction Input: {"a": 1, "b": [1, 2]}',
    "Action: calculator\nAction Input: 2 + 2 * 3",
    "Action: search\nAction Input:\nmulti\nline\ninput\n\n",
    "Action: search\nAction Input:    lots of space    ",
    "Action:search\nAction Input:x",
    "Action 1: search\nAction 1 Input 1: numbered",
    "Action 1: search\nAction Input 1: half numbered",
    "Action  2  :  search  \nAction  2  Input  3  :  spaced numbers",
    "Action: search\nAction Input: x\nObservation: hallucinated\nThought: more",
    "Thought: two actions\nAction: a\nAction Input: 1\nAction: b\nAction Input: 2",
    "Action: Search Tool\nAction Input: spaces in tool name",
    "Action: [search]\nAction Input: bracketed",
    "Action: `search`\nAction Input: backticked",
    "**Action:** search\n**Action Input:** markdown",
    "Action: search\nAction Input: ```code block```",
    'Action: search\nAction Input: ""double double""',
    'Action: search\nAction Input: "unbalanced',
    'Action: search\nAction Input: unbalanced"',
    "Action: search\nAction Input: \t tab first",
    "Action: search\r\nAction Input: windows newlines\r\n",
    "Action: поиск\nAction Input: юникод",
    "Action: search\nAction Input: emoji 🎉",
    "Action: Action: nested\nAction Input: x",
    "Action: a Action: b Action Input: c",
    "Action Input: first\nAction: search\nAction Input: second",
    "Action: \nAction Input: empty tool",
    "Action: search\nAction Input: ",
    "Action: search\nAction Input:",
    "Thought: Final answer soon\nAction: search\nAction Input: final",
    "Final Answer: 42",
    "Thought: I now know the final answer\nFinal Answer: The answer is 42.",
    "Final Answer:   padded   \n\n",
    "Final Answer: first\nThought: hmm\nFinal Answer: second",
    "Final Answer:",
    "Final Answer: multi\nline\nanswer",
    "Thought: no input\nAction: search\nFinal Answer: fallback",
    "Final Answer: Action: search",
    "final answer: lowercase is not a final answer",
    "Final answer: wrong case",
    "Final Answer : space before colon",
    "FinalAnswer: no space",
]
MALFORMED = [
    "",
    " ",
    "\n\n",
    "I don't know what to do.",
    "Thought: thinking only",
    "Action search\nAction Input: missing colon",
    "action: search\naction input: lowercase",
    "Action: search",
    "Action: search\n",
    "Action: search\nInput: no action prefix",
    "Action: search\nAction input: lowercase input",
    "Action: search\nActionInput: x",
    "Action: search\nAction Input x",
    "Action Input: only input",
    "Action Input: x\nAction: search",
    "Action 1 2: search\nAction Input: x",
    "Action 1 2: search\nAction: s\nInput: x",
    "Action: search\nAction 1 2 Input: x",
    "Action: search\nAction Input 1 2: x",
    "Action:",
    "Action Input:",
    ":",
    "Observation: x",
    "Action: search\nAction Input: x\nFinal Answer: both",
    "Final Answer: both\nAction: search\nAction Input: x",
    "Action: a\nAction Input: b Final Answer: c",
    "Thought: x\nAction:\n",
]
ADVERSARIAL = [
    "Action" + " " * 500,
    "Action" + " " * 500 + ":",
    "Action:" * 200,
    "Action:" * 200 + "Action Input: end",
    "Action: x\nAction Input" * 100,
    "Action: x" + " " * 1000,
    "Action: x" + "\n" * 500 + "Action Input: y",
    "Action 1" + " " * 300 + "Input" + " " * 300 + ":",
    "Final Answer: Action: " * 100,
    "Action\u0661:\u00a0x\nAction \u0662 Input:\u2003y",
    "Action\u00b2: superscript is not a decimal\nAction Input: x",
    "Action\x1c:\x1dx\nAction\x1eInput\x1f:\x85y",
    "Action\t\n\r\x0b\x0c: all\nAction Input:\x0b\x0cws",
    "Action:\x00null\nAction Input:\x00byte",
    "A" * 300 + "ction: x\nAction Input: y",
    "Action" * 200,
    "Input:" * 200,
    "Action:" + '"' * 100 + "\nAction Input:" + '"' * 100,
    'Action: s\nAction Input:  "  x  "  ',
    "\ud800 lone surrogate Action: s\nAction Input: x",
]

_TOKENS = [
    "Action", "Action ", "Input", " Input", ":", " ", "\n", "\t", "1", "23", "Final Answer:",
    '"', "x", "search", "Thought: ", "Observation: ", "Action:", "Action Input:", "\u00a0",
]  # fmt: skip


def generated() -> list[str]:
    """Combinations of labels, names and inputs, and seeded random token strings."""
    labels = ["Action:", "Action 1:", "Action :", "Action1:", "Action\n:"]
    input_labels = [
        "Action Input:",
        "Action 1 Input 1:",
        "Action Input :",
        "Action Input",
        "Input:",
    ]
    names = ["search", " search ", ""]
    inputs = ["x", '"x"', ' "x" \n']
    out = [
        f"Thought: t\n{label}{name}\n{input_label}{value}"
        for label, input_label, name, value in itertools.product(
            labels, input_labels, names, inputs
        )
    ]
    rng = random.Random(2024)
    out += ["".join(rng.choices(_TOKENS, k=rng.randint(1, 12))) for _ in range(150)]
    return out


REACT_CORPUS = list(dict.fromkeys([*WELL_FORMED, *MALFORMED, *ADVERSARIAL, *generated()]))


def outcome(parse: Callable[[str], Any], text: str) -> tuple[Any, ...]:
    """The result as plain data, or the parse error's message and fields; other errors escape."""
    try:
        result = parse(text)
    except (OutputParserException, LcOutputParserException) as exc:
        return ("error", str(exc), exc.observation, exc.llm_output, exc.send_to_llm)
    return ("result", _plain(result))


def _plain(result: Any) -> Any:
    if isinstance(result, list):
        return [_plain(r) for r in result]  # pyright: ignore[reportUnknownVariableType]
    if type(result).__module__.startswith("actloop"):
        return dumpd(result)
    return lc_dumpd(result)


def test_corpus_size() -> None:
    assert len(REACT_CORPUS) >= 200


@pytest.mark.parametrize("text", REACT_CORPUS, ids=[f"react{i}" for i in range(len(REACT_CORPUS))])
def test_react_parser_matches_langchain(text: str) -> None:
    assert outcome(ReActSingleInputOutputParser().parse, text) == outcome(
        LcReActParser().parse, text
    )


# -- the JSON parser on well-formed replies -----------------------------------------------------

JSON_CORPUS = [
    '{"action": "search", "action_input": "weather"}',
    '{"action": "search", "action_input": {"query": "x", "n": 2}}',
    '{"action": "search"}',
    '{"action": "search", "action_input": null}',
    '{"action": "Final Answer", "action_input": "42"}',
    '{"action": "Final Answer", "action_input": {"nested": true}}',
    '```json\n{"action": "search", "action_input": "fenced"}\n```',
    '```\n{"action": "Final Answer", "action_input": "plain fence"}\n```',
    '  {"action": "search", "action_input": "padded"}  \n',
    '[{"action": "search", "action_input": "first"}, {"action": "other"}]',
    '{"action": "unknown", "action_input": {}}',
    '{"action": "search", "action_input": "ünïcödé ✓"}',
]


@pytest.mark.parametrize("text", JSON_CORPUS)
def test_json_parser_matches_langchain_on_well_formed_replies(text: str) -> None:
    assert outcome(JSONAgentOutputParser().parse, text) == outcome(LcJSONParser().parse, text)


# -- the tool-calling parser --------------------------------------------------------------------


def _raw(name: str, arguments: str | None, id: str = "r1") -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _calls(*calls: tuple[str, dict[str, Any], str]) -> list[dict[str, Any]]:
    return [{"name": n, "args": a, "id": i} for n, a, i in calls]


MESSAGE_CASES: list[tuple[str, dict[str, Any]]] = [
    ("AIMessage", {"content": "just an answer"}),
    ("AIMessage", {"content": ""}),
    ("AIMessage", {"content": [{"type": "text", "text": "block"}]}),
    ("AIMessage", {"content": "", "tool_calls": _calls(("search", {"q": "x"}, "c1"))}),
    ("AIMessage", {"content": "thinking", "tool_calls": _calls(("search", {"q": "x"}, "c1"))}),
    ("AIMessage", {"content": "", "tool_calls": _calls(("echo", {"__arg1": "hi"}, "c1"))}),
    ("AIMessage", {"content": "", "tool_calls": _calls(("echo", {"__arg1": {"a": 1}}, "c1"))}),
    ("AIMessage", {"content": "", "tool_calls": _calls(("a", {}, "1"), ("b", {"x": [1]}, "2"))}),
    ("AIMessage", {"content": "", "additional_kwargs": {"tool_calls": [_raw("f", '{"x": 1}')]}}),
    ("AIMessage", {"content": "", "additional_kwargs": {"tool_calls": [_raw("f", "{bad")]}}),
    ("AIMessage", {"content": "", "additional_kwargs": {"tool_calls": [_raw("f", "")]}}),
    ("AIMessage", {"content": "", "additional_kwargs": {"tool_calls": [_raw("f", "oops")]}}),
    (
        "AIMessage",
        {
            "content": "",
            "additional_kwargs": {"tool_calls": [_raw("f", "{}", "a"), _raw("g", "{", "b")]},
        },
    ),
    ("AIMessage", {"content": "", "additional_kwargs": {"tool_calls": []}}),
    (
        "AIMessageChunk",
        {"content": "", "additional_kwargs": {"tool_calls": [_raw("f", '{"x": 1}')]}},
    ),
    ("AIMessageChunk", {"content": "", "additional_kwargs": {"tool_calls": [_raw("f", None)]}}),
    ("AIMessageChunk", {"content": "", "additional_kwargs": {"tool_calls": [_raw("f", "{bad")]}}),
    (
        "AIMessageChunk",
        {
            "content": "",
            "tool_call_chunks": [{"name": "f", "args": '{"q": "pa', "id": "1", "index": 0}],
        },
    ),
    ("AIMessageChunk", {"content": "partial", "chunk_position": "last"}),
]


@pytest.mark.parametrize(("cls", "kwargs"), MESSAGE_CASES)
def test_tools_parser_matches_langchain(cls: str, kwargs: dict[str, Any]) -> None:
    ours = getattr(messages, cls)(**kwargs)
    ref = getattr(lc_messages, cls)(**kwargs)
    assert outcome(ToolsAgentOutputParser().invoke, ours) == outcome(LcToolsParser().invoke, ref)


def test_tools_parser_non_object_arguments_is_a_parse_error_not_attribute_error() -> None:
    kwargs: dict[str, Any] = {
        "content": "",
        "additional_kwargs": {"tool_calls": [_raw("f", "[1]")]},
    }
    with pytest.raises(AttributeError):
        LcToolsParser().invoke(lc_messages.AIMessageChunk(**kwargs))
    with pytest.raises(OutputParserException):
        ToolsAgentOutputParser().invoke(messages.AIMessageChunk(**kwargs))


# -- scratchpads and prompts --------------------------------------------------------------------


def _steps(lib: str) -> list[tuple[Any, Any]]:
    """The same steps built in either library."""
    msg_mod = messages if lib == "ours" else lc_messages
    action_cls = AgentAction if lib == "ours" else LcAgentAction
    tool_action_cls = ToolAgentAction if lib == "ours" else LcToolAgentAction
    first = msg_mod.AIMessage(
        content="", tool_calls=_calls(("search", {"q": "x"}, "1"), ("calc", {"e": "1+1"}, "2"))
    )
    second = msg_mod.AIMessage(content="again", tool_calls=_calls(("search", {"q": "y"}, "3")))

    def tool_action(tool: str, args: Any, log: str, message: Any, id: str) -> Any:
        return tool_action_cls(
            tool=tool, tool_input=args, log=log, message_log=[message], tool_call_id=id
        )

    return [
        (
            action_cls(
                tool="search", tool_input="x", log="Thought: a\nAction: search\nAction Input: x"
            ),
            "obs",
        ),
        (tool_action("search", {"q": "x"}, "l1", first, "1"), "found"),
        (tool_action("calc", {"e": "1+1"}, "l2", first, "2"), 2),
        (action_cls(tool="_Exception", tool_input="bad", log="oops"), {"é": [1, None]}),
        (tool_action("search", {"q": "y"}, "l3", second, "3"), ["a", "b"]),
    ]


def test_scratchpads_match_langchain() -> None:
    ours, ref = _steps("ours"), _steps("ref")
    assert format_log_to_str(ours) == lc_log_to_str(ref)
    assert format_log_to_str(ours, "O: ", "T: ") == lc_log_to_str(ref, "O: ", "T: ")
    assert [dumpd(m) for m in format_log_to_messages(ours, "R {observation}")] == [
        lc_dumpd(m) for m in lc_log_to_messages(ref, "R {observation}")
    ]
    assert [dumpd(m) for m in format_to_tool_messages(ours)] == [
        lc_dumpd(m) for m in lc_to_tool_messages(ref)
    ]


def _multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def _echo(text: str) -> str:
    return text


def _tools(lib: str) -> list[Any]:
    mod: Any = tools if lib == "ours" else lc_tools
    return [
        mod.tool(_multiply),
        mod.Tool(name="echo", func=_echo, description="Echo the text."),
        mod.StructuredTool.from_function(_multiply, name="times", description="Times."),
    ]


def test_tool_renderers_match_langchain() -> None:
    assert render_text_description(_tools("ours")) == lc_render(_tools("ref"))
    assert render_text_description_and_args(_tools("ours")) == lc_render_args(_tools("ref"))


REACT_REPLIES = ["Thought: go\nAction: echo\nAction Input: hi", "Final Answer: done"]


def test_react_agent_renders_the_same_prompt_and_plans_the_same() -> None:
    lc_prompt = lc_prompts.PromptTemplate.from_template(REACT_PROMPT.template)
    ours = create_react_agent(ScriptedChatModel(REACT_REPLIES), _tools("ours"), REACT_PROMPT)
    ref = lc_create_react_agent(
        FakeListChatModel(responses=REACT_REPLIES), _tools("ref"), lc_prompt
    )
    ours_in = {"input": "what?", "intermediate_steps": _steps("ours")}
    ref_in = {"input": "what?", "intermediate_steps": _steps("ref")}
    ours_prompt = ours.steps[1].invoke(ours.steps[0].invoke(ours_in))  # type: ignore[attr-defined]
    ref_prompt = ref.steps[1].invoke(ref.steps[0].invoke(ref_in))  # type: ignore[attr-defined]
    assert ours_prompt.to_string() == ref_prompt.to_string()
    for _ in REACT_REPLIES:
        assert _plain(ours.invoke(ours_in)) == _plain(ref.invoke(ref_in))


def test_react_agent_prompt_errors_match_langchain() -> None:
    def error(create: Callable[..., Any], prompt: Any, llm: Any, tool_list: list[Any]) -> Any:
        """The message split into its text and its set: a set's repr order depends on hashing
        and on the order its literal was stored in the .pyc, so it differs even in LangChain."""
        with pytest.raises(ValueError) as info:
            create(llm, tool_list, prompt)
        text, _, names = str(info.value).partition("{")
        return text, ast.literal_eval("{" + names)

    for template in ["{input}", "{input} {tools}", "{tool_names} {agent_scratchpad}"]:
        assert error(
            create_react_agent,
            prompts.PromptTemplate.from_template(template),
            ScriptedChatModel([]),
            _tools("ours"),
        ) == error(
            lc_create_react_agent,
            lc_prompts.PromptTemplate.from_template(template),
            FakeListChatModel(responses=[]),
            _tools("ref"),
        )


class _BindableFake(FakeListChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@pytest.mark.parametrize(
    "shape",
    [
        [("system", "sys"), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")],
        [
            ("system", "sys"),
            ("placeholder", "{chat_history}"),
            ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}"),
        ],
    ],
)
def test_tool_calling_agent_renders_the_same_messages(shape: list[tuple[str, str]]) -> None:
    ours = create_tool_calling_agent(
        ScriptedChatModel([]), _tools("ours"), prompts.ChatPromptTemplate.from_messages(shape)
    )
    ref = lc_create_tool_calling_agent(
        _BindableFake(responses=[]),
        _tools("ref"),
        lc_prompts.ChatPromptTemplate.from_messages(shape),
    )
    ours_value = ours.steps[1].invoke(
        ours.steps[0].invoke({"input": "q", "intermediate_steps": _steps("ours")})
    )  # type: ignore[attr-defined]
    ref_value = ref.steps[1].invoke(
        ref.steps[0].invoke({"input": "q", "intermediate_steps": _steps("ref")})
    )  # type: ignore[attr-defined]
    assert [dumpd(m) for m in ours_value.to_messages()] == [
        lc_dumpd(m) for m in ref_value.to_messages()
    ]


def test_tool_calling_agent_prompt_errors_match_langchain() -> None:
    shape = [("human", "{input}")]
    with pytest.raises(ValueError) as ours:
        create_tool_calling_agent(
            ScriptedChatModel([]), [], prompts.ChatPromptTemplate.from_messages(shape)
        )
    with pytest.raises(ValueError) as ref:
        lc_create_tool_calling_agent(
            _BindableFake(responses=[]), [], lc_prompts.ChatPromptTemplate.from_messages(shape)
        )
    assert str(ours.value) == str(ref.value)


def _dedupe_steps(lib: str) -> list[tuple[Any, Any]]:
    """Steps whose messages repeat: identical objects, equal copies, a plain action's log."""
    msg_mod: Any = messages if lib == "ours" else lc_messages
    action_cls: Any = AgentAction if lib == "ours" else LcAgentAction
    tool_action_cls: Any = ToolAgentAction if lib == "ours" else LcToolAgentAction

    def ai(content: str, *calls: tuple[str, dict[str, Any], str]) -> Any:
        return msg_mod.AIMessage(content=content, tool_calls=_calls(*calls))

    def act(log: list[Any], id: str) -> Any:
        return tool_action_cls(tool="a", tool_input={}, log="l", message_log=log, tool_call_id=id)

    same = ai("x", ("a", {}, "1"))
    return [
        (action_cls(tool="p", tool_input="", log="x"), "o"),
        (action_cls(tool="p", tool_input="", log="x"), "o"),
        (act([same, same], "1"), "o"),
        (act([ai("x", ("a", {}, "1"))], "1"), "o"),
        (act([ai("x")], "2"), "o"),
        (act([ai("x", ("a", {}, "3"))], "1"), "o"),
    ]


def test_tool_message_dedupe_matches_langchain() -> None:
    assert [dumpd(m) for m in format_to_tool_messages(_dedupe_steps("ours"))] == [
        lc_dumpd(m) for m in lc_to_tool_messages(_dedupe_steps("ref"))
    ]
