"""A durable run keeps an expiring lease alive while it works, and every write carries it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish, CheckpointError, Tool
from actloop.checkpoint import BaseCheckpointer, LeaseLostError, Owner
from actloop.testing import ScriptedAgent
from support.durable import Stores

TTL = 1.0


def slow_run(store: BaseCheckpointer, work: Tool) -> AgentExecutor:
    agent = ScriptedAgent([AgentAction("work", "x", "l"), AgentFinish({"output": "ok"}, "")])
    return AgentExecutor(agent=agent, tools=[work], checkpointer=store)


def test_a_run_renews_its_lease_while_a_tool_outlasts_the_ttl(
    stores: Stores, tmp_path: Path
) -> None:
    store = stores.open(tmp_path, lease_ttl=TTL)
    contender = stores.open(tmp_path, lease_ttl=TTL)
    refused: list[str] = []

    def work(_: str) -> str:
        time.sleep(TTL * 2.5)  # the lease would have expired twice without renewal
        try:
            contender.acquire("T", Owner.current())
        except CheckpointError as exc:
            refused.append(str(exc).split(";")[0])
        return "worked"

    result = slow_run(store, Tool(name="work", func=work, description="w")).invoke(
        {"input": "q"}, {"configurable": {"thread_id": "T"}}
    )
    assert result == {"input": "q", "output": "ok"}
    assert len(refused) == 1 and "is being run by process" in refused[0]
    assert [e.epoch for e in store.entries("T")] == [1, 1, 1]
    assert store.get("T").status == "finished"  # type: ignore[union-attr]


def test_a_run_whose_lease_was_taken_over_writes_nothing_more(
    stores: Stores, tmp_path: Path
) -> None:
    store = stores.open(tmp_path, lease_ttl=0.0)  # leases expire at once
    epochs: list[int] = []

    def work(_: str) -> str:
        # another worker takes the thread over while this one is still in its tool call
        other = stores.open(tmp_path)
        epochs.append(other.acquire("T", Owner(1, "elsewhere", "", "t"), ttl=60).epoch)
        return "worked"

    executor = slow_run(store, Tool(name="work", func=work, description="w"))
    with pytest.raises(LeaseLostError) as caught:
        executor.invoke({"input": "q"}, {"configurable": {"thread_id": "T"}})
    assert epochs == [2]
    assert caught.value.intermediate_steps == []  # type: ignore[attr-defined]
    # the step's plan is written with its call's result, in one transaction: both were refused
    assert [(e.kind, e.epoch) for e in store.entries("T")] == []
    assert store.get("T").status == "running"  # type: ignore[union-attr]
