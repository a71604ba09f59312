"""The tool-calling agent's incremental scratchpad gives exactly `format_to_tool_messages`."""

from __future__ import annotations

from typing import Any

from actloop import AIMessage, ToolAgentAction
from actloop.agents import AgentAction
from actloop.format_scratchpad import IncrementalToolMessages, format_to_tool_messages


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
