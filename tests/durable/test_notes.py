"""Call notes: a tool call of a durable run journals a note mid-call and gets it back on resume."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from actloop import AgentExecutor, Tool
from actloop.checkpoint import BaseCheckpointer
from actloop.tools import call_note
from support.durable import Stores

from .scenario import TwoCalls


class Job:
    """A tool that starts a 'remote job' once, notes its ticket, and dies the first time it
    runs `one` (after the note); a resumed call follows the noted ticket instead."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        self.started: list[str] = []
        self.died = False

    def __call__(self, text: str) -> str:
        note = call_note()
        assert note is not None
        self.seen.append((text, note.saved))
        if note.saved is None:
            self.started.append(text)
            note.record(f"ticket-{text}")
        if text == "one" and not self.died:
            self.died = True
            raise RuntimeError("the process died here")
        return f"{text} via {note.saved}"


def executor(store: BaseCheckpointer, job: Job) -> AgentExecutor:
    tool = Tool(name="job", func=job, description="job")
    tool.idempotent = False  # a "start" entry is written: the note lifts the unsafe-repeat stop
    return AgentExecutor(agent=TwoCalls("job"), tools=[tool], checkpointer=store)


def notes(store: BaseCheckpointer, thread: str) -> list[tuple[int | None, int | None, str | None]]:
    return [(e.act, e.call, e.data) for e in store.entries(thread) if e.kind == "note"]


def test_a_resumed_call_gets_its_note_back(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    job = Job()
    ex = executor(store, job)
    with pytest.raises(RuntimeError, match="the process died here"):
        ex.invoke({"input": "go"}, {"configurable": {"thread_id": "T"}})
    assert notes(store, "T") == [(0, 0, "ticket-one")]
    kinds = [e.kind for e in store.entries("T")]
    assert kinds == ["plan", "start", "note"]  # the note went with the step's plan
    result = ex.resume("T")
    assert result["output"] == "one via ticket-one two via ticket-two"
    assert job.started == ["one", "two"]  # the job of call one was not started again
    assert job.seen == [("one", None), ("one", "ticket-one"), ("two", None)]
    assert notes(store, "T") == [(0, 0, "ticket-one"), (1, 0, "ticket-two")]


def test_async_runs_note_and_resume_too(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    job = Job()
    ex = executor(store, job)

    async def run() -> Any:
        with pytest.raises(RuntimeError, match="the process died here"):
            await ex.ainvoke({"input": "go"}, {"configurable": {"thread_id": "A"}})
        return await ex.aresume("A")

    result = asyncio.run(run())
    assert result["output"] == "one via ticket-one two via ticket-two"
    assert job.started == ["one", "two"]
    assert job.seen == [("one", None), ("one", "ticket-one"), ("two", None)]


def test_no_note_outside_a_durable_run() -> None:
    seen: list[object] = []

    def look(text: str) -> str:
        seen.append(call_note())
        return text

    tool = Tool(name="job", func=look, description="job")
    AgentExecutor(agent=TwoCalls("job"), tools=[tool]).invoke({"input": "go"})
    assert seen == [None, None]
    assert call_note() is None
