"""Issue 29, item 8: every output parser of every agent kind takes time linear in the reply's
length, on hostile replies built to make a backtracking regex blow up.

Growth, not speed: each parser is timed (best of 15) on a hostile reply of a size n where it
takes at least 0.2 ms (or of 32 K characters if it is faster), then at 4n: a linear parser takes
about four times as long whatever the machine's load, a quadratic one sixteen times, a cubic one
64. On the code before the fix the
ReAct docstore parser was cubic (`Action: [[[[...`) and the conversational, XML and structured
chat parsers quadratic; those cases failed here. The agents' results equal LangChain's
(`tests/compat/test_parsers_linear_compat.py`)."""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from actloop import AgentExecutor, Tool
from actloop.classic import AgentType, initialize_agent
from actloop.classic.chat import ChatOutputParser, ReActJsonSingleInputOutputParser
from actloop.classic.conversational import ConvoOutputParser
from actloop.classic.legacy_kinds import ConversationalChatOutputParser, ReActOutputParser
from actloop.classic.mrkl import MRKLOutputParser
from actloop.classic.openai_functions import OpenAIFunctionsAgentOutputParser
from actloop.classic.self_ask import SelfAskOutputParser
from actloop.classic.structured_chat import StructuredChatOutputParser
from actloop.classic.xml import XMLAgentOutputParser
from actloop.json_agent import JSONAgentOutputParser
from actloop.messages import AIMessage
from actloop.react import ReActSingleInputOutputParser
from actloop.testing import FakeListLLM
from actloop.tool_calling import parse_ai_message_to_tool_action

FLOOR = 0.0002
"""Seconds the smaller measured parse should take, so timer noise does not decide the ratio."""
LIMIT = 1 << 15
"""The largest n (32 K characters): a text of 4n characters and its copies still fit in the
CPU's L2 cache. Larger texts are read from slower memory, which bends the ratio at the size where
they stop fitting; a quadratic parser is plain at these sizes already."""


def _text_parser(parser: Any) -> Callable[[str], Any]:
    return parser.parse


def _tool_calls(arguments: str) -> Any:
    raw = [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": arguments}}]
    return parse_ai_message_to_tool_action(AIMessage("", additional_kwargs={"tool_calls": raw}))


def _function_call(arguments: str) -> Any:
    call = {"name": "t", "arguments": arguments}
    message = AIMessage("", additional_kwargs={"function_call": call})
    return OpenAIFunctionsAgentOutputParser.parse_ai_message(message)


def _repeat(piece: str, prefix: str = "", suffix: str = "") -> Callable[[int], str]:
    return lambda n: prefix + piece * max(n // len(piece), 1) + suffix


REACT_HOSTILE = {
    "action colons": _repeat("Action:"),
    "whitespace after Action": _repeat(" ", "Action"),
    "action without input": _repeat("Action: x\nAction Input"),
    "newlines before Action Input": _repeat("\n", "Action: x", "Action Inpu"),
    "final answers and actions": _repeat("Final Answer: Action: "),
}
FENCE_HOSTILE = {
    "open fences": _repeat("```json\n"),
    "unclosed json fence and spaces": _repeat(" ", "```json"),
    "unclosed json fence and newlines": _repeat("\n", "```json "),
    "backticks": _repeat("`"),
    "unclosed fence": _repeat("x", "```\n"),
    "final answer fences": _repeat("```Final Answer:"),
}
JSON_HOSTILE = {
    "open braces": _repeat("{"),
    "open keys": _repeat('{"a'),
    "open arrays": _repeat("["),
    "unterminated string": _repeat("a", '{"action": "'),
}
CASES: dict[str, tuple[Callable[[str], Any], dict[str, Callable[[int], str]]]] = {
    "ReActSingleInputOutputParser": (_text_parser(ReActSingleInputOutputParser()), REACT_HOSTILE),
    "MRKLOutputParser": (_text_parser(MRKLOutputParser()), REACT_HOSTILE),
    "ReActOutputParser (docstore)": (
        _text_parser(ReActOutputParser()),
        {
            "open brackets": _repeat("[", "Action: "),
            "no bracket": _repeat("x", "Action: "),
            "open brackets and text": _repeat("[x", "Action: "),
            "closing brackets": _repeat("]", "Action: "),
            "repeated actions": _repeat("Action: x", "Action: "),
        },
    ),
    "ConvoOutputParser": (
        _text_parser(ConvoOutputParser()),
        {
            "repeated actions": _repeat("Action: x\n"),
            "action prefixes": _repeat("Action: "),
            "newlines after an action": _repeat("\n", "Action: x"),
            "AI prefix candidates": _repeat("AI"),
        },
    ),
    "XMLAgentOutputParser": (
        _text_parser(XMLAgentOutputParser()),
        {
            "unclosed tools": _repeat("<tool>"),
            "unclosed tools and text": _repeat("<tool>x"),
            "unclosed tool inputs": _repeat("<tool_input>", "<tool>t</tool>"),
            "unclosed final answers": _repeat("<final_answer>", "</final_answer>"),
            "tag starts": _repeat("<"),
        },
    ),
    "StructuredChatOutputParser": (_text_parser(StructuredChatOutputParser()), FENCE_HOSTILE),
    "ChatOutputParser": (_text_parser(ChatOutputParser()), FENCE_HOSTILE),
    "ReActJsonSingleInputOutputParser": (
        _text_parser(ReActJsonSingleInputOutputParser()),
        FENCE_HOSTILE,
    ),
    "SelfAskOutputParser": (
        _text_parser(SelfAskOutputParser()),
        {"follow ups": _repeat("Follow up:"), "colons": _repeat(":"), "lines": _repeat("x\n")},
    ),
    "JSONAgentOutputParser": (_text_parser(JSONAgentOutputParser()), JSON_HOSTILE),
    "ConversationalChatOutputParser": (
        _text_parser(ConversationalChatOutputParser()),
        JSON_HOSTILE,
    ),
    "ToolsAgentOutputParser": (_tool_calls, JSON_HOSTILE),
    "OpenAIFunctionsAgentOutputParser": (_function_call, JSON_HOSTILE),
}
PARAMS = [
    pytest.param(parse, make, id=f"{name}: {family}")
    for name, (parse, families) in CASES.items()
    for family, make in families.items()
]


def best_time(parse: Callable[[str], Any], text: str, runs: int = 15) -> float:
    """The fastest of `runs` parses of `text` (a parse may raise: errors are results too)."""
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        try:
            parse(text)
        except (ValueError, TypeError, KeyError, RecursionError):
            pass
        times.append(time.perf_counter() - start)
    return min(times)


def growth(parse: Callable[[str], Any], make: Callable[[int], str]) -> float:
    """How many times as long a 4x longer reply takes to parse, from the first n (a power of two)
    whose parse takes FLOOR seconds, or LIMIT: about 4 for a linear parser, 16 for a quadratic
    one, 64 for a cubic one."""
    n = 64
    while n < LIMIT and best_time(parse, make(n), runs=3) < FLOOR:
        n *= 2
    return best_time(parse, make(4 * n)) / best_time(parse, make(n))


@pytest.mark.parametrize(("parse", "make"), PARAMS)
def test_parser_is_linear_on_hostile_replies(
    parse: Callable[[str], Any], make: Callable[[int], str]
) -> None:
    # A parse of 4 * LIMIT = 128 K characters in under FLOOR (0.2 ms) is linear or better: a
    # quadratic one would need under a cycle per 10,000 pairs of characters. Ratios of such tiny
    # times measure the cache, not the parser (a str.find of 128 K against one of 32 K).
    if best_time(parse, make(4 * LIMIT)) < FLOOR:
        return
    tries: list[float] = []
    for _ in range(3):  # a linear parser passes one of three measurements, a quadratic none
        ratio = growth(parse, make)
        if ratio < 8:  # linear: about 4; quadratic: 16
            return
        tries.append(ratio)
    pytest.fail(f"a 4x longer reply took this many times as long to parse: {tries}")


# -- a hostile reply within a deadline ------------------------------------------------------------


def _echo(query: str) -> str:
    return query


def docstore_executor(reply: str) -> AgentExecutor:
    tools = [Tool(name=n, func=_echo, description=f"The {n} tool.") for n in ("Search", "Lookup")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # initialize_agent is deprecated, as in LangChain
        return initialize_agent(
            tools,
            FakeListLLM(responses=[reply] * 1000),
            AgentType.REACT_DOCSTORE,
            max_execution_time=1,
            max_iterations=None,
            handle_parsing_errors=True,
        )


HOSTILE_DOCSTORE = "Thought: hmm\nAction: " + "[" * 2000
"""On the code before the fix one parse of this took about 20 s, holding the GIL."""
STOPPED = "Agent stopped due to iteration limit or time limit."


@pytest.mark.parametrize("path", ["invoke", "ainvoke"])
def test_hostile_docstore_reply_keeps_the_deadline(path: str) -> None:
    executor = docstore_executor(HOSTILE_DOCSTORE)
    start = time.monotonic()
    if path == "invoke":
        result = executor.invoke({"input": "q"})
    else:
        result = asyncio.run(executor.ainvoke({"input": "q"}))
    took = time.monotonic() - start
    assert result["output"] == STOPPED
    assert took < 5.0  # the deadline is 1 s; 5 s only proves nothing hung on a parse
