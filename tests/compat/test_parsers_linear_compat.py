"""Issue 29, item 8: the parsers whose LangChain regex is super-linear (the ReAct docstore parser's
`(.*?)\\[(.*?)\\]`, the conversational parser's `Action: (.*?)[\\n]*Action Input: `, the XML
parser's `<tool>(.*?)</tool>`, the structured-chat parser's fence) are linear scans in actloop.
They give LangChain's result for every input LangChain parses quickly: random texts built from
the tokens the patterns look for (where a backtracking regex would go wrong), the legacy corpus,
and each other parser of every agent kind the same way. Their speed is tested in
`tests/agent_kinds/test_parser_linearity.py`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_classic.agents.chat.output_parser import ChatOutputParser as LcChatParser
from langchain_classic.agents.conversational.output_parser import ConvoOutputParser as LcConvo
from langchain_classic.agents.mrkl.output_parser import MRKLOutputParser as LcMRKLParser
from langchain_classic.agents.output_parsers import ReActJsonSingleInputOutputParser as LcReJson
from langchain_classic.agents.output_parsers import SelfAskOutputParser as LcSelfAskParser
from langchain_classic.agents.output_parsers import XMLAgentOutputParser as LcXMLParser
from langchain_classic.agents.react.output_parser import ReActOutputParser as LcDocstoreParser
from langchain_classic.agents.structured_chat.output_parser import (
    StructuredChatOutputParser as LcStructuredParser,
)

from actloop.classic.chat import ChatOutputParser, ReActJsonSingleInputOutputParser
from actloop.classic.conversational import ConvoOutputParser
from actloop.classic.legacy_kinds import ReActOutputParser
from actloop.classic.mrkl import MRKLOutputParser
from actloop.classic.self_ask import SelfAskOutputParser
from actloop.classic.structured_chat import StructuredChatOutputParser
from actloop.classic.xml import XMLAgentOutputParser
from compat.test_classic_compat import CORPUS

COMMON = ["x", "ab", " ", "  ", "\n", "\n\n", "\t", "\r", "\u00a0", "\u2003", "\x1c", "_", "é", '"']
TOKENS: dict[str, list[str]] = {
    "docstore": ["Action: ", "Action:", "[", "]", "[]", "Finish", "Search", "Finish[", "\n"],
    "convo": ["Action: ", "Action Input: ", "Action Input:", "Action", "AI:", "AI", ": ", "\n"],
    "xml": [
        "<tool>", "</tool>", "<tool_input>", "</tool_input>", "<final_answer>", "</final_answer>",
        "<tool", "</", "<", ">", "[[tool]]", "[[/tool_input]]",
    ],
    "fence": [
        "```", "`", "``", "json", "js", "```json", "```json ", "```json\n", "{", "}",
        '{"action": "echo", "action_input": "hi"}', '{"action": "Final Answer"', "Final Answer:",
        '"action"', ": ", "١", "[",
    ],
    "react": [
        "Action", "Action:", "Action Input:", "Input", ":", "1", "Final Answer:", "SELECT ", "\n\n",
    ],
    "self_ask": ["Follow up:", "Followup:", "So the final answer is: ", ":", "\n"],
}  # fmt: skip

PARSERS: dict[str, tuple[Callable[[], Any], Callable[[], Any], str]] = {
    "ReActOutputParser": (ReActOutputParser, LcDocstoreParser, "docstore"),
    "ConvoOutputParser": (ConvoOutputParser, LcConvo, "convo"),
    "XMLAgentOutputParser": (XMLAgentOutputParser, LcXMLParser, "xml"),
    "StructuredChatOutputParser": (StructuredChatOutputParser, LcStructuredParser, "fence"),
    "ChatOutputParser": (ChatOutputParser, LcChatParser, "fence"),
    "ReActJsonSingleInputOutputParser": (ReActJsonSingleInputOutputParser, LcReJson, "fence"),
    "MRKLOutputParser": (MRKLOutputParser, LcMRKLParser, "react"),
    "SelfAskOutputParser": (SelfAskOutputParser, LcSelfAskParser, "self_ask"),
}


def outcome(parse: Callable[[str], Any], text: str) -> tuple[Any, ...]:
    """What a parse gave (or raised: the error's type name, message, observation, output)."""
    try:
        result = parse(text)
    except Exception as exc:
        error = getattr(exc, "observation", None), getattr(exc, "llm_output", None)
        return ("error", type(exc).__name__, str(exc), *error)
    if hasattr(result, "return_values"):
        return ("finish", result.return_values, result.log)
    return ("action", result.tool, result.tool_input, result.log)


def texts(kind: str) -> st.SearchStrategy[str]:
    """Short texts of the parser's own tokens and a few tricky characters (at most 16 pieces,
    where LangChain's regexes are still fast)."""
    return st.lists(st.sampled_from(TOKENS[kind] + COMMON), max_size=16).map("".join)


def _check(name: str, text: str) -> None:
    ours, ref, _ = PARSERS[name]
    assert outcome(ours().parse, text) == outcome(ref().parse, text), text


@pytest.mark.parametrize("name", PARSERS)
def test_parser_matches_langchain_on_the_corpus(name: str) -> None:
    extra = [
        "Thought: look\nAction: Search[Ann]",
        "Action: Finish[done]",
        "Action: Search[a[b]c]d]",
        "Action: Search]x[y",
        "Action: [[[[",
        "Action: x\n\n\nAction Input: y",
        "Action: \nAction Input: ",
        "<tool>a<tool>b</tool>",
        "```json  ```",
        "```json \n{}\n```",
        "```json\t```x```",
    ]
    for text in CORPUS + extra:
        _check(name, text)


@pytest.mark.parametrize("name", PARSERS)
def test_parser_matches_langchain_on_random_texts(name: str) -> None:
    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(texts(PARSERS[name][2]))
    def check(text: str) -> None:
        _check(name, text)

    check()
