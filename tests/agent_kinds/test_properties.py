"""Properties of the parsers: total on any text, equal to the reference regex, linear time (B11)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from actloop.agents import AgentAction, AgentFinish
from actloop.exceptions import OutputParserException
from actloop.json_agent import JSONAgentOutputParser
from actloop.messages import AIMessageChunk
from actloop.react import ReActSingleInputOutputParser
from actloop.tool_calling import parse_ai_message_to_tool_action

REACT_TOKENS = [
    "Action", "Action ", "Input", " Input", ":", " ", "  ", "\n", "\t", "\r", "\x1c", "\u00a0",
    "\u2003", "1", "23", "\u0661", "\u00b2", "Final Answer:", "Final Answer", '"', '" ', "x",
    "search", "Thought: ", "Observation: ", "Action:", "Action Input:", "Action 1:", "Input 2:",
]  # fmt: skip
JSON_TOKENS = [
    "{", "}", "[", "]", '"action"', '"action_input"', ":", ",", '"Final Answer"', '"search"',
    "null", "1", "1e999", "-", '"', "\\", "\\u12", "```json\n", "```", "\n", " ", "x", "'", "NaN",
    '{"action": ', '"action_input": {', "true",
]  # fmt: skip

react_like = st.lists(st.sampled_from(REACT_TOKENS), max_size=14).map("".join)
json_like = st.lists(st.sampled_from(JSON_TOKENS), max_size=16).map("".join)
any_text = st.text(max_size=300)


def outcome(parse: Callable[[str], Any], text: str) -> tuple[Any, ...]:
    """What a parse produced, comparable across implementations; only parse errors may escape."""
    try:
        result = parse(text)
    except OutputParserException as exc:
        return ("error", str(exc), exc.observation, exc.llm_output, exc.send_to_llm)
    if isinstance(result, AgentAction):
        return ("action", result.tool, result.tool_input, result.log)
    assert isinstance(result, AgentFinish)
    return ("finish", result.return_values, result.log)


_REF = r"Action\s*\d*\s*:[\s]*(.*?)Action\s*\d*\s*Input\s*\d*\s*:[\s]*(.*)"
_URL = (
    "\nFor troubleshooting, visit: "
    "https://docs.langchain.com/oss/python/langchain/errors/OUTPUT_PARSING_FAILURE "
)


def reference_react(text: str) -> tuple[Any, ...]:
    """LangChain's ReActSingleInputOutputParser.parse, transcribed (the oracle, quadratic)."""
    includes_answer = "Final Answer:" in text
    match = re.search(_REF, text, re.DOTALL)
    if match:
        if includes_answer:
            msg = "Parsing LLM output produced both a final answer and a parse-able action:"
            return ("error", f"{msg}: {text}{_URL}", None, None, False)
        return ("action", match.group(1).strip(), match.group(2).strip(" ").strip('"'), text)
    if includes_answer:
        return ("finish", {"output": text.rsplit("Final Answer:", maxsplit=1)[-1].strip()}, text)
    error = f"Could not parse LLM output: `{text}`{_URL}"
    if not re.search(r"Action\s*\d*\s*:[\s]*(.*?)", text, re.DOTALL):
        return ("error", error, "Invalid Format: Missing 'Action:' after 'Thought:'", text, True)
    if not re.search(r"[\s]*Action\s*\d*\s*Input\s*\d*\s*:[\s]*(.*)", text, re.DOTALL):
        return (
            "error",
            error,
            "Invalid Format: Missing 'Action Input:' after 'Action:'",
            text,
            True,
        )
    return ("error", error, None, None, False)


REACT = ReActSingleInputOutputParser().parse
JSON = JSONAgentOutputParser().parse
many = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@many
@given(st.one_of(react_like, any_text))
@example("Action 1 2: a\nAction Input: b")
@example("Action\u0661:\u00a0x Action \u0662 Input:\x1c y")
@example("Action\u00b2: x Action Input: y")  # superscript two is a digit but not a decimal
def test_react_parser_equals_the_reference_regex(text: str) -> None:
    assert outcome(REACT, text) == reference_react(text)


@settings(deadline=None)
@given(st.one_of(json_like, any_text))
def test_json_parser_is_total(text: str) -> None:
    kind = outcome(JSON, text)[0]
    assert kind in ("action", "finish", "error")
    if kind == "error":
        with pytest.raises(OutputParserException) as info:
            JSON(text)
        assert info.value.send_to_llm is True
        assert info.value.llm_output == text


@settings(deadline=None)
@given(st.lists(st.tuples(st.text(max_size=10), st.one_of(json_like, any_text)), max_size=3))
def test_tool_call_parser_is_total_on_model_arguments(calls: list[tuple[str, str]]) -> None:
    raw = [
        {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": args}}
        for i, (name, args) in enumerate(calls)
    ]
    message = AIMessageChunk("text", additional_kwargs={"tool_calls": raw})
    try:
        result = parse_ai_message_to_tool_action(message)
    except OutputParserException:
        return
    if isinstance(result, AgentFinish):
        assert result == AgentFinish({"output": "text"}, "text")
    else:
        assert {a.tool for a in result} <= {name for name, _ in calls}


HOSTILE_REACT: dict[str, Callable[[int], str]] = {
    "action colons": lambda n: "Action:" * (n // 7),
    "action without input colon": lambda n: "Action: x\nAction Input" * (n // 22),
    "whitespace after Action": lambda n: "Action" + " " * n,
    "whitespace and digits after Action": lambda n: "Action" + " " * (n // 2) + "1" * (n // 2),
    "whitespace after an action": lambda n: "Action: x" + " " * n,
    "newlines before Action Input": lambda n: "Action: x" + "\n" * n + "Action Inpu",
    "Action 1 Input runs": lambda n: "Action 1" + " " * (n // 2) + "Input" + " " * (n // 2),
    "final answers and actions": lambda n: "Final Answer: Action: " * (n // 22),
}
HOSTILE_JSON: dict[str, Callable[[int], str]] = {
    "open braces": lambda n: "{" * n,
    "open keys": lambda n: '{"' * (n // 2),
    "deep objects": lambda n: '{"a": ' * (n // 6),
    "unterminated string": lambda n: '{"action": "' + "a" * n,
    "braces in strings": lambda n: '{"a' * (n // 3),
    "no braces": lambda n: "x" * n,
    "long valid": lambda n: '{"action": "Final Answer", "action_input": "' + "a" * n + '"}',
}


def best_time(parse: Callable[[str], Any], text: str) -> float:
    times: list[float] = []
    for _ in range(7):
        start = time.perf_counter()
        try:
            parse(text)
        except OutputParserException:
            pass
        times.append(time.perf_counter() - start)
    return min(times)


def growth(
    parse: Callable[[str], Any], make: Callable[[int], str], small: int, large: int
) -> float:
    """How many times as long `make(large)` takes to parse as `make(small)` (best of 7 each).

    Growth, not speed: a linear parser gives about large/small whatever the machine's load."""
    return best_time(parse, make(large)) / max(best_time(parse, make(small)), 1e-5)  # timer floor


def assert_linear(parse: Callable[[str], Any], make: Callable[[int], str]) -> None:
    """4x the size takes about 4x as long (quadratic: 16x). Texts up to 32 kB stay in the CPU's
    L2 cache (a 100 kB one did not always, which bent the ratio); a linear parser passes one of
    three measurements on a busy machine, a quadratic one none."""
    tries: list[float] = []
    for _ in range(3):
        ratio = growth(parse, make, 8_000, 32_000)
        if ratio < 8:
            return
        tries.append(ratio)
    pytest.fail(f"32 kB took this many times as long as 8 kB: {tries}")


@pytest.mark.parametrize("make", HOSTILE_REACT.values(), ids=HOSTILE_REACT.keys())
def test_react_parser_is_linear_on_hostile_input(make: Callable[[int], str]) -> None:
    assert_linear(REACT, make)


@pytest.mark.parametrize("make", HOSTILE_JSON.values(), ids=HOSTILE_JSON.keys())
def test_json_parser_is_linear_on_hostile_input(make: Callable[[int], str]) -> None:
    assert_linear(JSON, make)


def test_reference_regex_is_quadratic_where_ours_is_not() -> None:
    def make(n: int) -> str:
        return "Action" + " " * n

    def reference(text: str) -> Any:
        return re.search(_REF, text, re.DOTALL)

    assert growth(reference, make, 300, 3_000) > 30  # quadratic or worse: ~100 and up
    assert growth(REACT, make, 300, 3_000) < 30
