"""Durable runs in one process: the journal, resume after a failure, replay, streaming."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from actloop import (
    AgentAction,
    AgentExecutor,
    AgentFinish,
    CheckpointError,
    OutputParserException,
    RunnableConfig,
    Tool,
    tool,
)
from actloop.checkpoint import BaseCheckpointer, JournalEntry, RunRecord
from actloop.executor._journal import fingerprint
from actloop.executor._run import loop_settings
from actloop.testing import ScriptedAgent
from support.durable import Stores

from .scenario import build, side_effect_tool


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def planned_at(agent: ScriptedAgent) -> list[int]:
    """How many steps the agent was shown on each plan call."""
    return [len(call.intermediate_steps) for call in agent.calls]


class Flaky:
    """A tool function that raises the first time it sees `fail_on`, and logs every call."""

    def __init__(self, fail_on: str) -> None:
        self.fail_on = fail_on
        self.calls: list[str] = []

    def __call__(self, text: str) -> str:
        self.calls.append(text)
        if text == self.fail_on and self.calls.count(text) == 1:
            raise RuntimeError(f"flaky {text}")
        return f"did {text}"


def flaky_executor(store: BaseCheckpointer, flaky: Flaky, agent: ScriptedAgent) -> AgentExecutor:
    tool = Tool(name="work", func=flaky, description="work")
    return AgentExecutor(
        agent=agent, tools=[tool], checkpointer=store, return_intermediate_steps=True
    )


def three_steps() -> list[Any]:
    return [
        AgentAction("work", "one", "l1"),
        AgentAction("work", "two", "l2"),
        AgentAction("work", "three", "l3"),
        AgentFinish({"output": "all done"}, "fin"),
    ]


def test_journal_holds_plans_and_observations_in_order(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    executor = build(tmp_path / "fx.log", store)
    result = executor.invoke({"input": "go"}, cfg("T"))
    entries = store.entries("T")
    assert [(e.seq, e.kind, e.act, e.call) for e in entries[:5]] == [
        (0, "plan", None, None),
        (1, "obs", 0, 0),
        (2, "plan", None, None),
        (3, "obs", 1, 0),
        (4, "plan", None, None),
    ]
    # step 2 has two calls, run concurrently: their observations land in either order
    assert {(e.kind, e.act, e.call) for e in entries[5:7]} == {("obs", 2, 0), ("obs", 2, 1)}
    assert len(entries) == 12 + 16  # 12 plans (the last one finishes), 16 observations
    assert entries[1].data == '"add(a0)"'
    assert all(a.elapsed <= b.elapsed for a, b in itertools.pairwise(entries))
    record = store.get("T")
    assert record is not None
    assert (record.status, record.inputs, record.owner) == ("finished", '{"input": "go"}', None)
    assert record.output == f'{{"output": "{result["output"]}"}}'


def test_resume_after_a_failure_does_not_replan_or_rerun(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    flaky, agent = Flaky("two"), ScriptedAgent(three_steps())
    executor = flaky_executor(store, flaky, agent)
    with pytest.raises(RuntimeError, match="flaky two"):
        executor.invoke({"input": "q"}, cfg("T"))
    record = store.get("T")
    assert record is not None
    assert (record.status, record.error) == ("failed", "RuntimeError: flaky two")
    with pytest.raises(CheckpointError, match=r"resume it with executor.resume\('T'\)"):
        executor.invoke({"input": "q"}, cfg("T"))
    result = executor.resume("T")
    assert result == {
        "input": "q",
        "output": "all done",
        "intermediate_steps": [
            (AgentAction("work", "one", "l1"), "did one"),
            (AgentAction("work", "two", "l2"), "did two"),
            (AgentAction("work", "three", "l3"), "did three"),
        ],
    }
    assert flaky.calls == ["one", "two", "two", "three"]  # "one" is never run again
    # no plan asked twice: the saved plan for "two" is reused
    assert planned_at(agent) == [0, 1, 2, 3]
    with pytest.raises(CheckpointError, match="already finished; there is nothing to resume"):
        executor.resume("T")


async def test_async_resume_after_a_failure(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    flaky, agent = Flaky("three"), ScriptedAgent(three_steps())
    executor = flaky_executor(store, flaky, agent)
    with pytest.raises(RuntimeError):
        await executor.ainvoke({"input": "q"}, cfg("A"))
    result = await executor.aresume("A")
    assert result["output"] == "all done"
    assert [obs for _, obs in result["intermediate_steps"]] == ["did one", "did two", "did three"]
    assert flaky.calls == ["one", "two", "three", "three"]
    assert planned_at(agent) == [0, 1, 2, 3]


def test_parse_errors_are_journaled_and_replayed(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    error = OutputParserException("bad", observation="fix it", llm_output="raw", send_to_llm=True)
    script = [error, AgentAction("work", "two", "l2"), AgentAction("work", "three", "l3")]
    agent = ScriptedAgent([*script, AgentFinish({"output": "ok"}, "")])
    flaky = Flaky("three")
    tool = Tool(name="work", func=flaky, description="work")
    executor = AgentExecutor(
        agent=agent, tools=[tool], checkpointer=store, handle_parsing_errors=True
    )
    with pytest.raises(RuntimeError):
        executor.invoke({"input": "q"}, cfg("P"))
    assert executor.resume("P") == {"input": "q", "output": "ok"}
    assert planned_at(agent) == [0, 1, 2, 3]


def test_unhandled_parse_error_is_not_saved_so_resume_asks_again(
    stores: Stores, tmp_path: Path
) -> None:
    store = stores.open(tmp_path)
    second_try = AgentFinish({"output": "second try"}, "")
    agent = ScriptedAgent([OutputParserException("bad"), second_try])
    executor = AgentExecutor(agent=agent, tools=[], checkpointer=store)
    with pytest.raises(ValueError, match="An output parsing error occurred"):
        executor.invoke({"input": "q"}, cfg("P"))
    assert store.entries("P") == []
    assert executor.resume("P") == {"input": "q", "output": "second try"}


def test_elapsed_time_carries_over_a_resume(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    flaky = Flaky("three")
    executor = flaky_executor(store, flaky, ScriptedAgent(three_steps()))
    executor.max_execution_time = 100.0
    with pytest.raises(RuntimeError):
        executor.invoke({"input": "q"}, cfg("E"))
    before = store.entries("E")
    executor.resume("E")
    after = store.entries("E")[len(before) :]
    assert after and min(e.elapsed for e in after) >= max(e.elapsed for e in before)


def test_time_limit_reached_before_a_crash_still_stops_after_resume(
    stores: Stores, tmp_path: Path
) -> None:
    store = stores.open(tmp_path)
    executor = flaky_executor(store, Flaky("none"), ScriptedAgent(three_steps()))
    executor.max_execution_time = 5.0
    executor.invoke({"input": "q"}, cfg("L"))
    # a journal whose clock passed the limit after step one: replay must stop exactly there
    entries = store.entries("L")[:2]
    late = [JournalEntry(*e[:4], 6.0, e.data) if e.kind == "obs" else e for e in entries]
    store.delete("L")
    record_inputs = '{"input": "q"}'

    settings = loop_settings(executor)
    store.create(RunRecord("L", "running", record_inputs, fingerprint(settings)))
    for entry in late:
        store.append("L", entry)
    result = executor.resume("L")
    assert result == {
        "input": "q",
        "output": "Agent stopped due to iteration limit or time limit.",
        "intermediate_steps": [(AgentAction("work", "one", "l1"), "did one")],
    }


def test_resume_with_other_tools_or_limits_is_refused(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    executor = flaky_executor(store, Flaky("two"), ScriptedAgent(three_steps()))
    with pytest.raises(RuntimeError):
        executor.invoke({"input": "q"}, cfg("F"))
    executor.max_iterations = 3
    with pytest.raises(CheckpointError, match="max_iterations=15; this one has 3"):
        executor.resume("F")


def test_an_observation_that_cannot_be_saved_fails_the_run_clearly(
    stores: Stores, tmp_path: Path
) -> None:
    store = stores.open(tmp_path)
    tool = Tool(name="work", func=lambda q: object(), description="returns an object")
    agent = ScriptedAgent([AgentAction("work", "x", ""), AgentFinish({"output": "ok"}, "")])
    executor = AgentExecutor(agent=agent, tools=[tool], checkpointer=store)
    with pytest.raises(CheckpointError, match="the observation of tool 'work' cannot be saved"):
        executor.invoke({"input": "q"}, cfg("O"))


def test_no_thread_id_means_no_journal(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    executor = build(tmp_path / "fx.log", store)
    assert executor.invoke({"input": "go"})["output"].startswith("go: add(a0)")
    if stores.kind == "sqlite":
        assert not Path(stores.target(tmp_path)).exists()
    assert store.list_runs() == []


def test_stream_with_a_checkpointer_matches_plain_stream_and_can_resume(
    stores: Stores, tmp_path: Path
) -> None:
    store = stores.open(tmp_path)
    plain = list(build(tmp_path / "a.log").stream({"input": "go"}))
    durable = list(build(tmp_path / "b.log", store).stream({"input": "go"}, cfg("S")))
    assert durable == plain
    # a consumer that stops early leaves an unfinished run that resumes to the same end
    executor = build(tmp_path / "c.log", store)
    chunks = executor.stream({"input": "go"}, cfg("S2"))
    for _ in range(5):
        next(chunks)
    chunks.close()  # type: ignore[attr-defined]
    record = store.get("S2")
    assert record is not None and (record.status, record.owner) == ("running", None)
    resumed = executor.resume("S2")
    assert resumed["output"] == plain[-1]["output"]
    steps = [(s.action, s.observation) for c in plain if "steps" in c for s in c["steps"]]
    assert resumed["intermediate_steps"] == steps


async def test_astream_with_a_checkpointer(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    plain = [c async for c in build(tmp_path / "a.log").astream({"input": "go"})]
    executor = build(tmp_path / "b.log", store)
    durable = [c async for c in executor.astream({"input": "go"}, cfg("AS"))]
    assert durable == plain
    record = store.get("AS")
    assert record is not None and record.status == "finished"


def test_tools_see_the_thread_id_but_not_resume_internals(stores: Stores, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    @tool
    def peek(text: str, config: RunnableConfig) -> str:
        """Record the config."""
        seen.append(dict(config.get("configurable", {})))
        return "ok"

    store = stores.open(tmp_path)
    peeks = [AgentAction("peek", {"text": "x"}, ""), AgentAction("peek", {"text": "y"}, "")]
    finish = AgentFinish({"output": "ok"}, "")
    agent = ScriptedAgent([peeks[0], RuntimeError("model down"), peeks[1], finish])
    executor = AgentExecutor(agent=agent, tools=[peek], checkpointer=store)
    with pytest.raises(RuntimeError):
        executor.invoke({"input": "q"}, cfg("C"))
    executor.resume("C")
    assert seen == [{"thread_id": "C"}, {"thread_id": "C"}]


def test_side_effect_tool_helper_logs(tmp_path: Path) -> None:
    tool = side_effect_tool("x", tmp_path / "l.log", delay=0.0)
    assert tool.run("a") == "x(a)"
    assert (tmp_path / "l.log").read_text() == "x:a\n"
