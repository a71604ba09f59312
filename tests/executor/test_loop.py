"""AgentExecutor loop behaviour (SPEC A3-A5), sync and async, with exact values."""

from __future__ import annotations

from typing import Any

import pytest

from actloop import (
    AgentAction,
    AgentExecutor,
    AgentFinish,
    OutputParserException,
    RunnableLambda,
)
from actloop.testing import ScriptedAgent, ScriptedMultiActionAgent
from support.executor import finish, make_tool, seen


async def run(executor: AgentExecutor, inputs: dict[str, Any], mode: str) -> dict[str, Any]:
    if mode == "sync":
        return executor.invoke(inputs)
    return await executor.ainvoke(inputs)


MODES = ["sync", "async"]


@pytest.mark.parametrize("mode", MODES)
async def test_plain_finish_returns_inputs_and_outputs(mode: str, search: Any) -> None:
    agent = ScriptedAgent([finish("done")])
    executor = AgentExecutor(agent=agent, tools=[search])
    assert await run(executor, {"input": "hi"}, mode) == {"input": "hi", "output": "done"}
    assert seen(agent) == [[]]
    assert [call.inputs for call in agent.calls] == [{"input": "hi"}]


@pytest.mark.parametrize("mode", MODES)
async def test_actions_then_finish_with_intermediate_steps(
    mode: str, search: Any, lookup: Any
) -> None:
    a1 = AgentAction("search", "cats", "I search")
    a2 = AgentAction("lookup", "dogs", "I look up")
    agent = ScriptedAgent([a1, a2, finish("answer")])
    executor = AgentExecutor(agent=agent, tools=[search, lookup], return_intermediate_steps=True)
    result = await run(executor, {"input": "q"}, mode)
    assert result == {
        "input": "q",
        "output": "answer",
        "intermediate_steps": [(a1, "results for cats"), (a2, "entry dogs")],
    }
    assert seen(agent) == [
        [],
        [(a1, "results for cats")],
        [(a1, "results for cats"), (a2, "entry dogs")],
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_observations_are_not_coerced_to_str(mode: str) -> None:
    data = make_tool("data", lambda q: {"n": 1})
    action = AgentAction("data", "x", "")
    executor = AgentExecutor(
        agent=ScriptedAgent([action, finish("ok")]), tools=[data], return_intermediate_steps=True
    )
    result = await run(executor, {"input": "q"}, mode)
    assert result["intermediate_steps"] == [(action, {"n": 1})]


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_tool_observation(mode: str, search: Any, lookup: Any) -> None:
    bad = AgentAction("nope", "x", "")
    executor = AgentExecutor(
        agent=ScriptedAgent([bad, finish("ok")]),
        tools=[search, lookup],
        return_intermediate_steps=True,
    )
    result = await run(executor, {"input": "q"}, mode)
    assert result["intermediate_steps"] == [
        (bad, "nope is not a valid tool, try one of [search, lookup].")
    ]


PARSE_CASES = [
    # (handle_parsing_errors, exception, expected observation, expected log)
    (
        True,
        OutputParserException("bad", observation="fix it", llm_output="raw", send_to_llm=True),
        "fix it",
        "raw",
    ),
    (True, OutputParserException("bad"), "Invalid or incomplete response", None),
    ("custom text", OutputParserException("bad"), "custom text", None),
    (
        lambda e: f"handled: {type(e).__name__}",
        OutputParserException("bad"),
        "handled: OutputParserException",
        None,
    ),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("handler", "exc", "observation", "log"), PARSE_CASES)
async def test_parse_errors_become_exception_steps(
    mode: str,
    handler: Any,
    exc: OutputParserException,
    observation: str,
    log: str | None,
    search: Any,
) -> None:
    agent = ScriptedAgent([exc, finish("ok")])
    executor = AgentExecutor(
        agent=agent, tools=[search], handle_parsing_errors=handler, return_intermediate_steps=True
    )
    result = await run(executor, {"input": "q"}, mode)
    expected_log = str(exc) if log is None else log
    action = AgentAction("_Exception", observation, expected_log)
    assert result["intermediate_steps"] == [(action, observation)]
    assert seen(agent)[1] == [(action, observation)]


@pytest.mark.parametrize("mode", MODES)
async def test_parse_error_without_handling_raises_value_error(mode: str, search: Any) -> None:
    executor = AgentExecutor(agent=ScriptedAgent([OutputParserException("bad")]), tools=[search])
    with pytest.raises(ValueError) as info:
        await run(executor, {"input": "q"}, mode)
    assert str(info.value) == (
        "An output parsing error occurred. In order to pass this error back to the agent and "
        "have it try again, pass `handle_parsing_errors=True` to the AgentExecutor. This is the "
        "error: bad\nFor troubleshooting, visit: "
        "https://docs.langchain.com/oss/python/langchain/errors/OUTPUT_PARSING_FAILURE "
    )
    assert not isinstance(info.value, OutputParserException)
    assert info.value.intermediate_steps == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
async def test_parse_error_step_counts_as_an_iteration(mode: str, search: Any) -> None:
    agent = ScriptedAgent([OutputParserException("bad"), OutputParserException("bad")])
    executor = AgentExecutor(
        agent=agent, tools=[search], handle_parsing_errors=True, max_iterations=2
    )
    result = await run(executor, {"input": "q"}, mode)
    assert result == {"input": "q", "output": "Agent stopped due to iteration limit or time limit."}
    assert len(seen(agent)) == 2


@pytest.mark.parametrize("mode", MODES)
async def test_return_direct_single_action_finishes(mode: str, search: Any) -> None:
    direct = make_tool("direct", lambda q: f"direct {q}", return_direct=True)
    action = AgentAction("direct", "x", "")
    agent = ScriptedAgent([action])
    executor = AgentExecutor(agent=agent, tools=[search, direct], return_intermediate_steps=True)
    result = await run(executor, {"input": "q"}, mode)
    assert result == {
        "input": "q",
        "output": "direct x",
        "intermediate_steps": [(action, "direct x")],
    }


@pytest.mark.parametrize("mode", MODES)
async def test_return_direct_ignored_for_two_actions(mode: str) -> None:
    d1 = make_tool("d1", lambda q: "one", return_direct=True)
    d2 = make_tool("d2", lambda q: "two", return_direct=True)
    actions = [AgentAction("d1", "x", ""), AgentAction("d2", "y", "")]
    agent = ScriptedMultiActionAgent([actions, AgentFinish({"output": "after"}, "")])
    executor = AgentExecutor(agent=agent, tools=[d1, d2], return_intermediate_steps=True)
    result = await run(executor, {"input": "q"}, mode)
    assert result["output"] == "after"
    assert result["intermediate_steps"] == [(actions[0], "one"), (actions[1], "two")]


@pytest.mark.parametrize("mode", MODES)
async def test_trim_intermediate_steps_int_and_callable(mode: str, search: Any) -> None:
    actions = [AgentAction("search", str(i), "") for i in range(3)]
    agent = ScriptedAgent([*actions, finish("ok")])
    executor = AgentExecutor(agent=agent, tools=[search], trim_intermediate_steps=2)
    await run(executor, {"input": "q"}, mode)
    assert [len(s) for s in seen(agent)] == [0, 1, 2, 2]
    assert seen(agent)[3][0][0] == actions[1]

    agent2 = ScriptedAgent([*actions, finish("ok")])
    executor2 = AgentExecutor(
        agent=agent2, tools=[search], trim_intermediate_steps=lambda steps: steps[:1]
    )
    await run(executor2, {"input": "q"}, mode)
    assert [len(s) for s in seen(agent2)] == [0, 1, 1, 1]


@pytest.mark.parametrize("mode", MODES)
async def test_max_iterations_zero_never_plans(mode: str, search: Any) -> None:
    agent = ScriptedAgent([])
    executor = AgentExecutor(agent=agent, tools=[search], max_iterations=0)
    result = await run(executor, {"input": "q"}, mode)
    assert result["output"] == "Agent stopped due to iteration limit or time limit."
    assert seen(agent) == []


@pytest.mark.parametrize("mode", MODES)
async def test_max_execution_time_zero_never_plans(mode: str, search: Any) -> None:
    agent = ScriptedAgent([])
    executor = AgentExecutor(agent=agent, tools=[search], max_execution_time=0.0)
    result = await run(executor, {"input": "q"}, mode)
    assert result["output"] == "Agent stopped due to iteration limit or time limit."


@pytest.mark.parametrize("mode", MODES)
async def test_iteration_limit_single_and_multi(mode: str, search: Any) -> None:
    step = AgentAction("search", "x", "")
    single = AgentExecutor(agent=ScriptedAgent([step] * 3), tools=[search], max_iterations=3)
    assert (await run(single, {"input": "q"}, mode))["output"] == (
        "Agent stopped due to iteration limit or time limit."
    )
    multi = AgentExecutor(
        agent=ScriptedMultiActionAgent([[step]] * 2), tools=[search], max_iterations=2
    )
    multi_result = await run(multi, {"input": "q"}, mode)
    assert multi_result["output"] == "Agent stopped due to max iterations."


@pytest.mark.parametrize("mode", MODES)
async def test_unsupported_early_stopping_method(mode: str, search: Any) -> None:
    executor = AgentExecutor(
        agent=ScriptedAgent([]), tools=[search], max_iterations=0, early_stopping_method="nope"
    )
    with pytest.raises(ValueError, match="Got unsupported early_stopping_method `nope`"):
        await run(executor, {"input": "q"}, mode)


@pytest.mark.parametrize("mode", MODES)
async def test_generate_early_stopping_plans_once_more(mode: str, search: Any) -> None:
    step = AgentAction("search", "x", "thinking")
    agent = ScriptedAgent([step, finish("best effort")])
    executor = AgentExecutor(
        agent=agent, tools=[search], max_iterations=1, early_stopping_method="generate"
    )
    assert (await run(executor, {"input": "q"}, mode))["output"] == "best effort"
    final_steps = seen(agent)[1]
    assert final_steps[0] == (step, "results for x")
    assert final_steps[1][0].tool == "_FinalAnswer"
    assert final_steps[1][0].log == (
        "\n\nI now need to return a final answer based on the previous steps:"
    )


@pytest.mark.parametrize("mode", MODES)
async def test_generate_uses_text_when_model_still_calls_a_tool(mode: str, search: Any) -> None:
    step = AgentAction("search", "x", "thinking")
    agent = ScriptedAgent([step, AgentAction("search", "y", "I still want to search")])
    executor = AgentExecutor(
        agent=agent, tools=[search], max_iterations=1, early_stopping_method="generate"
    )
    assert (await run(executor, {"input": "q"}, mode))["output"] == "I still want to search"


@pytest.mark.parametrize("mode", MODES)
async def test_agent_finish_return_values_are_not_mutated(mode: str, search: Any) -> None:
    done = finish("done")
    executor = AgentExecutor(
        agent=ScriptedAgent([done]), tools=[search], return_intermediate_steps=True
    )
    await run(executor, {"input": "q"}, mode)
    assert done.return_values == {"output": "done"}


@pytest.mark.parametrize("mode", MODES)
async def test_tool_error_propagates_with_steps_done(mode: str, search: Any) -> None:
    def boom(q: str) -> str:
        raise RuntimeError(f"boom {q}")

    a1 = AgentAction("search", "a", "")
    a2 = AgentAction("boom", "b", "")
    executor = AgentExecutor(agent=ScriptedAgent([a1, a2]), tools=[search, make_tool("boom", boom)])
    with pytest.raises(RuntimeError, match="boom b") as info:
        await run(executor, {"input": "q"}, mode)
    assert info.value.intermediate_steps == [(a1, "results for a")]  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
async def test_model_error_propagates_with_steps_done(mode: str, search: Any) -> None:
    a1 = AgentAction("search", "a", "")
    executor = AgentExecutor(agent=ScriptedAgent([a1, ConnectionError("down")]), tools=[search])
    with pytest.raises(ConnectionError) as info:
        await run(executor, {"input": "q"}, mode)
    assert info.value.intermediate_steps == [(a1, "results for a")]  # type: ignore[attr-defined]


def test_allowed_tools_mismatch_raises(search: Any) -> None:
    with pytest.raises(ValueError) as info:
        AgentExecutor(agent=ScriptedAgent([], allowed_tools=["other"]), tools=[search])
    assert str(info.value) == "Allowed tools (['other']) different than provided tools (['search'])"


def test_runnable_agents_are_wrapped_by_output_type(search: Any) -> None:
    def single(inputs: dict[str, Any]) -> AgentAction | AgentFinish:
        return finish("s")

    def multi(inputs: dict[str, Any]) -> list[AgentAction] | AgentFinish:
        return finish("m")

    from actloop import RunnableAgent, RunnableMultiActionAgent

    assert type(AgentExecutor(agent=RunnableLambda(single), tools=[search]).agent) is RunnableAgent
    multi_exec = AgentExecutor(agent=RunnableLambda(multi), tools=[search], stream_runnable=False)
    assert type(multi_exec.agent) is RunnableMultiActionAgent
    assert multi_exec.agent.stream_runnable is False  # type: ignore[union-attr]
    assert multi_exec.invoke({"input": "x"}) == {"input": "x", "output": "m"}


@pytest.mark.parametrize("mode", MODES)
async def test_runnable_agent_receives_inputs_and_steps(mode: str, search: Any) -> None:
    seen: list[dict[str, Any]] = []

    def decide(inputs: dict[str, Any]) -> AgentAction | AgentFinish:
        seen.append({**inputs, "intermediate_steps": list(inputs["intermediate_steps"])})
        if not inputs["intermediate_steps"]:
            return AgentAction("search", inputs["input"], "")
        return finish(inputs["intermediate_steps"][-1][1])

    executor = AgentExecutor(agent=RunnableLambda(decide), tools=[search])
    assert await run(executor, {"input": "owls"}, mode) == {
        "input": "owls",
        "output": "results for owls",
    }
    assert seen[0] == {"input": "owls", "intermediate_steps": []}


def test_batch_and_abatch(search: Any) -> None:
    def decide(inputs: dict[str, Any]) -> AgentAction | AgentFinish:
        return finish(inputs["input"].upper())

    executor = AgentExecutor(agent=RunnableLambda(decide), tools=[search])
    assert executor.batch([{"input": "a"}, {"input": "b"}]) == [
        {"input": "a", "output": "A"},
        {"input": "b", "output": "B"},
    ]
    import asyncio

    assert asyncio.run(executor.abatch([{"input": "c"}], {"max_concurrency": 1})) == [
        {"input": "c", "output": "C"}
    ]


def test_lookup_tool_and_keys(search: Any) -> None:
    executor = AgentExecutor(
        agent=ScriptedAgent([], input_keys=["input"]),
        tools=[search],
        return_intermediate_steps=True,
    )
    assert executor.lookup_tool("search") is search
    assert executor.input_keys == ["input"]
    assert executor.output_keys == ["output", "intermediate_steps"]
    assert AgentExecutor.from_agent_and_tools(ScriptedAgent([]), [search]).max_iterations == 15


def test_changing_a_field_between_runs_takes_effect(search: Any) -> None:
    step = AgentAction("search", "x", "")
    extra = [AgentAction("extra", "y", ""), finish("done")]
    agent = ScriptedAgent([*[step] * 4, *extra])  # 1 + 3 plans, then the third run's two
    executor = AgentExecutor(agent=agent, tools=[search], max_iterations=1)
    assert executor.invoke({"input": "q"})["output"] == (
        "Agent stopped due to iteration limit or time limit."
    )
    assert len(seen(agent)) == 1
    executor.max_iterations = 3
    executor.invoke({"input": "q"})
    assert len(seen(agent)) == 4
    executor.tools = [*executor.tools, make_tool("extra", lambda q: q)]
    executor.return_intermediate_steps = True
    assert executor.invoke({"input": "q"})["intermediate_steps"] == [
        (AgentAction("extra", "y", ""), "y")
    ]
