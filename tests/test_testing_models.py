"""actloop.testing: ScriptedChatModel, FunctionChatModel and the scripted agents, sync and async."""

from __future__ import annotations

from typing import Any

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish, AgentStep, OutputParserException, Tool
from actloop.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolCall
from actloop.testing import (
    FunctionChatModel,
    ModelCall,
    PlanCall,
    ScriptedAgent,
    ScriptedChatModel,
    ScriptedMultiActionAgent,
)

_CALLS: list[ToolCall] = [
    {"name": "search", "args": {"q": "weather", "n": 2}, "id": "call_1", "type": "tool_call"},
    {"name": "lookup", "args": {}, "id": "call_2", "type": "tool_call"},
]
_USAGE: Any = {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}


def _sum(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


# -- ScriptedChatModel ---------------------------------------------------------------------------


def test_each_call_takes_the_next_response() -> None:
    reply = AIMessage("second", id="r2")
    model = ScriptedChatModel(["first", reply])
    assert model.invoke("a") == AIMessage("first")
    assert model.invoke("b") is reply
    model.assert_complete()


def test_stream_splits_words_keeping_spaces() -> None:
    model = ScriptedChatModel(["Hello  big world!"])
    assert list(model.stream("hi")) == [
        AIMessageChunk("Hello"),
        AIMessageChunk("  big"),
        AIMessageChunk(" world!", chunk_position="last"),
    ]


def test_stream_with_chunk_size() -> None:
    model = ScriptedChatModel(["abcdefg"], chunk_size=3)
    assert [c.content for c in model.stream("hi")] == ["abc", "def", "g"]


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="chunk_size must be a positive int or None, got 0"):
        ScriptedChatModel(["x"], chunk_size=0)


def test_empty_content_streams_one_chunk() -> None:
    model = ScriptedChatModel([AIMessage("", tool_calls=_CALLS)])
    chunks = list(model.stream("hi"))
    assert len(chunks) == 1
    assert chunks[0].content == ""
    assert chunks[0].tool_calls == _CALLS


def test_tool_calls_and_usage_arrive_in_the_last_chunk() -> None:
    reply = AIMessage(
        "Let me look.",
        id="msg_1",
        tool_calls=_CALLS,
        usage_metadata=_USAGE,
        response_metadata={"finish_reason": "tool_calls"},
    )
    chunks = list(ScriptedChatModel([reply]).stream("hi"))
    assert chunks[0] == AIMessageChunk("Let", id="msg_1")
    last = chunks[-1]
    assert last.content == " look."
    assert last.tool_call_chunks == [
        {
            "name": "search",
            "args": '{"q": "weather", "n": 2}',
            "id": "call_1",
            "index": 0,
            "type": "tool_call_chunk",
        },
        {"name": "lookup", "args": "{}", "id": "call_2", "index": 1, "type": "tool_call_chunk"},
    ]
    assert last.usage_metadata == _USAGE
    assert last.chunk_position == "last"
    merged = _sum(chunks)
    assert merged.content == "Let me look."
    assert merged.tool_calls == _CALLS
    assert merged.usage_metadata == _USAGE
    assert merged.response_metadata == {"finish_reason": "tool_calls"}
    assert merged.id == "msg_1"


def test_invalid_tool_calls_survive_streaming() -> None:
    bad: Any = {"name": "search", "args": "not json", "id": "c9", "error": None}
    reply = AIMessage("", invalid_tool_calls=[bad])
    merged = _sum(list(ScriptedChatModel([reply]).stream("hi")))
    assert merged.tool_calls == []
    assert merged.invalid_tool_calls == [{**bad, "type": "invalid_tool_call"}]


def test_stop_cuts_the_content_before_the_first_stop_sequence() -> None:
    text = "Action: search\nAction Input: x\nObservation: made up\nThought: more"
    model = ScriptedChatModel([text, text])
    bound = model.bind(stop=["\nThought", "\nObservation"])
    assert bound.invoke("q") == AIMessage("Action: search\nAction Input: x")
    assert "".join(str(c.content) for c in bound.stream("q")) == "Action: search\nAction Input: x"
    assert [call.stop for call in model.calls] == [["\nThought", "\nObservation"]] * 2


def test_calls_record_messages_stop_and_kwargs() -> None:
    model = ScriptedChatModel(["a", "b"])
    model.invoke([("human", "one")], stop=["X"])
    list(model.stream("two", temperature=0))
    assert model.calls == [
        ModelCall([HumanMessage("one")], ["X"], {}),
        ModelCall([HumanMessage("two")], None, {"temperature": 0}),
    ]
    assert repr(model.calls[1]) == (
        "ModelCall(messages=[HumanMessage(content='two', additional_kwargs={}, "
        "response_metadata={})], stop=None, kwargs={'temperature': 0})"
    )


def test_exhausted_script_says_how_many_responses_there_were() -> None:
    model = ScriptedChatModel(["only"])
    model.invoke("a")
    with pytest.raises(
        AssertionError,
        match=r"got call 2 but was scripted with 1 response\(s\); add more responses",
    ):
        model.invoke("b")
    with pytest.raises(AssertionError, match="got call 3"):
        list(model.stream("c"))


def test_assert_complete_names_the_unused_responses() -> None:
    model = ScriptedChatModel(["a", "b", "c"])
    model.invoke("x")
    assert model.remaining == 2
    with pytest.raises(
        AssertionError, match=r"has 2 unused response\(s\) of 3; it was called 1 time\(s\)"
    ):
        model.assert_complete()


def test_bind_tools_shares_the_script() -> None:
    weather = {
        "type": "function",
        "function": {"name": "weather", "description": "Weather.", "parameters": {}},
    }
    model = ScriptedChatModel(["with tools", "plain"])
    with_tools = model.bind_tools([weather])
    assert with_tools.invoke("a") == AIMessage("with tools")
    assert model.invoke("b") == AIMessage("plain")
    assert model.calls[0].tools == [weather]
    assert model.calls[1].tools is None
    model.assert_complete()


def test_batch_consumes_one_response_per_input() -> None:
    model = ScriptedChatModel(["r"] * 8)
    assert model.batch([str(i) for i in range(8)]) == [AIMessage("r")] * 8
    model.assert_complete()
    assert sorted(c.messages[0].text for c in model.calls) == [str(i) for i in range(8)]


async def test_async_invoke_and_stream() -> None:
    model = ScriptedChatModel(["a b", AIMessage("c", tool_calls=_CALLS[:1])])
    assert await model.ainvoke("x") == AIMessage("a b")
    chunks = [c async for c in model.astream("y")]
    assert len(chunks) == 1
    assert (chunks[0].content, chunks[0].tool_calls) == ("c", _CALLS[:1])
    model.assert_complete()


def test_bad_response_type_is_rejected_at_construction() -> None:
    with pytest.raises(TypeError, match="must be an AIMessage or a str, got int"):
        ScriptedChatModel([1])  # type: ignore[list-item]


# -- FunctionChatModel ---------------------------------------------------------------------------


def test_function_of_the_messages_plays_the_model() -> None:
    def reply(messages: list[BaseMessage]) -> str:
        return f"you said {messages[-1].text}"

    model = FunctionChatModel(reply)
    assert model.invoke("hi") == AIMessage("you said hi")
    assert [c.content for c in model.stream("yo")] == ["you", " said", " yo"]
    assert model.calls == [
        ModelCall([HumanMessage("hi")], None, {}),
        ModelCall([HumanMessage("yo")], None, {}),
    ]


def test_function_gets_the_kwargs_it_accepts() -> None:
    seen: list[dict[str, Any]] = []

    def everything(messages: list[BaseMessage], **kwargs: Any) -> AIMessage:
        seen.append(kwargs)
        return AIMessage("", tool_calls=_CALLS)

    def only_stop(messages: list[BaseMessage], stop: list[str] | None = None) -> str:
        seen.append({"stop": stop})
        return "x"

    assert FunctionChatModel(everything).invoke("a", stop=["S"], tools=[]).tool_calls == _CALLS
    FunctionChatModel(only_stop).invoke("a", stop=["S"], tools=[])
    FunctionChatModel(only_stop).invoke("a", tools=[])
    assert seen == [{"stop": ["S"], "tools": []}, {"stop": ["S"]}, {"stop": None}]


async def test_async_function() -> None:
    async def reply(messages: list[BaseMessage]) -> str:
        return "async reply"

    model = FunctionChatModel(reply)
    assert await model.ainvoke("hi") == AIMessage("async reply")
    assert [c.content async for c in model.astream("hi")] == ["async", " reply"]
    with pytest.raises(TypeError, match="is async; call ainvoke or astream instead"):
        model.invoke("hi")


async def test_sync_function_on_the_async_path() -> None:
    model = FunctionChatModel(lambda messages: "sync")
    assert await model.ainvoke("hi") == AIMessage("sync")


def test_function_returning_a_bad_type() -> None:
    model = FunctionChatModel(lambda messages: 42)
    with pytest.raises(TypeError, match="must be an AIMessage or a str, got int"):
        model.invoke("hi")


# -- ScriptedAgent / ScriptedMultiActionAgent ------------------------------------------------------

_SEARCH = Tool(name="search", func=lambda q: f"results for {q}", description="search")
_MODES = ["sync", "async"]


async def _run(executor: AgentExecutor, inputs: dict[str, Any], mode: str) -> dict[str, Any]:
    if mode == "sync":
        return executor.invoke(inputs)
    return await executor.ainvoke(inputs)


@pytest.mark.parametrize("mode", _MODES)
async def test_agent_plays_its_plans_and_records_each_call(mode: str) -> None:
    a1 = AgentAction("search", "cats", "I search")
    a2 = AgentAction("search", "dogs", "again")
    agent = ScriptedAgent([a1, a2, AgentFinish({"output": "done"}, "fin")])
    executor = AgentExecutor(agent=agent, tools=[_SEARCH], return_intermediate_steps=True)
    assert await _run(executor, {"input": "q", "lang": "en"}, mode) == {
        "input": "q",
        "lang": "en",
        "output": "done",
        "intermediate_steps": [(a1, "results for cats"), (a2, "results for dogs")],
    }
    inputs = {"input": "q", "lang": "en"}
    assert agent.calls == [
        PlanCall([], inputs),
        PlanCall([(a1, "results for cats")], inputs),
        PlanCall([(a1, "results for cats"), (a2, "results for dogs")], inputs),
    ]
    assert agent.remaining == 0
    agent.assert_complete()


@pytest.mark.parametrize("mode", _MODES)
async def test_multi_action_agent_plays_a_step_of_several_actions(mode: str) -> None:
    step = [AgentAction("search", "a", ""), AgentAction("search", "b", "")]
    agent = ScriptedMultiActionAgent([step, AgentFinish({"output": "both"}, "")])
    executor = AgentExecutor(agent=agent, tools=[_SEARCH], return_intermediate_steps=True)
    result = await _run(executor, {"input": "q"}, mode)
    assert result["intermediate_steps"] == [(step[0], "results for a"), (step[1], "results for b")]
    assert [len(c.intermediate_steps) for c in agent.calls] == [0, 2]
    agent.assert_complete()


def test_agent_streams_through_the_executor() -> None:
    a1 = AgentAction("search", "cats", "I search")
    agent = ScriptedAgent([a1, AgentFinish({"output": "answer"}, "final log")])
    chunks = list(AgentExecutor(agent=agent, tools=[_SEARCH]).stream({"input": "q"}))
    assert chunks == [
        {"actions": [a1], "messages": [AIMessage(content="I search")]},
        {
            "steps": [AgentStep(a1, "results for cats")],
            "messages": [HumanMessage(content="results for cats")],
        },
        {"output": "answer", "messages": [AIMessage(content="final log")]},
    ]


async def test_agent_astreams_through_the_executor() -> None:
    step = [AgentAction("search", "a", "")]
    agent = ScriptedMultiActionAgent([step, AgentFinish({"output": "ok"}, "")])
    chunks = [c async for c in AgentExecutor(agent=agent, tools=[_SEARCH]).astream({"input": "q"})]
    assert [sorted(c) for c in chunks] == [
        ["actions", "messages"],
        ["messages", "steps"],
        ["messages", "output"],
    ]
    assert chunks[1]["steps"] == [AgentStep(step[0], "results for a")]
    assert chunks[2]["output"] == "ok"
    agent.assert_complete()


@pytest.mark.parametrize("mode", _MODES)
async def test_a_scripted_parse_error_is_raised_into_the_loop(mode: str) -> None:
    error = OutputParserException("bad", observation="fix it", llm_output="raw", send_to_llm=True)
    agent = ScriptedAgent([error, AgentFinish({"output": "ok"}, "")])
    executor = AgentExecutor(
        agent=agent, tools=[_SEARCH], handle_parsing_errors=True, return_intermediate_steps=True
    )
    result = await _run(executor, {"input": "q"}, mode)
    assert result["intermediate_steps"] == [(AgentAction("_Exception", "fix it", "raw"), "fix it")]
    assert agent.calls[1].intermediate_steps == result["intermediate_steps"]


@pytest.mark.parametrize("mode", _MODES)
async def test_a_scripted_error_fails_the_run(mode: str) -> None:
    executor = AgentExecutor(agent=ScriptedAgent([ConnectionError("down")]), tools=[_SEARCH])
    with pytest.raises(ConnectionError, match=r"^down$"):
        await _run(executor, {"input": "q"}, mode)


@pytest.mark.parametrize("mode", _MODES)
async def test_a_function_plans_from_the_observations(mode: str) -> None:
    def answer(steps: list[tuple[AgentAction, Any]], input: str) -> AgentFinish:
        return AgentFinish({"output": f"{input}: {steps[-1][1]}"}, "")

    agent = ScriptedAgent([AgentAction("search", "x", ""), answer])
    result = await _run(AgentExecutor(agent=agent, tools=[_SEARCH]), {"input": "q", "n": 1}, mode)
    assert result == {"input": "q", "n": 1, "output": "q: results for x"}


def test_a_function_gets_the_inputs_it_accepts() -> None:
    seen: list[Any] = []

    def everything(steps: Any, **inputs: Any) -> AgentAction:
        seen.append(inputs)
        return AgentAction("search", "x", "")

    def nothing(steps: Any) -> AgentFinish:
        seen.append(list(steps))
        return AgentFinish({"output": "ok"}, "")

    agent = ScriptedAgent([everything, nothing])
    AgentExecutor(agent=agent, tools=[_SEARCH]).invoke({"input": "q", "n": 2})
    assert seen == [{"input": "q", "n": 2}, [(AgentAction("search", "x", ""), "results for x")]]


def test_a_function_may_return_an_exception_to_raise() -> None:
    agent = ScriptedAgent([lambda steps: RuntimeError("from fn")])
    with pytest.raises(RuntimeError, match=r"^from fn$"):
        agent.plan([], input="q")


async def test_an_async_function_plays_on_the_async_path_only() -> None:
    async def finish(steps: Any, input: str) -> AgentFinish:
        return AgentFinish({"output": f"async {input}"}, "")

    agent = ScriptedAgent([finish, finish])
    executor = AgentExecutor(agent=agent, tools=[_SEARCH])
    assert await executor.ainvoke({"input": "q"}) == {"input": "q", "output": "async q"}
    with pytest.raises(TypeError, match="is async; call ainvoke or astream instead"):
        executor.invoke({"input": "q"})


def test_calls_copy_the_steps_they_were_shown() -> None:
    steps: list[tuple[AgentAction, Any]] = []
    agent = ScriptedAgent([AgentAction("search", "x", "")])
    agent.plan(steps, input="q")
    steps.append((AgentAction("search", "x", ""), "later"))
    assert agent.calls == [PlanCall([], {"input": "q"})]
    assert repr(agent.calls[0]) == "PlanCall(intermediate_steps=[], inputs={'input': 'q'})"


def test_exhausted_script_says_how_many_plans_there_were() -> None:
    agent = ScriptedAgent([AgentFinish({"output": "a"}, "")])
    agent.plan([])
    with pytest.raises(
        AssertionError,
        match=r"^ScriptedAgent got plan call 2 but was scripted with 1 plan\(s\); add more plans",
    ):
        agent.plan([])


def test_assert_complete_names_the_unused_plans() -> None:
    finish = AgentFinish({"output": "a"}, "")
    agent = ScriptedMultiActionAgent([finish, finish, finish])
    agent.plan([])
    assert agent.remaining == 2
    with pytest.raises(
        AssertionError,
        match=r"^ScriptedMultiActionAgent has 2 unused plan\(s\) of 3; it was called 1 time\(s\)$",
    ):
        agent.assert_complete()


def test_plans_can_be_appended_between_runs() -> None:
    agent = ScriptedAgent([AgentFinish({"output": "one"}, "")])
    executor = AgentExecutor(agent=agent, tools=[_SEARCH])
    assert executor.invoke({"input": "q"})["output"] == "one"
    agent.plans.append(AgentFinish({"output": "two"}, ""))
    assert executor.invoke({"input": "q"})["output"] == "two"
    agent.assert_complete()


@pytest.mark.parametrize("bad", ["text", RuntimeError, [AgentFinish({}, "")], None])
def test_a_plan_that_cannot_be_played_is_rejected_at_construction(bad: Any) -> None:
    with pytest.raises(TypeError, match=r"^plan 1 is .*; a scripted agent plays AgentAction, a"):
        ScriptedAgent([AgentFinish({"output": "ok"}, ""), bad])


def test_defaults_are_the_base_agents() -> None:
    agent = ScriptedAgent([])
    assert (agent.input_keys, agent.return_values, agent.get_allowed_tools()) == (
        [],
        ["output"],
        None,
    )
    executor = AgentExecutor(agent=agent, tools=[_SEARCH], return_intermediate_steps=True)
    assert (executor.input_keys, executor.output_keys) == ([], ["output", "intermediate_steps"])
    with pytest.raises(ValueError, match="A single string input was passed in"):
        executor.invoke("q")
    assert repr(ScriptedAgent([AgentFinish({"output": "x"}, "")])) == (
        "ScriptedAgent(plans=[AgentFinish(return_values={'output': 'x'}, log='')])"
    )


def test_keys_and_allowed_tools_can_be_set() -> None:
    agent = ScriptedAgent(
        [AgentFinish({"answer": "yes"}, "")], input_keys=["question"], return_values=["answer"]
    )
    executor = AgentExecutor(agent=agent, tools=[_SEARCH])
    assert (executor.input_keys, executor.output_keys) == (["question"], ["answer"])
    assert executor.invoke("why?") == {"question": "why?", "answer": "yes"}
    picky = ScriptedAgent([], allowed_tools=["other"])
    with pytest.raises(ValueError) as info:
        AgentExecutor(agent=picky, tools=[_SEARCH])
    assert str(info.value) == "Allowed tools (['other']) different than provided tools (['search'])"


@pytest.mark.parametrize("mode", _MODES)
async def test_force_stop_texts_follow_the_agent_kind(mode: str) -> None:
    step = AgentAction("search", "x", "")
    single = AgentExecutor(agent=ScriptedAgent([step]), tools=[_SEARCH], max_iterations=1)
    multi = AgentExecutor(
        agent=ScriptedMultiActionAgent([[step]]), tools=[_SEARCH], max_iterations=1
    )
    assert (await _run(single, {"input": "q"}, mode))["output"] == (
        "Agent stopped due to iteration limit or time limit."
    )
    assert (await _run(multi, {"input": "q"}, mode))[
        "output"
    ] == "Agent stopped due to max iterations."


@pytest.mark.parametrize("mode", _MODES)
async def test_generate_stop_plays_one_more_plan(mode: str) -> None:
    step = AgentAction("search", "x", "thinking")
    agent = ScriptedAgent([step, AgentAction("search", "y", "I would search again")])
    executor = AgentExecutor(
        agent=agent, tools=[_SEARCH], max_iterations=1, early_stopping_method="generate"
    )
    assert (await _run(executor, {"input": "q"}, mode))["output"] == "I would search again"
    final = agent.calls[1].intermediate_steps
    assert final == [
        (step, "results for x"),
        (
            AgentAction(
                "_FinalAnswer",
                "",
                "\n\nI now need to return a final answer based on the previous steps:",
            ),
            "The step or time limit is reached: do not call any more tools. "
            "Give your final answer now, based on the steps so far.",
        ),
    ]
    agent.assert_complete()
