"""The same objects built in langchain-core and actloop serialize to identical JSON, both ways."""

from __future__ import annotations

import warnings
from typing import Any

import langchain_core.agents as lc_agents
import langchain_core.messages as lc_messages
import pytest
from langchain_classic.agents.output_parsers.tools import ToolAgentAction as LcToolAgentAction
from langchain_core.load import dumpd as lc_dumpd
from langchain_core.load import dumps as lc_dumps
from langchain_core.load import loads as lc_loads
from langchain_core.messages.utils import message_chunk_to_message as lc_chunk_to_message

from actloop import agents, messages
from actloop.serialization import dumpd, dumps, loads

TOOL_CALL = {"name": "search", "args": {"q": "é", "n": 2}, "id": "call_1"}
USAGE = {
    "input_tokens": 5,
    "output_tokens": 7,
    "total_tokens": 12,
    "input_token_details": {"cache_read": 2},
    "output_token_details": {"reasoning": 3},
}
RAW_CALLS = [
    {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
    {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{bad"}},
]
CHUNK = {"name": "search", "args": '{"q": "pa', "id": "call_1", "index": 0}

# (class name, keyword arguments) built identically in both libraries.
MESSAGE_CASES: list[tuple[str, dict[str, Any]]] = [
    ("HumanMessage", {"content": "hi"}),
    ("HumanMessage", {"content": "", "name": "", "id": "m1"}),
    (
        "HumanMessage",
        {
            "content": "hi",
            "name": "u",
            "additional_kwargs": {"a": 1},
            "response_metadata": {"b": 2},
        },
    ),
    ("HumanMessage", {"content": [{"type": "text", "text": "hi"}, "plain"]}),
    ("HumanMessage", {"content": "x", "additional_kwargs": {"meta": {"lc": 1, "id": ["os"]}}}),
    ("SystemMessage", {"content": "be brief", "id": "s1"}),
    ("AIMessage", {"content": "x"}),
    ("AIMessage", {"content": "", "tool_calls": [TOOL_CALL]}),
    ("AIMessage", {"content": "x", "usage_metadata": USAGE, "id": "run-1"}),
    (
        "AIMessage",
        {
            "content": "x",
            "invalid_tool_calls": [{"name": "s", "args": "{", "id": "c", "error": "e"}],
        },
    ),
    ("AIMessage", {"content": "", "additional_kwargs": {"tool_calls": RAW_CALLS}}),
    ("AIMessage", {"content": [{"type": "text", "text": "a"}], "response_metadata": {"m": "gpt"}}),
    ("AIMessageChunk", {"content": "x"}),
    ("AIMessageChunk", {"content": "", "tool_call_chunks": [CHUNK]}),
    ("AIMessageChunk", {"content": "", "tool_calls": [TOOL_CALL], "chunk_position": "last"}),
    ("AIMessageChunk", {"content": "", "additional_kwargs": {"tool_calls": RAW_CALLS}}),
    ("ToolMessage", {"content": "o", "tool_call_id": "c1"}),
    ("ToolMessage", {"content": "o", "tool_call_id": "c1", "status": "error", "artifact": [1]}),
    ("ToolMessage", {"content": 42, "tool_call_id": 7, "artifact": 0}),
    ("FunctionMessage", {"content": "o", "name": "f"}),
]


def _message_pair(name: str, kwargs: dict[str, Any]) -> tuple[Any, Any]:
    return getattr(lc_messages, name)(**kwargs), getattr(messages, name)(**kwargs)


def _agent_pairs() -> list[tuple[Any, Any]]:
    lc_ai = lc_messages.AIMessage(content="", tool_calls=[TOOL_CALL])  # type: ignore[list-item]
    ai = messages.AIMessage("", tool_calls=[TOOL_CALL])  # type: ignore[list-item]
    return [
        (lc_agents.AgentAction("search", "foo", "log"), agents.AgentAction("search", "foo", "log")),
        (lc_agents.AgentAction("s", {"q": 1}, "l"), agents.AgentAction("s", {"q": 1}, "l")),
        (lc_agents.AgentAction("s", {"lc": 1}, "l"), agents.AgentAction("s", {"lc": 1}, "l")),
        (
            lc_agents.AgentFinish({"output": "done", "n": [1]}, "Final Answer: done"),
            agents.AgentFinish({"output": "done", "n": [1]}, "Final Answer: done"),
        ),
        (
            lc_agents.AgentActionMessageLog(tool="s", tool_input="i", log="l", message_log=[lc_ai]),
            agents.AgentActionMessageLog("s", "i", "l", message_log=[ai]),
        ),
        (
            LcToolAgentAction(
                tool="search", tool_input={"q": 1}, log="l", message_log=[lc_ai], tool_call_id="c1"
            ),
            agents.ToolAgentAction("search", {"q": 1}, "l", [ai], tool_call_id="c1"),
        ),
        (
            LcToolAgentAction(tool="s", tool_input="i", log="l", message_log=[], tool_call_id=None),
            agents.ToolAgentAction("s", "i", "l", [], tool_call_id=None),
        ),
    ]


def _lc_load(text: str, allowed: Any = "core") -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lc_loads(text, allowed_objects=allowed)


PAIRS = [_message_pair(n, k) for n, k in MESSAGE_CASES] + _agent_pairs()
IDS = [type(ours).__name__ for _, ours in PAIRS]


@pytest.mark.parametrize(("theirs", "ours"), PAIRS, ids=IDS)
def test_same_json(theirs: Any, ours: Any) -> None:
    assert dumps(ours) == lc_dumps(theirs)
    assert dumpd(ours) == lc_dumpd(theirs)
    assert dumps(ours, pretty=True) == lc_dumps(theirs, pretty=True)


@pytest.mark.parametrize(("theirs", "ours"), PAIRS, ids=IDS)
def test_langchain_json_loads_in_actloop(theirs: Any, ours: Any) -> None:
    assert loads(lc_dumps(theirs)) == ours


@pytest.mark.parametrize(("theirs", "ours"), PAIRS, ids=IDS)
def test_actloop_json_loads_in_langchain(theirs: Any, ours: Any) -> None:
    if isinstance(ours, agents.ToolAgentAction):
        # langchain-core cannot load its own ToolAgentAction JSON: "core" refuses the id and
        # "all" maps it to `langchain.agents...`, a module langchain-classic does not provide (nor
        # does langchain 1.x, which the dev extra installs for tests/create_agent).
        with pytest.raises(ValueError, match="is not allowed"):
            _lc_load(dumps(ours))
        missing = r"'langchain(\.agents\.output_parsers)?'"
        with pytest.raises(ModuleNotFoundError, match=missing):
            _lc_load(dumps(ours), "all")
        with pytest.raises(ModuleNotFoundError, match=missing):
            _lc_load(lc_dumps(theirs), "all")
        return
    assert _lc_load(dumps(ours)) == theirs


@pytest.mark.parametrize(("theirs", "ours"), PAIRS, ids=IDS)
def test_same_type_repr_and_text(theirs: Any, ours: Any) -> None:
    assert ours.type == theirs.type
    assert repr(ours) == repr(theirs)
    if isinstance(ours, messages.BaseMessage):
        assert ours.text == theirs.text
    else:
        assert dumps(ours.messages) == lc_dumps(theirs.messages)


@pytest.mark.parametrize(
    "observation", ["text", {"é": [1, 2]}, 3.5, None, {1, 2}], ids=lambda o: type(o).__name__
)
def test_step_messages_match(observation: Any) -> None:
    for theirs, ours in _agent_pairs():
        if not isinstance(ours, agents.AgentAction):
            continue
        lc_step = lc_agents.AgentStep(action=theirs, observation=observation)
        step = agents.AgentStep(ours, observation)
        assert dumps(step.messages) == lc_dumps(lc_step.messages)


CHUNK_STREAMS: list[list[dict[str, Any]]] = [
    [{"content": "Hel"}, {"content": "lo", "response_metadata": {"finish_reason": "stop"}}],
    [
        {"content": "", "tool_call_chunks": [{"name": "s", "args": "", "id": "c1", "index": 0}]},
        {"content": "", "tool_call_chunks": [{"name": None, "args": '{"q": ', "index": 0}]},
        {
            "content": "",
            "tool_call_chunks": [
                {"name": None, "args": '"x"}', "index": 0},
                {"name": "t", "args": "[1]", "id": "c2", "index": 1},
            ],
        },
        {"content": "", "usage_metadata": USAGE, "id": "run-9", "chunk_position": "last"},
    ],
    [
        {"content": [{"type": "text", "text": "a", "index": 0}], "id": "lc_run-1"},
        {"content": [{"type": "text", "text": "b", "index": 0}], "id": "lc_1"},
        {"content": "c", "additional_kwargs": {"n": 1, "s": "x"}},
        {"content": "", "additional_kwargs": {"n": 2, "s": "y"}, "usage_metadata": USAGE},
    ],
]


@pytest.mark.parametrize("stream", CHUNK_STREAMS)
def test_chunk_merging_matches(stream: list[dict[str, Any]]) -> None:
    theirs = [lc_messages.AIMessageChunk(**kw) for kw in stream]
    ours = [messages.AIMessageChunk(**kw) for kw in stream]
    lc_total, total = theirs[0], ours[0]
    for lc_part, part in zip(theirs[1:], ours[1:], strict=True):
        lc_total, total = lc_total + lc_part, total + part
    assert dumps(total) == lc_dumps(lc_total)
    assert dumps(ours[0] + ours[1:]) == lc_dumps(theirs[0] + theirs[1:])
    assert repr(total) == repr(lc_total)
    assert dumps(messages.message_chunk_to_message(total)) == lc_dumps(
        lc_chunk_to_message(lc_total)
    )
