"""dumpd/dumps/load/loads: LangChain's shape, round trips, the allow-list and hostile input."""

from __future__ import annotations

import json
from typing import Any

import pytest

from actloop.agents import (
    AgentAction,
    AgentActionMessageLog,
    AgentFinish,
    AgentStep,
    ToolAgentAction,
)
from actloop.exceptions import SerializationError
from actloop.messages import (
    AIMessage,
    AIMessageChunk,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from actloop.serialization import dumpd, dumps, load, loads

AI_X = {
    "lc": 1,
    "type": "constructor",
    "id": ["langchain", "schema", "messages", "AIMessage"],
    "kwargs": {"content": "x", "type": "ai", "tool_calls": [], "invalid_tool_calls": []},
}

OBJECTS: list[Any] = [
    HumanMessage("hi"),
    HumanMessage("hi", id="1", name="n", additional_kwargs={"a": 1}, response_metadata={"b": 2}),
    HumanMessage([{"type": "text", "text": "hi"}]),
    SystemMessage("s"),
    AIMessage("x"),
    AIMessage("", tool_calls=[{"name": "s", "args": {"q": 1}, "id": "c1"}]),
    AIMessage("x", usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}),
    AIMessage("x", invalid_tool_calls=[{"name": "s", "args": "{", "id": "c", "error": None}]),
    AIMessageChunk(
        "x", tool_call_chunks=[{"name": "s", "args": '{"a": 1}', "id": "c", "index": 0}]
    ),
    ToolMessage("o", tool_call_id="c1", status="error", artifact={"raw": [1]}),
    FunctionMessage("o", name="f"),
    AgentAction("search", "foo", "log"),
    AgentAction("search", {"q": {"lc": 1, "id": ["os", "system"]}}, "log"),
    AgentActionMessageLog("s", "i", "l", message_log=[AIMessage("x")]),
    ToolAgentAction("s", {"a": 1}, "l", [AIMessage("x")], tool_call_id="c1"),
    AgentFinish({"output": "done"}, "log"),
    AgentStep(AgentAction("a", "b", "c"), {"rows": [1, 2]}),
    AgentStep(ToolAgentAction("s", {}, "l", [AIMessage("x")], None), "obs"),
]


def test_agent_action_shape() -> None:
    assert dumpd(AgentAction("search", "foo", "log")) == {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "agent", "AgentAction"],
        "kwargs": {"tool": "search", "tool_input": "foo", "log": "log", "type": "AgentAction"},
    }


def test_message_log_shape_and_dumps_text() -> None:
    action = AgentActionMessageLog("s", "i", "l", message_log=[AIMessage("x")])
    assert dumpd(action)["kwargs"]["message_log"] == [AI_X]
    assert dumps(AgentFinish({"output": 1}, "l")) == (
        '{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "agent", "AgentFinish"], '
        '"kwargs": {"return_values": {"output": 1}, "log": "l", "type": "AgentFinish"}}'
    )


def test_agent_step_shape() -> None:
    assert dumpd(AgentStep(AgentAction("a", "b", "c"), 3)) == {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "agent", "AgentStep"],
        "kwargs": {
            "action": {
                "lc": 1,
                "type": "constructor",
                "id": ["langchain", "schema", "agent", "AgentAction"],
                "kwargs": {"tool": "a", "tool_input": "b", "log": "c", "type": "AgentAction"},
            },
            "observation": 3,
        },
    }


@pytest.mark.parametrize("obj", OBJECTS, ids=lambda o: type(o).__name__)
def test_round_trip(obj: Any) -> None:
    assert load(dumpd(obj)) == obj
    assert loads(dumps(obj)) == obj
    assert dumps(loads(dumps(obj))) == dumps(obj)


def test_intermediate_steps_round_trip_as_tuples() -> None:
    steps = [
        (AgentAction("search", "q", "log"), {"hits": 2}),
        (ToolAgentAction("t", {"x": 1}, "l", [AIMessage("m")], "c"), "text"),
    ]
    result = {"input": "hi", "output": "done", "intermediate_steps": steps}
    assert loads(dumps(result)) == result
    assert json.loads(dumps(steps))[0][1] == {"hits": 2}


def test_plain_lists_stay_lists() -> None:
    assert loads(dumps([1, 2])) == [1, 2]
    assert loads(dumps([AIMessage("a"), 1])) == [AIMessage("a"), 1]


def test_user_dicts_with_lc_key_are_escaped() -> None:
    data = {"lc": 1, "type": "constructor", "id": ["os", "system"], "kwargs": {}}
    dumped = dumpd({"meta": data})
    assert dumped == {"meta": {"__lc_escaped__": data}}
    assert load(dumped) == {"meta": data}


def test_pretty_and_default_kwarg() -> None:
    assert dumps({"a": 1}, pretty=True) == '{\n  "a": 1\n}'
    with pytest.raises(SerializationError, match="`default` should not be passed"):
        dumps({}, default=str)


def test_unserializable_values_become_not_implemented() -> None:
    class Thing:
        def __repr__(self) -> str:
            return "Thing()"

    dumped = dumpd(AgentStep(AgentAction("a", "b", "c"), Thing()))
    assert dumped["kwargs"]["observation"] == {
        "lc": 1,
        "type": "not_implemented",
        "id": [*Thing.__module__.split("."), "Thing"],
        "repr": "Thing()",
    }
    with pytest.raises(SerializationError, match=r"not_implemented \(repr='Thing\(\)'\)"):
        load(dumped)
    assert load(dumped, ignore_unserializable_fields=True) == AgentStep(
        AgentAction("a", "b", "c"), None
    )


def test_alias_ids_load() -> None:
    for id_ in (
        ["langchain_core", "messages", "ai", "AIMessage"],
        ["langchain_core", "messages", "AIMessage"],
        ["langchain", "schema", "AIMessage"],
    ):
        assert load({**AI_X, "id": id_}) == AIMessage("x")
    action = dumpd(AgentAction("a", "b", "c"))
    assert load({**action, "id": ["langchain_core", "agents", "AgentAction"]}) == AgentAction(
        "a", "b", "c"
    )


@pytest.mark.parametrize(
    "id_",
    [
        ["langchain", "schema", "messages", "ChatMessage"],
        ["langchain_core", "prompts", "chat", "ChatPromptTemplate"],
        ["os", "system"],
        ["langchain", "schema", "ToolMessage"],
    ],
)
def test_other_ids_are_refused(id_: list[str]) -> None:
    with pytest.raises(SerializationError, match=r"Deserialization of \[.*\] is not allowed"):
        load({"lc": 1, "type": "constructor", "id": id_, "kwargs": {"content": "x"}})


def test_allowed_objects_narrows() -> None:
    action = dumpd(AgentAction("a", "b", "c"))
    assert load(dumpd(AIMessage("x")), allowed_objects="messages") == AIMessage("x")
    with pytest.raises(SerializationError, match="AgentAction'] is not allowed"):
        load(action, allowed_objects="messages")
    with pytest.raises(SerializationError, match="AIMessage'] is not allowed"):
        load(dumpd(AIMessage("x")), allowed_objects=[AgentAction])
    assert load(action, allowed_objects=[AgentAction]) == AgentAction("a", "b", "c")
    with pytest.raises(SerializationError, match="allowed_objects may only name"):
        load(action, allowed_objects=[dict])


def test_secrets_need_permission(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACTLOOP_TEST_KEY", "sk-env")
    secret = {"key": {"lc": 1, "type": "secret", "id": ["ACTLOOP_TEST_KEY"]}}
    assert load(secret) == {"key": None}
    assert load(secret, secrets_from_env=True) == {"key": "sk-env"}
    assert load(secret, secrets_map={"ACTLOOP_TEST_KEY": "sk-map"}) == {"key": "sk-map"}


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"lc": 1, "type": "constructor", "id": "AIMessage"}, "'id' must be a non-empty list"),
        ({"lc": 1, "type": "constructor", "id": []}, "'id' must be a non-empty list"),
        ({"lc": 1, "type": "constructor", "id": [1, 2]}, "'id' must be a non-empty list"),
        ({**AI_X, "kwargs": [1]}, "'kwargs' must be an object, got list"),
        ({**AI_X, "kwargs": {"content": 5}}, "'content' has type int"),
        ({**AI_X, "kwargs": {"content": "x", "type": "human"}}, "does not match 'ai'"),
        ({**AI_X, "kwargs": {}}, "a message needs `content` or `content_blocks`"),
        ({**AI_X, "kwargs": {"content": "x", "tool_calls": [1]}}, "Cannot load"),
        ({**AI_X, "kwargs": {"content": "x", "tool_calls": [{}]}}, "Cannot load"),
        ({"lc": 1, "type": "secret", "id": ["A", "B"]}, "exactly one name"),
        ({"lc": 1, "type": "not_implemented", "id": ["x"]}, "serialized as not_implemented"),
    ],
)
def test_malformed_entries_raise_serialization_error(data: Any, match: str) -> None:
    with pytest.raises(SerializationError, match=match):
        load(data)


def test_bad_message_log_and_action() -> None:
    action = dumpd(AgentActionMessageLog("s", "i", "l", [AIMessage("x")]))
    action["kwargs"]["message_log"] = ["not a message"]
    with pytest.raises(SerializationError, match="'message_log' must hold messages only"):
        load(action)
    step = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "agent", "AgentStep"]}
    with pytest.raises(SerializationError, match="'action' has type str"):
        load({**step, "kwargs": {"action": "x", "observation": 1}})


def test_deep_nesting_is_refused() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(SerializationError, match="nested more than 200 levels"):
        load(deep)
    with pytest.raises(SerializationError, match="nested more than 200 levels"):
        dumpd(deep)
    with pytest.raises(SerializationError, match="nested more than 200 levels"):
        loads("[" * 5000 + "]" * 5000)


def test_junk_input_raises_serialization_error() -> None:
    with pytest.raises(SerializationError, match="not valid JSON"):
        loads("{nope")
    with pytest.raises(SerializationError, match="not valid JSON"):
        loads(5)  # type: ignore[arg-type]
    with pytest.raises(SerializationError, match="Cannot load a value of type set"):
        load({1, 2})
    assert issubclass(SerializationError, ValueError)


def test_dicts_with_lc_but_unknown_type_pass_through() -> None:
    assert load({"lc": 2, "x": 1}) == {"lc": 2, "x": 1}
    assert load({"lc": 1, "type": "other"}) == {"lc": 1, "type": "other"}
