"""Agent data models: construction, type, messages, equality and repr (SPEC A1)."""

from __future__ import annotations

import pytest

from actloop.agents import (
    AgentAction,
    AgentActionMessageLog,
    AgentFinish,
    AgentStep,
    ToolAgentAction,
)
from actloop.messages import AIMessage, FunctionMessage, HumanMessage


def test_agent_action_positional_or_keyword() -> None:
    a = AgentAction("search", "foo", "log")
    assert a == AgentAction(tool="search", tool_input="foo", log="log")
    assert (a.tool, a.tool_input, a.log, a.type) == ("search", "foo", "log", "AgentAction")
    assert a.messages == [AIMessage(content="log")]
    assert repr(a) == "AgentAction(tool='search', tool_input='foo', log='log')"


def test_equality_needs_same_class() -> None:
    msg_log = AgentActionMessageLog("s", "i", "l", message_log=[])
    assert AgentAction("s", "i", "l") != msg_log
    assert AgentAction("s", {"a": 1}, "l") != AgentAction("s", {"a": 2}, "l")
    with pytest.raises(TypeError):
        hash(AgentAction("s", "i", "l"))


def test_message_log_action() -> None:
    log = [AIMessage("thinking")]
    a = AgentActionMessageLog(tool="s", tool_input={"q": 1}, log="l", message_log=log)
    assert a.type == "AgentActionMessageLog"
    assert a.messages is log


def test_tool_agent_action_keeps_parent_type() -> None:
    a = ToolAgentAction("s", {"q": 1}, "l", message_log=[AIMessage("x")], tool_call_id="c1")
    assert a.type == "AgentActionMessageLog"
    assert a.tool_call_id == "c1"
    assert repr(a) == (
        "ToolAgentAction(tool='s', tool_input={'q': 1}, log='l', message_log=[AIMessage("
        "content='x', additional_kwargs={}, response_metadata={}, tool_calls=[], "
        "invalid_tool_calls=[])], tool_call_id='c1')"
    )


def test_agent_finish() -> None:
    f = AgentFinish({"output": "done"}, "Final Answer: done")
    assert f.type == "AgentFinish"
    assert f.messages == [AIMessage("Final Answer: done")]
    assert f == AgentFinish(return_values={"output": "done"}, log="Final Answer: done")
    assert repr(f) == "AgentFinish(return_values={'output': 'done'}, log='Final Answer: done')"


def test_step_messages_for_plain_action() -> None:
    action = AgentAction("s", "i", "l")
    assert AgentStep(action, "obs").messages == [HumanMessage("obs")]
    assert AgentStep(action=action, observation={"é": [1]}).messages == [HumanMessage('{"é": [1]}')]
    assert AgentStep(action, {1, 2}).messages == [HumanMessage("{1, 2}")]


def test_step_messages_for_message_log_action() -> None:
    action = ToolAgentAction("lookup", "i", "l", [AIMessage("x")], "c")
    assert AgentStep(action, 42).messages == [FunctionMessage("42", name="lookup")]
    assert AgentStep(action, "text").messages == [FunctionMessage("text", name="lookup")]


def test_step_equality_and_repr() -> None:
    step = AgentStep(AgentAction("a", "b", "c"), "o")
    assert step == AgentStep(AgentAction("a", "b", "c"), "o")
    assert step != AgentStep(AgentAction("a", "b", "c"), "p")
    assert repr(step) == (
        "AgentStep(action=AgentAction(tool='a', tool_input='b', log='c'), observation='o')"
    )
