"""The journal's public read side (`read_thread`: typed records of every call) and the `Resume`
input (a run that goes on with a saved thread says so in its input, not in its config)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from actloop import AgentExecutor, CheckpointError, ConfigurationError, Resume
from actloop.checkpoint import CallRecord, Decision, SqliteCheckpointer, aread_thread, read_thread
from support.durable import Stores

from .scenario import side_effect_tool
from .test_approval import REJECTED, TwoSends


def approval_executor(store: Any, log: Path) -> AgentExecutor:
    send = side_effect_tool("send", log, delay=0.0, requires_approval=True)
    return AgentExecutor(agent=TwoSends(), tools=[send], checkpointer=store)


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def test_read_thread_gives_every_call_with_its_input_result_and_decision(
    stores: Stores, tmp_path: Path
) -> None:
    store = stores.open(tmp_path)
    executor = approval_executor(store, tmp_path / "effects.log")
    assert executor.invoke({"input": "q"}, cfg("T"))["status"] == "paused"
    assert executor.invoke(Resume.of(edit={"0-0": "uno"}), cfg("T"))["status"] == "paused"
    result = executor.invoke(Resume.of(reject={"1-0": "too late"}), cfg("T"))
    assert result["output"] == f"send(uno) | {REJECTED} Reason: too late"

    found = read_thread(store, "T")
    assert found is not None
    decisions = [e.seq for e in store.entries("T") if e.kind == "decision"]
    assert found.calls == [
        CallRecord(
            "0-0", "send", "uno", "send(uno)", True, Decision("edit", None, "uno", decisions[0])
        ),
        CallRecord(
            "1-0",
            "send",
            "two",
            f"{REJECTED} Reason: too late",
            True,
            Decision("reject", "too late", None, decisions[1]),
        ),
    ]
    assert (found.thread_id, found.status, found.inputs) == ("T", "finished", {"input": "q"})
    assert (found.pending, found.output) == ([], {"output": result["output"]})
    assert asyncio.run(aread_thread(store, "T")) == found
    assert read_thread(store, "nope") is None


def test_a_paused_thread_lists_its_pending_call_unfinished(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    approval_executor(store, tmp_path / "effects.log").invoke({"input": "q"}, cfg("T"))
    found = read_thread(store, "T")
    assert found is not None
    assert found.calls == [CallRecord("0-0", "send", "one", None, False, None)]
    assert found.pending == [{"id": "0-0", "tool": "send", "tool_input": "one", "log": "send one"}]


def test_a_resume_input_is_the_same_as_resume(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    executor = approval_executor(store, tmp_path / "effects.log")
    executor.invoke({"input": "q"}, cfg("A"))
    executor.invoke({"input": "q"}, cfg("B"))
    by_input = executor.invoke(Resume(approve=True), cfg("A"))
    by_method = executor.resume("B", approve=True)
    pending = [{"id": "1-0", "tool": "send", "tool_input": "two", "log": "send two"}]
    assert by_input == {
        "input": "q",
        "pending_approvals": pending,
        "thread_id": "A",
        "status": "paused",
    }
    assert by_method == {**by_input, "thread_id": "B"}
    chunks = list(executor.stream(Resume(approve=True), cfg("A")))
    assert chunks[-1]["output"] == "send(one) | send(two)"
    assert asyncio.run(executor.ainvoke(Resume(approve=True), cfg("B")))["output"] == (
        "send(one) | send(two)"
    )


def test_a_resume_input_needs_a_store_and_a_thread(tmp_path: Path) -> None:
    store = SqliteCheckpointer(tmp_path / "runs.db")
    executor = approval_executor(store, tmp_path / "effects.log")
    with pytest.raises(ConfigurationError, match=r"config=\{'configurable': \{'thread_id'"):
        executor.invoke(Resume(approve=True))
    with pytest.raises(CheckpointError, match="no run is saved under thread 'nope'"):
        executor.invoke(Resume(approve=True), cfg("nope"))
    executor.checkpointer = None
    with pytest.raises(ConfigurationError, match=r"resume\(\) needs a checkpointer"):
        executor.invoke(Resume(), cfg("T"))
