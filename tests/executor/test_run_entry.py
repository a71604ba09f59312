"""A run's entry (`invoke`, `ainvoke`): its inputs and who hears of it.

A plain dict input without memory skips `start_inputs` and a run nothing listens to skips its
callback set-up (`callbacks.unheard`); these check that every other input and every kind of
listener still gets what it got before, on both paths."""

from __future__ import annotations

import asyncio
from collections import UserDict
from typing import Any

import pytest

from actloop import AgentAction, AgentExecutor
from actloop.callbacks import BaseCallbackHandler, collect_runs
from actloop.callbacks._manager import add_global_handler, remove_global_handler
from actloop.testing import ScriptedAgent
from support.executor import finish, make_tool


class Starts(BaseCallbackHandler):
    """Records the name and inputs of each chain run started."""

    def __init__(self) -> None:
        self.started: list[tuple[Any, Any]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:  # type: ignore[override]
        self.started.append((kw.get("name"), inputs))


def _executor(**kwargs: Any) -> tuple[AgentExecutor, ScriptedAgent]:
    agent = ScriptedAgent([AgentAction("echo", "x", "l1"), finish("done")], input_keys=["input"])
    tool = make_tool("echo", lambda text: f"echo {text}")
    return AgentExecutor(agent=agent, tools=[tool], **kwargs), agent


def _run(executor: AgentExecutor, given: Any, is_async: bool, **kwargs: Any) -> Any:
    if is_async:
        return asyncio.run(executor.ainvoke(given, **kwargs))
    return executor.invoke(given, **kwargs)


class Inputs(dict[str, Any]):
    """A dict subclass as input (not the plain-dict entry)."""


@pytest.mark.parametrize("is_async", [False, True])
@pytest.mark.parametrize(
    ("given", "inputs"),
    [
        ({"input": "q"}, {"input": "q"}),
        ({"input": "q", "output": "old"}, {"input": "q", "output": "old"}),
        (Inputs(input="q"), {"input": "q"}),
        ("q", {"input": "q"}),
        (UserDict({"input": "q"}), {"input": UserDict({"input": "q"})}),
    ],
    ids=["dict", "dict with an output key", "dict subclass", "bare value", "other mapping"],
)
def test_the_inputs_and_the_result(given: Any, inputs: dict[str, Any], is_async: bool) -> None:
    before = dict(given) if isinstance(given, dict) else None
    executor, agent = _executor()
    result = _run(executor, given, is_async)
    assert result == {**inputs, "output": "done"}
    assert type(result) is dict
    assert result is not given
    assert [call.inputs for call in agent.calls] == [inputs, inputs]
    if before is not None:
        assert given == before  # the caller's dict is never the run's


@pytest.mark.parametrize("is_async", [False, True])
def test_only_the_outputs_when_asked(is_async: bool) -> None:
    executor, _ = _executor()
    assert _run(executor, {"input": "q"}, is_async, return_only_outputs=True) == {"output": "done"}


@pytest.mark.parametrize("is_async", [False, True])
def test_a_context_collector_hears_the_run(is_async: bool) -> None:
    executor, _ = _executor()
    with collect_runs() as collector:
        _run(executor, {"input": "q"}, is_async)
    assert [(run.name, run.inputs) for run in collector.traced_runs] == [
        ("AgentExecutor", {"input": "q"})
    ]


@pytest.mark.parametrize("is_async", [False, True])
def test_a_global_handler_hears_the_run(is_async: bool) -> None:
    executor, _ = _executor()
    starts = Starts()
    add_global_handler(starts)
    try:
        _run(executor, {"input": "q"}, is_async)
    finally:
        remove_global_handler(starts)
    assert starts.started[0] == ("AgentExecutor", {"input": "q"})


@pytest.mark.parametrize("is_async", [False, True])
def test_the_executor_s_own_handlers_hear_the_run(is_async: bool) -> None:
    starts = Starts()
    executor, _ = _executor(callbacks=[starts])
    _run(executor, {"input": "q"}, is_async)
    assert starts.started == [("AgentExecutor", {"input": "q"})]


@pytest.mark.parametrize("is_async", [False, True])
def test_a_verbose_executor_prints_its_run(
    is_async: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    executor, _ = _executor(verbose=True)
    _run(executor, {"input": "q"}, is_async)
    out = capsys.readouterr().out
    assert "Entering new AgentExecutor chain..." in out
    assert "Finished chain." in out
