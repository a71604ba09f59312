"""A store that stops answering mid-run ends the run at its deadline, and slows nothing else.

SQLite "freezes" when another connection holds the file's write lock; PostgreSQL when every server
process is stopped (SIGSTOP: connections stay open, nothing answers, the kernel still accepts
bytes). The tool freezes the store itself, between its work and the journal write of its result.
The run must end within its deadline plus 2 s with a `StoreTimeoutError` that says the store did
not answer in time, keep the step it finished, leave the event loop free on the async path, give
its lease back once the store answers, and resume to the uninterrupted result with no finished
call run twice.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish, BaseSingleActionAgent, Tool
from actloop.checkpoint import (
    BaseCheckpointer,
    PostgresCheckpointer,
    SqliteCheckpointer,
    StoreTimeoutError,
)
from support.postgres import PostgresServer
from support.waits import beside_a_ticker, released

DEADLINE = 3.0
WORDS = ["one", "two", "three"]


class ThreeSteps(BaseSingleActionAgent):
    """Calls `work` with one, two, three (decided from the steps alone), then finishes."""

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        n = len(intermediate_steps)
        if n < len(WORDS):
            return AgentAction("work", WORDS[n], f"call {WORDS[n]}")
        return AgentFinish({"output": " ".join(o for _, o in intermediate_steps)}, "done")


class Freezer:
    """A store for one test, and a way to make it stop answering (once)."""

    def __init__(self, kind: str, store: BaseCheckpointer) -> None:
        self.kind, self.store = kind, store
        self.frozen = False

    def freeze(self) -> None:
        raise NotImplementedError

    def thaw(self) -> None:
        raise NotImplementedError


class SqliteFreezer(Freezer):
    """Holds the file's write lock from another connection."""

    def __init__(self, path: Path) -> None:
        super().__init__("sqlite", SqliteCheckpointer(path))
        self.path = path
        self.lock: sqlite3.Connection | None = None

    def freeze(self) -> None:
        self.lock = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.lock.execute("BEGIN IMMEDIATE")
        self.frozen = True

    def thaw(self) -> None:
        if self.lock is not None:
            self.lock.execute("ROLLBACK")
            self.lock.close()
            self.lock = None


class PostgresFreezer(Freezer):
    """Stops the whole server (its own, so no other test waits on it)."""

    def __init__(self, server: PostgresServer) -> None:
        super().__init__("postgres", PostgresCheckpointer(server.create_database(), lease_ttl=None))
        self.server = server

    def freeze(self) -> None:
        self.server.freeze()
        self.frozen = True

    def thaw(self) -> None:
        self.server.thaw()


@pytest.fixture(params=["sqlite", "postgres"])
def freezer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Freezer]:
    if request.param == "sqlite":
        made: Freezer = SqliteFreezer(tmp_path / "runs.db")
    else:
        made = PostgresFreezer(request.getfixturevalue("frozen_server"))
    try:
        yield made
    finally:
        made.thaw()
        made.store.close()


def executor_of(freezer: Freezer, calls: list[str]) -> AgentExecutor:
    """Three steps of `work`; the call "two" freezes the store (the first time) and returns."""

    def work(text: str) -> str:
        calls.append(text)
        if text == "two" and not freezer.frozen:
            freezer.freeze()
        return f"did {text}"

    tool = Tool(name="work", func=work, description="works")
    return AgentExecutor(
        agent=ThreeSteps(), tools=[tool], checkpointer=freezer.store, max_execution_time=DEADLINE
    )


@pytest.mark.parametrize("path", ["sync", "async"])
def test_a_store_that_stops_answering_ends_the_run_at_its_deadline(
    freezer: Freezer, path: str
) -> None:
    calls: list[str] = []
    executor = executor_of(freezer, calls)
    config: Any = {"configurable": {"thread_id": "T"}}
    started = time.monotonic()
    if path == "sync":
        with pytest.raises(StoreTimeoutError) as caught:
            executor.invoke({"input": "q"}, config)
        error: BaseException | None = caught.value
    else:
        error, stall = asyncio.run(beside_a_ticker(executor.ainvoke({"input": "q"}, config)))
        assert stall < 0.5  # the loop kept turning while the store did not answer
    took = time.monotonic() - started
    assert isinstance(error, StoreTimeoutError)
    assert "did not answer in time" in str(error)
    assert DEADLINE - 0.2 <= took < DEADLINE + 2.0  # (SQLite waits in 100 ms steps, rounded down)
    assert error.intermediate_steps == [  # type: ignore[attr-defined]
        (AgentAction("work", "one", "call one"), "did one")
    ]
    assert calls == ["one", "two"]

    freezer.thaw()
    assert released(freezer.store, "T")  # given back once the store answers
    record = freezer.store.get("T")
    assert record is not None and record.status == "running"  # not marked: resumable
    entries = freezer.store.entries("T")
    two_saved = any(e.kind == "obs" and e.act == 1 for e in entries)

    result = executor.resume("T")
    assert result == {"input": "q", "output": "did one did two did three"}
    # A call whose result was saved never runs again; "two" runs again only if the store had
    # not saved its result when it stopped answering.
    assert calls == ["one", "two", "three"] if two_saved else ["one", "two", "two", "three"]
