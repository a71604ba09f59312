"""Closing a sync `stream()` early (a `break`) stops the run, in LangChain 1.x and in actloop.

LangGraph runs the graph inside the generator, so a closed stream runs nothing more. actloop runs
the agent on a worker thread (chunks arrive as they happen); closing the stream halts it: no model
call or tool starts after. A middleware holds actloop's worker inside the second model call until
the stream is closed, so the run is, deterministically, mid-step when the reader leaves.
"""

from __future__ import annotations

import threading
from typing import Any

import langchain.agents.middleware as lc_middleware
import pytest
from _both import agents, al_model, al_tools_of, human, reply

import actloop.agents.middleware as al_middleware
from actloop.agents import create_agent
from actloop.checkpoint import SqliteCheckpointer

REPLIES = [reply("", ("record", {"x": f"x{i}"}, f"c{i}"), id=f"r{i}") for i in range(4)]
REPLIES.append(reply("done", id="r4"))
HOLD = "hold_second_call.before_model"
"""The node of `Scenario.hold`'s hook: each step's first update."""


class Scenario:
    """Tool calls recorded; the second model call waits (in `before_model`) for `release`."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.models = 0
        self.release = threading.Event()

    def record(self, x: str) -> str:
        """Record x."""
        self.ran.append(x)
        return f"saw {x}"

    def hold(self, lib: Any) -> Any:
        @lib.before_model
        def hold_second_call(state: Any, runtime: Any) -> Any:
            self.models += 1
            if self.models == 2:
                assert self.release.wait(10), "the test never released the model call"
            return None

        return hold_second_call


def stream_until_first_tool(
    agent: Any, scenario: Scenario, message: Any, config: Any = None
) -> list[Any]:
    """The chunks up to the first tool's update; then the stream is closed and the held model
    call released."""
    chunks: list[Any] = []
    before = set(threading.enumerate())
    stream = agent.stream({"messages": [message]}, config)
    for chunk in stream:
        chunks.append(chunk)
        if "tools" in chunk:
            break
    stream.close()
    scenario.release.set()
    for thread in set(threading.enumerate()) - before:  # the run's own (not the idle pools')
        if "worker" not in thread.name and "ThreadPoolExecutor" not in thread.name:
            thread.join(10)
            assert not thread.is_alive(), thread
    return chunks


def test_a_closed_stream_starts_no_tool_after_in_both_libraries() -> None:
    lc_side, al_side = Scenario(), Scenario()
    lc, _ = agents(REPLIES, [lc_side.record], lc_middleware=[lc_side.hold(lc_middleware)])
    _, al = agents(REPLIES, [al_side.record], al_middleware=[al_side.hold(al_middleware)])
    lc_message, al_message = human("go")
    lc_chunks = stream_until_first_tool(lc, lc_side, lc_message)
    al_chunks = stream_until_first_tool(al, al_side, al_message)
    step = [[HOLD], ["model"], ["tools"]]
    assert [list(c) for c in lc_chunks] == [list(c) for c in al_chunks] == step
    assert lc_side.ran == al_side.ran == ["x0"]
    # LangGraph never starts the second model call; actloop's worker was inside it (held there)
    # when the stream closed: the call finishes, and the tool it asks for does not start.
    assert (lc_side.models, al_side.models) == (1, 2)


def test_without_closing_the_stream_every_tool_runs() -> None:
    side = Scenario()
    side.release.set()
    _, al = agents(REPLIES, [side.record], al_middleware=[side.hold(al_middleware)])
    chunks = list(al.stream({"messages": [human("go")[1]]}))
    assert [list(c) for c in chunks] == [[HOLD], ["model"], ["tools"]] * 4 + [[HOLD], ["model"]]
    assert side.ran == ["x0", "x1", "x2", "x3"]


@pytest.mark.parametrize("resume", ["invoke", "stream"])
def test_a_closed_durable_stream_is_resumable(tmp_path: Any, resume: str) -> None:
    """With a checkpointer the halted turn stays saved; `None` as input goes on with it, and the
    tool that was never started runs then, once."""
    side = Scenario()
    store = SqliteCheckpointer(tmp_path / "runs.db")
    al = create_agent(al_model(REPLIES), al_tools_of([side.record]),
                      middleware=[side.hold(al_middleware)], checkpointer=store)  # fmt: skip
    config = {"configurable": {"thread_id": "T"}}
    stream_until_first_tool(al, side, human("go")[1], config)
    assert side.ran == ["x0"]
    [record] = store.list_runs()
    assert (record.thread_id, record.status) == ("T", "failed")
    if resume == "invoke":
        out = al.invoke(None, config)
    else:
        *_, last = al.stream(None, config, stream_mode="values")
        out = last
    assert side.ran == ["x0", "x1", "x2", "x3"]
    assert out["messages"][-1].content == "done"
    assert [m.type for m in out["messages"]] == ["human"] + ["ai", "tool"] * 4 + ["ai"]
    store.close()
