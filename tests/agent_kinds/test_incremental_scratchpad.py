"""The tool-calling agent's incremental scratchpad gives exactly `format_to_tool_messages`."""

from __future__ import annotations

import json
from typing import Any

from actloop import AIMessage, ToolAgentAction, ToolMessage
from actloop.agents import AgentAction
from actloop.format_scratchpad import IncrementalToolMessages, format_to_tool_messages
from actloop.messages import ToolCall


def step(i: int, call_id: str | None = None) -> tuple[Any, Any]:
    cid = call_id or f"c{i}"
    message = AIMessage("", tool_calls=[{"name": "t", "args": {"i": i}, "id": cid}])
    action = ToolAgentAction(
        tool="t", tool_input={"i": i}, log=f"log {i}", message_log=[message], tool_call_id=cid
    )
    return (action, {"result": i} if i % 2 else f"obs {i}")


def test_growing_run_matches_the_full_formatter_at_every_step() -> None:
    formatter = IncrementalToolMessages()
    steps: list[tuple[Any, Any]] = []
    for i in range(12):
        steps.append(step(i) if i != 5 else (AgentAction("_Exception", "bad", "oops"), "bad"))
        assert formatter(steps) == format_to_tool_messages(steps)


def test_shared_message_logs_are_deduplicated_like_the_full_formatter() -> None:
    shared = AIMessage(
        "", tool_calls=[{"name": "t", "args": {}, "id": "a"}, {"name": "t", "args": {}, "id": "b"}]
    )
    actions = [
        ToolAgentAction(tool="t", tool_input={}, log="", message_log=[shared], tool_call_id=cid)
        for cid in ("a", "b")
    ]
    steps = [(actions[0], "one"), (actions[1], "two")]
    formatter = IncrementalToolMessages()
    assert formatter(steps[:1]) == format_to_tool_messages(steps[:1])
    assert formatter(steps) == format_to_tool_messages(steps)
    assert len(formatter(steps)) == 3


def test_another_run_or_trimmed_steps_start_afresh() -> None:
    formatter = IncrementalToolMessages()
    run_a = [step(i) for i in range(4)]
    run_b = [step(i, f"b{i}") for i in range(3)]
    assert formatter(run_a) == format_to_tool_messages(run_a)
    assert formatter(run_b) == format_to_tool_messages(run_b)
    assert formatter(run_a[-2:]) == format_to_tool_messages(run_a[-2:])
    result = formatter(run_a)
    result.append(AIMessage("caller's own"))
    assert formatter(run_a) == format_to_tool_messages(run_a)


def langchain_format(steps: list[tuple[Any, Any]]) -> list[Any]:
    """langchain-classic's `format_to_tool_messages`, literally: `new not in messages`."""
    messages: list[Any] = []
    for action, observation in steps:
        if isinstance(action, ToolAgentAction):
            text = observation if isinstance(observation, str) else json.dumps(observation)
            tool = ToolMessage(text, tool_call_id=action.tool_call_id)
            tool.additional_kwargs = {"name": action.tool}
            new = [*action.message_log, tool]
            messages.extend([m for m in new if m not in messages])
        else:
            messages.append(AIMessage(action.log))
    return messages


def test_messages_sharing_a_bucket_are_told_apart_by_equality() -> None:
    def act(cid: str, *log: AIMessage) -> ToolAgentAction:
        return ToolAgentAction(
            tool="t", tool_input={}, log="", message_log=list(log), tool_call_id=cid
        )

    calls: list[ToolCall] = [{"name": "t", "args": {}, "id": "a"}]
    steps: list[tuple[Any, Any]] = [
        (act("a", AIMessage("one", tool_calls=calls)), "x"),
        (act("a", AIMessage("two", tool_calls=calls)), "y"),  # same call id, other content
        (act("a", AIMessage("two", tool_calls=calls)), "y"),  # equal to the second: dropped
        (act("a", AIMessage("a")), "x"),  # content equal to a call id, tool message seen
        (AgentAction("p", "", "a"), "z"),  # plain: added even though equal to the one before
        (act("b", AIMessage("a"), AIMessage("one", tool_calls=calls)), {"k": 1}),
    ]
    expected = langchain_format(steps)
    assert len(expected) == 7
    assert format_to_tool_messages(steps) == expected
    formatter = IncrementalToolMessages()
    for i in range(1, len(steps) + 1):
        assert formatter(steps[:i]) == langchain_format(steps[:i])
