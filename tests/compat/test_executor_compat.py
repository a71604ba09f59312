"""Scripted runs through LangChain classic's AgentExecutor and actloop's give equal results.

Each scenario (`_scenarios.py`) is written once as data and built in both libraries. For every
mode (`invoke`, `stream`, `iter` and their async twins) the test compares, as JSON from each
library's own `dumpd`: the output (the result dict, the chunk list, or the raised error), what the
agent saw at every `plan` (so trimming shows), and the callbacks fired, in order, with their depth
in the run tree. The deliberate differences (SPEC B1, B2, B9, B10) are asserted as differences.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from _scenarios import (
    AL,
    ASYNC_MODES,
    LC,
    SYNC_MODES,
    Act,
    Finish,
    Lib,
    ParseError,
    Reply,
    Scenario,
    Script,
    build,
    plain,
    recorder,
    run_async,
    run_sync,
    tool_calling_executor,
    without_run_ids,
)

import actloop

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning"),
]

STOPPED = "Agent stopped due to iteration limit or time limit."
STOPPED_MULTI = "Agent stopped due to max iterations."
PARSE_ERROR = (
    "An output parsing error occurred. In order to pass this error back to the agent and have it "
    "try again, pass `handle_parsing_errors=True` to the AgentExecutor. This is the error: "
    "bad output\nFor troubleshooting, visit: "
    "https://docs.langchain.com/oss/python/langchain/errors/OUTPUT_PARSING_FAILURE "
)
STEPS = {"return_intermediate_steps": True}


def _handled(exc: Exception) -> str:
    return f"handled: {type(exc).__name__}"


# (scenario, the final answer `invoke` returns under "output", or the error it raises)
CASES: list[tuple[Scenario, Any]] = [
    (Scenario("plain_finish", (Finish({"output": "done"}, "final"),)), "done"),
    (
        Scenario(
            "extra_inputs_and_return_values",
            (Finish({"output": "done", "score": 3}, "final"),),
            inputs={"input": "question", "user": "ann"},
            options=STEPS,
        ),
        "done",
    ),
    (
        Scenario(
            "actions_then_finish",
            (
                Act("search", "cats", "I search"),
                Act("lookup", "dogs", "I look up"),
                Finish({"output": "answer"}, "final"),
            ),
            options=STEPS,
        ),
        "answer",
    ),
    (
        Scenario(
            "dict_tool_input",
            (Act("search", {"query": "cats"}, "I search"), Finish({"output": "ok"})),
            options=STEPS,
        ),
        "ok",
    ),
    (
        Scenario(
            "non_str_observation",
            (Act("data", "cats", "get data"), Finish({"output": "ok"})),
            tools=("data",),
            options=STEPS,
        ),
        "ok",
    ),
    (
        Scenario(
            "invalid_tool",
            (Act("nope", "x", "I guess"), Finish({"output": "ok"})),
            options=STEPS,
        ),
        "ok",
    ),
    (
        Scenario("parse_error_raises", (ParseError("bad output"),)),
        ("ValueError", PARSE_ERROR),
    ),
    (
        Scenario(
            "parse_error_true_send_to_llm",
            (
                ParseError(
                    "bad output", observation="fix it", llm_output="raw text", send_to_llm=True
                ),
                Finish({"output": "ok"}),
            ),
            options={"handle_parsing_errors": True, **STEPS},
        ),
        "ok",
    ),
    (
        Scenario(
            "parse_error_true",
            (ParseError("bad output"), Finish({"output": "ok"})),
            options={"handle_parsing_errors": True, **STEPS},
        ),
        "ok",
    ),
    (
        Scenario(
            "parse_error_str",
            (ParseError("bad output"), Finish({"output": "ok"})),
            options={"handle_parsing_errors": "Check your output", **STEPS},
        ),
        "ok",
    ),
    (
        Scenario(
            "parse_error_callable",
            (ParseError("bad output"), Finish({"output": "ok"})),
            options={"handle_parsing_errors": _handled, **STEPS},
        ),
        "ok",
    ),
    (
        Scenario(
            "return_direct_one_action",
            (Act("search", "cats"), Act("answer", "now", "I answer")),
            tools=("search", "answer"),
            options=STEPS,
        ),
        "direct now",
    ),
    (
        Scenario(
            "return_direct_two_actions",
            ([Act("answer", "a"), Act("answer", "b")], Finish({"output": "both"})),
            tools=("search", "answer"),
            multi=True,
            options=STEPS,
        ),
        "both",
    ),
    (
        Scenario(
            "return_direct_one_action_of_multi_agent",
            ([Act("answer", "a")],),
            tools=("search", "answer"),
            multi=True,
        ),
        "direct a",
    ),
    (
        Scenario(
            "trim_last_step",
            (Act("search", "a"), Act("lookup", "b"), Act("search", "c"), Finish({"output": "ok"})),
            options={"trim_intermediate_steps": 1, **STEPS},
        ),
        "ok",
    ),
    (
        Scenario(
            "trim_with_callable",
            (Act("search", "a"), Act("lookup", "b"), Act("search", "c"), Finish({"output": "ok"})),
            options={"trim_intermediate_steps": lambda steps: steps[:1]},
        ),
        "ok",
    ),
    (Scenario("max_iterations_0", (), options={"max_iterations": 0, **STEPS}), STOPPED),
    (Scenario("max_execution_time_0", (), options={"max_execution_time": 0.0}), STOPPED),
    (
        Scenario(
            "iteration_limit",
            (Act("search", "a"), Act("lookup", "b")),
            options={"max_iterations": 2, **STEPS},
        ),
        STOPPED,
    ),
    (
        Scenario(
            "multi_action",
            (
                [Act("search", "a", "two calls"), Act("lookup", "b", "two calls")],
                [Act("search", "c", "one call")],
                Finish({"output": "ok"}, "done"),
            ),
            multi=True,
            options=STEPS,
        ),
        "ok",
    ),
    (
        Scenario(
            "multi_action_with_invalid_tool",
            ([Act("nope", "a"), Act("search", "b")], Finish({"output": "ok"})),
            multi=True,
            options=STEPS,
        ),
        "ok",
    ),
    (
        Scenario(
            "multi_action_iteration_limit",
            ([Act("search", "a"), Act("lookup", "b")],),
            multi=True,
            options={"max_iterations": 1, **STEPS},
        ),
        STOPPED_MULTI,
    ),
    (
        Scenario(
            "multi_action_parse_error",
            (ParseError("bad output"), Finish({"output": "ok"})),
            multi=True,
            options={"handle_parsing_errors": True, **STEPS},
        ),
        "ok",
    ),
    (
        Scenario("tool_error", (Act("broken", "x"),), tools=("search", "broken")),
        ("RuntimeError", "tool broke on x"),
    ),
    (
        Scenario(
            "runnable_agent",
            (Act("search", "cats", "I search"), Finish({"output": "ok"}, "final")),
            runnable=True,
            options=STEPS,
        ),
        "ok",
    ),
    (
        Scenario(
            "runnable_agent_invoked_not_streamed",
            (Act("search", "cats", "I search"), Finish({"output": "ok"}, "final")),
            runnable=True,
            options={"stream_runnable": False, **STEPS},
        ),
        "ok",
    ),
    (
        Scenario(
            "runnable_agent_parse_error",
            (ParseError("bad output"), Finish({"output": "ok"})),
            runnable=True,
            options={"handle_parsing_errors": "again", **STEPS},
        ),
        "ok",
    ),
    (
        Scenario(
            "runnable_agent_iteration_limit",
            (Act("search", "a"),),
            runnable=True,
            options={"max_iterations": 1},
        ),
        STOPPED,
    ),
    (
        Scenario(
            "runnable_multi_action_agent",
            ([Act("search", "a"), Act("lookup", "b")], Finish({"output": "ok"})),
            runnable=True,
            multi=True,
            options=STEPS,
        ),
        "ok",
    ),
    (
        Scenario(
            "runnable_multi_action_iteration_limit",
            ([Act("search", "a")],),
            runnable=True,
            multi=True,
            options={"max_iterations": 1},
        ),
        STOPPED_MULTI,
    ),
]
SCENARIOS = [scenario for scenario, _ in CASES]
IDS = [scenario.name for scenario in SCENARIOS]


def _actloop_config(scenario: Scenario) -> dict[str, Any] | None:
    """SPEC B2: actloop runs a step's sync tools concurrently; one at a time matches LangChain."""
    return {"max_concurrency": 1} if scenario.has_multi_step else None


def _callbacks(run: dict[str, Any], scenario: Scenario, mode: str) -> list[Any]:
    """The run's callbacks; sorted when a step's tools run concurrently, so their order is free.

    That is the async modes (both libraries gather a step's tools) and actloop's `iter()`, which
    takes no config to set `max_concurrency` (SPEC B2).
    """
    if scenario.has_multi_step and mode in ("iter", *ASYNC_MODES):
        return sorted(run["callbacks"], key=repr)
    return run["callbacks"]


@pytest.mark.parametrize(("scenario", "expected"), CASES, ids=IDS)
def test_invoke_gives_the_expected_answer(scenario: Scenario, expected: Any) -> None:
    for lib in (LC, AL):
        executor, _ = build(lib, scenario)
        if isinstance(expected, tuple):
            with pytest.raises(Exception) as info:
                executor.invoke(dict(scenario.inputs))
            assert (type(info.value).__name__, str(info.value)) == expected, lib.name
        else:
            assert executor.invoke(dict(scenario.inputs))["output"] == expected, lib.name


@pytest.mark.parametrize("mode", SYNC_MODES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_sync_results_match_langchain(scenario: Scenario, mode: str) -> None:
    expected = run_sync(LC, scenario, mode)
    got = run_sync(AL, scenario, mode, _actloop_config(scenario))
    assert got["output"] == expected["output"]
    assert got["seen"] == expected["seen"]


@pytest.mark.parametrize("mode", SYNC_MODES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_sync_callbacks_match_langchain(scenario: Scenario, mode: str) -> None:
    expected = run_sync(LC, scenario, mode)
    got = run_sync(AL, scenario, mode, _actloop_config(scenario))
    assert _callbacks(got, scenario, mode) == _callbacks(expected, scenario, mode)


@pytest.mark.parametrize("mode", ASYNC_MODES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
async def test_async_results_match_langchain(scenario: Scenario, mode: str) -> None:
    expected = await run_async(LC, scenario, mode)
    got = await run_async(AL, scenario, mode)
    assert got["output"] == expected["output"]
    assert got["seen"] == expected["seen"]


@pytest.mark.parametrize("mode", ASYNC_MODES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
async def test_async_callbacks_match_langchain(scenario: Scenario, mode: str) -> None:
    expected = await run_async(LC, scenario, mode)
    got = await run_async(AL, scenario, mode)
    assert _callbacks(got, scenario, mode) == _callbacks(expected, scenario, mode)


def test_callbacks_of_a_run_in_full() -> None:
    """One run's callbacks spelled out: the order both libraries fire them in."""
    scenario = SCENARIOS[IDS.index("actions_then_finish")]
    events = run_sync(AL, scenario, "invoke")["callbacks"]
    assert [event[:2] for event in events] == [
        ("on_chain_start", 0),
        ("on_agent_action", 0),
        ("on_tool_start", 1),
        ("on_tool_end", 1),
        ("on_agent_action", 0),
        ("on_tool_start", 1),
        ("on_tool_end", 1),
        ("on_agent_finish", 0),
        ("on_chain_end", 0),
    ]
    assert events[2] == ("on_tool_start", 1, "search", "cats", None)
    assert events[3] == ("on_tool_end", 1, "results for cats")
    assert events == run_sync(LC, scenario, "invoke")["callbacks"]


# -- astream_events ------------------------------------------------------------------------------


async def _events(lib: Lib, executor: Any, inputs: dict[str, Any]) -> list[tuple[Any, ...]]:
    """(event, name, depth) of every event; the executor's own stream events with their chunk."""
    events: list[tuple[Any, ...]] = []
    async for event in executor.astream_events(inputs, version="v2"):
        item = (event["event"], event["name"], len(event["parent_ids"]))
        if item[0] == "on_chain_stream" and item[2] == 0:
            item = (*item, without_run_ids(plain(lib, event["data"]["chunk"])))
        events.append(item)
    return events


EVENT_SCENARIOS = [
    "plain_finish",
    "max_iterations_0",
    "actions_then_finish",
    "parse_error_true",
    "return_direct_one_action",
    "iteration_limit",
    "runnable_agent",
    "runnable_multi_action_iteration_limit",
]


@pytest.mark.parametrize("name", EVENT_SCENARIOS)
async def test_astream_events_match_langchain(name: str) -> None:
    scenario = SCENARIOS[IDS.index(name)]
    expected = await _events(LC, build(LC, scenario)[0], dict(scenario.inputs))
    got = await _events(AL, build(AL, scenario)[0], dict(scenario.inputs))
    assert got == expected


# -- a tool-calling agent on a scripted chat model -----------------------------------------------

TOOL_CALLING_REPLIES = (
    Reply("Let me look.", (("search", {"__arg1": "cats"}, "call_1"),)),
    Reply("", (("lookup", {"__arg1": "dogs"}, "call_2"),)),
    Reply("All done now."),
)
PARALLEL_CALLS_REPLIES = (
    Reply("", (("search", {"__arg1": "cats"}, "call_1"), ("lookup", {"__arg1": "dogs"}, "call_2"))),
    Reply("Both found."),
)


async def _tool_calling_run(lib: Lib, replies: tuple[Reply, ...], mode: str) -> Any:
    executor = tool_calling_executor(lib, replies, return_intermediate_steps=True)
    inputs = {"input": "question"}
    if mode == "invoke":
        output = executor.invoke(inputs)
    elif mode == "stream":
        output = list(executor.stream(inputs))
    elif mode == "ainvoke":
        output = await executor.ainvoke(inputs)
    else:
        output = [chunk async for chunk in executor.astream(inputs)]
    return without_run_ids(plain(lib, output))


@pytest.mark.parametrize("replies", [TOOL_CALLING_REPLIES, PARALLEL_CALLS_REPLIES])
@pytest.mark.parametrize("mode", ["invoke", "stream", "ainvoke", "astream"])
async def test_tool_calling_agent_results_match_langchain(
    mode: str, replies: tuple[Reply, ...]
) -> None:
    expected = await _tool_calling_run(LC, replies, mode)
    assert await _tool_calling_run(AL, replies, mode) == expected


def test_tool_calling_agent_executor_callbacks_match_langchain() -> None:
    """The executor's own callbacks and the tools' (the agent pipeline's chains left out)."""
    runs = []
    for lib in (LC, AL):
        handler = recorder(lib)
        executor = tool_calling_executor(lib, TOOL_CALLING_REPLIES)
        executor.invoke({"input": "question"}, {"callbacks": [handler]})
        runs.append(
            [
                without_run_ids(event)
                for event in handler.events
                if not (event[0].startswith("on_chain_") and event[1] > 0)
            ]
        )
    expected, got = runs
    assert [event[:3] for event in got] == [
        ("on_chain_start", 0, "AgentExecutor"),
        ("on_agent_action", 0, got[1][2]),
        ("on_tool_start", 1, "search"),
        ("on_tool_end", 1, "results for cats"),
        ("on_agent_action", 0, got[4][2]),
        ("on_tool_start", 1, "lookup"),
        ("on_tool_end", 1, "entry dogs"),
        ("on_agent_finish", 0, got[7][2]),
        ("on_chain_end", 0, {"output": "All done now."}),
    ]
    assert got == expected


async def test_tool_calling_agent_astream_events_match_langchain() -> None:
    """Every event, the agent pipeline's own chains, prompt and parser included."""
    inputs = {"input": "question"}
    expected = await _events(LC, tool_calling_executor(LC, TOOL_CALLING_REPLIES), inputs)
    got = await _events(AL, tool_calling_executor(AL, TOOL_CALLING_REPLIES), inputs)
    assert got == expected


async def test_tool_calling_agent_executor_tool_and_model_events_match_langchain() -> None:
    """The executor's, the agent sequence's, the tools' and the chat model's events."""

    def outer(events: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [e for e in events if e[2] <= 1 or e[0].startswith("on_chat_model_")]

    inputs = {"input": "question"}
    expected = await _events(LC, tool_calling_executor(LC, TOOL_CALLING_REPLIES), inputs)
    got = await _events(AL, tool_calling_executor(AL, TOOL_CALLING_REPLIES), inputs)
    assert [e[:2] for e in outer(got) if e[0].startswith("on_chat_model_")] == [
        ("on_chat_model_start", "ScriptedChatModel"),
        ("on_chat_model_stream", "ScriptedChatModel"),  # "Let"
        ("on_chat_model_stream", "ScriptedChatModel"),  # " me"
        ("on_chat_model_stream", "ScriptedChatModel"),  # " look." and the tool call
        ("on_chat_model_end", "ScriptedChatModel"),
        ("on_chat_model_start", "ScriptedChatModel"),
        ("on_chat_model_stream", "ScriptedChatModel"),  # the tool call
        ("on_chat_model_end", "ScriptedChatModel"),
        ("on_chat_model_start", "ScriptedChatModel"),
        ("on_chat_model_stream", "ScriptedChatModel"),  # "All"
        ("on_chat_model_stream", "ScriptedChatModel"),  # " done"
        ("on_chat_model_stream", "ScriptedChatModel"),  # " now."
        ("on_chat_model_end", "ScriptedChatModel"),
    ]
    assert outer(got) == outer(expected)


# -- deliberate differences (SPEC B1, B2, B9, B10) -----------------------------------------------


def test_b1_generate_early_stopping_works_where_langchain_raises() -> None:
    scenario = Scenario(
        "generate",
        (Act("search", "a"), Finish({"output": "generated"})),
        options={"max_iterations": 1, "early_stopping_method": "generate"},
    )
    with pytest.raises(ValueError, match=r"^Got unsupported early_stopping_method `generate`$"):
        build(LC, scenario)[0].invoke(dict(scenario.inputs))

    executor, script = build(AL, scenario)
    assert executor.invoke(dict(scenario.inputs)) == {"input": "question", "output": "generated"}
    final_answer_step = [
        AL.dumpd(
            AL.AgentAction(
                "_FinalAnswer",
                "",
                "\n\nI now need to return a final answer based on the previous steps:",
            )
        ),
        "The step or time limit is reached: do not call any more tools. "
        "Give your final answer now, based on the steps so far.",
    ]
    first_step = [AL.dumpd(AL.AgentAction("search", "a", "")), "results for a"]
    assert script.seen[-1]["steps"] == [first_step, final_answer_step]


def _meeting_tools(lib: Lib, log: list[str], barrier: threading.Barrier | None) -> list[Any]:
    """Two tools that log their start and end; with a barrier each waits for the other."""

    def meet(name: str) -> Any:
        def run(query: str) -> str:
            log.append(f"start {name}")
            if barrier is not None:
                barrier.wait()
            log.append(f"end {name}")
            return f"{name} {query}"

        return lib.Tool(name=name, func=run, description=f"{name} tool")

    return [meet("left"), meet("right")]


def test_b2_a_steps_sync_tools_run_concurrently_where_langchain_runs_them_in_turn() -> None:
    script = ([Act("left", "a"), Act("right", "b")], Finish({"output": "ok"}))
    expected_steps = [("left", "left a"), ("right", "right b")]

    lc_log: list[str] = []
    agent = LC.multi_agent(script=Script(LC, script))
    executor = LC.AgentExecutor(
        agent=agent, tools=_meeting_tools(LC, lc_log, None), return_intermediate_steps=True
    )
    result = executor.invoke({"input": "question"})
    assert [(a.tool, obs) for a, obs in result["intermediate_steps"]] == expected_steps
    assert lc_log == ["start left", "end left", "start right", "end right"]

    al_log: list[str] = []
    barrier = threading.Barrier(2, timeout=10)  # passes only if both tools run at once
    agent = AL.multi_agent(script=Script(AL, script))
    executor = AL.AgentExecutor(
        agent=agent, tools=_meeting_tools(AL, al_log, barrier), return_intermediate_steps=True
    )
    result = executor.invoke({"input": "question"})
    assert [(a.tool, obs) for a, obs in result["intermediate_steps"]] == expected_steps
    assert sorted(al_log[:2]) == ["start left", "start right"]


def test_b9_the_agents_finish_is_not_mutated_where_langchain_adds_the_steps() -> None:
    scenario = Scenario(
        "no_mutation", (Act("search", "a"), Finish({"output": "ok"})), options=STEPS
    )
    for lib, expected_keys in ((LC, ["output", "intermediate_steps"]), (AL, ["output"])):
        executor, script = build(lib, scenario)
        result = executor.invoke(dict(scenario.inputs))
        assert list(result) == ["input", "output", "intermediate_steps"], lib.name
        finish = script.returned[-1]
        assert list(finish.return_values) == expected_keys, lib.name


def _add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_b10_invalid_tool_arguments_become_an_observation_where_langchain_raises() -> None:
    import langchain_core.tools as lc_tools
    import pydantic

    script = (Act("_add", {"a": "x", "b": 1}), Finish({"output": "ok"}))
    executor = LC.AgentExecutor(
        agent=LC.single_agent(script=Script(LC, script)), tools=[lc_tools.tool(_add)]
    )
    with pytest.raises(pydantic.ValidationError):
        executor.invoke({"input": "question"})

    executor = AL.AgentExecutor(
        agent=AL.single_agent(script=Script(AL, script)),
        tools=[actloop.tool(_add)],
        return_intermediate_steps=True,
    )
    result = executor.invoke({"input": "question"})
    assert result["output"] == "ok"
    assert result["intermediate_steps"] == [
        (
            actloop.AgentAction("_add", {"a": "x", "b": 1}, ""),
            "Invalid arguments for tool '_add': field 'a': Input should be a valid integer, "
            "unable to parse string as an integer. Fix the arguments and try again.",
        )
    ]
