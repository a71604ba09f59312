"""The journal's short ways of writing the usual step: a ReAct plan (an `AgentAction` whose input
is text) and a text observation are written byte for byte as `dumps` writes them, read back
equal, and anything else still goes through `dumps`."""

from __future__ import annotations

from typing import Any

import pytest

from actloop import AgentAction
from actloop.checkpoint._entries import decode_plan, encode, encode_plan
from actloop.serialization import dumps
from actloop.steps import AgentActionMessageLog

TEXTS = [
    "",
    "ok",
    'quote " backslash \\ slash /',
    "line\nbreak\ttab\x00\x1f",
    "é ü 中文 😀",
    "\ud800",
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_text_observation_is_written_as_dumps_writes_it(text: str) -> None:
    assert encode(text, "an observation") == dumps(text)


@pytest.mark.parametrize("text", TEXTS)
def test_a_react_plan_is_written_as_dumps_writes_it_and_read_back(text: str) -> None:
    action = AgentAction(f"tool {text}", text, f"Thought: {text}")
    data = encode_plan(action)
    assert data == dumps({"output": action})
    back = decode_plan(data)
    assert (type(back), back.tool, back.tool_input, back.log) == (
        AgentAction,
        action.tool,
        action.tool_input,
        action.log,
    )


class Custom(AgentAction):
    """A subclass: its own id in the saved data, so it takes `dumps`'s way."""


def test_a_subclass_keeps_its_own_id() -> None:
    data = encode_plan(Custom("search", "x", "log"))
    assert data == dumps({"output": Custom("search", "x", "log")})
    assert '"Custom"' in data


@pytest.mark.parametrize(
    "plan",
    [
        AgentAction("search", {"query": "x", "n": 3}, "log"),
        AgentActionMessageLog("search", "x", "log", []),
        [AgentAction("a", "1", ""), AgentAction("b", "2", "")],
    ],
)
def test_other_plans_still_go_through_dumps(plan: Any) -> None:
    data = encode_plan(plan)
    if isinstance(plan, list):
        assert [a.tool for a in decode_plan(data)] == ["a", "b"]
    else:
        assert data == dumps({"output": plan})
        assert type(decode_plan(data)) is type(plan)
