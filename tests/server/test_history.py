"""`actloop runs show` and `GET /threads/{id}/state` tell the same history for the same journal
(both read it through `actloop.checkpoint.read_thread`), and name the same damaged entry."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish, BaseSingleActionAgent, CheckpointError
from actloop.checkpoint import SqliteCheckpointer, read_thread
from actloop.cli._runs import runs_show
from actloop.server import create_app
from actloop.tools import tool
from support.serve import Serve


class TwoSends(BaseSingleActionAgent):
    """Sends "one", then "two", then finishes with the observations."""

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        if len(intermediate_steps) < 2:
            text = ["one", "two"][len(intermediate_steps)]
            return AgentAction("send", text, f"send {text}")
        return AgentFinish({"output": " | ".join(o for _, o in intermediate_steps)}, "")


@tool(requires_approval=True)
def send(text: str) -> str:
    """Send a message (needs a person's approval)."""
    return f"send({text})"


def approval_executor(store: Any) -> AgentExecutor:
    return AgentExecutor(agent=TwoSends(), tools=[send], checkpointer=store)


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def test_runs_show_and_the_server_tell_the_same_history(serve: Serve, tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = SqliteCheckpointer(path)
    executor = approval_executor(store)
    executor.invoke({"input": "q"}, cfg("T"))
    executor.resume("T", edit={"0-0": "uno"})
    url = serve(create_app(executor))
    shown = runs_show(path, "T")
    state = httpx.get(f"{url}/threads/T/state").json()
    assert shown.code == 0
    assert shown.text.splitlines()[4:7] == [
        "steps:   2",
        "  [0-0] send(uno) -> send(uno)",
        "  [1-0] send(two) -> (not finished)",
    ]
    said = [
        (
            m["type"],
            [(c["id"], c["name"], c["args"]) for c in m.get("tool_calls", [])],
            m["content"],
        )
        for m in state["values"]["messages"]
    ]
    assert said == [
        ("human", [], "q"),
        ("ai", [("0-0", "send", {"__arg1": "uno"})], ""),
        ("tool", [], "send(uno)"),
        ("ai", [("1-0", "send", {"__arg1": "two"})], ""),
    ]
    [waiting] = state["interrupts"]
    assert [(r["id"], r["args"]) for r in waiting["value"]["action_requests"]] == [("1-0", "two")]
    with sqlite3.connect(path) as conn:  # damage the observation of the first call
        conn.execute("UPDATE entries SET data='[1, 2' WHERE thread_id='T' AND kind='obs'")
    damaged = runs_show(path, "T")
    reason = (
        "journal entry 2 of thread 'T' is damaged (Cannot load: not valid JSON "
        "(Expecting ',' delimiter: line 1 column 6 (char 5)))"
    )
    assert (damaged.code, damaged.text) == (1, f"error: {reason}")
    answer = httpx.get(f"{url}/threads/T/state")
    assert (answer.status_code, answer.json()) == (500, {"error": reason})
    with pytest.raises(CheckpointError) as caught:
        read_thread(store, "T")
    assert str(caught.value) == reason
