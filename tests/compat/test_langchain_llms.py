"""LangChain text-completion models (langchain-core `BaseLLM`/`LLM`) used as they are, with no
`from_langchain` call: in `create_react_agent`, `ZeroShotAgent.from_llm_and_tools`,
`initialize_agent`, `LLMChain` and a pipeline. Each runs the same LangChain model class under
langchain-classic and under actloop: the prompts and stop words it receives, the steps and the
output must be equal."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import Any

import langchain_core.messages as lc_messages
import langchain_core.tools as lc_tools
import pytest
from langchain_classic import agents as lc_agents
from langchain_classic.chains import LLMChain as LcLLMChain
from langchain_core.callbacks import BaseCallbackHandler as LcHandler
from langchain_core.language_models import BaseChatModel as LcBaseChatModel
from langchain_core.language_models.fake import FakeListLLM as LcFakeListLLM
from langchain_core.language_models.llms import LLM as LcLLM
from langchain_core.outputs import ChatGeneration as LcChatGeneration
from langchain_core.outputs import ChatResult as LcChatResult
from langchain_core.outputs import GenerationChunk as LcGenerationChunk
from langchain_core.prompts import PromptTemplate as LcPromptTemplate
from langchain_core.tracers.context import collect_runs as lc_collect_runs

import actloop
from actloop import AgentExecutor, PromptTemplate, Tool, create_react_agent
from actloop.classic import AgentType, LLMChain, ZeroShotAgent, initialize_agent
from actloop.integrations.langchain import LangChainLLM, from_langchain
from actloop.llms import BaseLLM
from actloop.react import REACT_PROMPT

REPLIES = ["I should echo.\nAction: echo\nAction Input: hello", "Final Answer: it said hello"]


class LcRecordingLLM(LcLLM):
    """A LangChain text model written with `_call`: replies from a list, records prompt and stop."""

    responses: list[str]
    calls: list[Any]

    @property
    def _llm_type(self) -> str:
        return "recording"

    def _call(self, prompt: str, stop: Any = None, run_manager: Any = None, **kw: Any) -> str:
        self.calls.append((prompt, stop))
        return self.responses[len(self.calls) - 1]


def _echo(text: str) -> str:
    return f"echo: {text}"


def _tools(lib: str) -> list[Any]:
    if lib == "ours":
        return [Tool("echo", _echo, "Echo the text.")]
    return [lc_tools.Tool(name="echo", func=_echo, description="Echo the text.")]


def _steps(steps: list[Any]) -> list[Any]:
    return [(a.tool, a.tool_input, a.log, o) for a, o in steps]


def _compare(ours: Any, ref: Any, ours_llm: LcRecordingLLM, ref_llm: LcRecordingLLM) -> None:
    ours_out, ref_out = ours.invoke({"input": "say hello"}), ref.invoke({"input": "say hello"})
    assert ours_llm.calls == ref_llm.calls
    assert len(ours_llm.calls) == 2
    assert ours_out["output"] == ref_out["output"] == "it said hello"
    assert _steps(ours_out["intermediate_steps"]) == _steps(ref_out["intermediate_steps"])
    assert _steps(ours_out["intermediate_steps"]) == [("echo", "hello", REPLIES[0], "echo: hello")]


def test_create_react_agent_with_a_langchain_llm_matches_langchain() -> None:
    ours_llm, ref_llm = (
        LcRecordingLLM(responses=REPLIES, calls=[]),
        LcRecordingLLM(responses=REPLIES, calls=[]),
    )
    ours = AgentExecutor(
        agent=create_react_agent(ours_llm, _tools("ours"), REACT_PROMPT),
        tools=_tools("ours"),
        return_intermediate_steps=True,
    )
    ref = lc_agents.AgentExecutor(
        agent=lc_agents.create_react_agent(
            ref_llm, _tools("ref"), LcPromptTemplate.from_template(REACT_PROMPT.template)
        ),
        tools=_tools("ref"),
        return_intermediate_steps=True,
    )
    _compare(ours, ref, ours_llm, ref_llm)
    assert ours_llm.calls[0][1] == ["\nObservation"]  # the stop bound by create_react_agent


def test_zero_shot_agent_from_llm_and_tools_with_a_langchain_llm_matches_langchain() -> None:
    ours_llm, ref_llm = (
        LcRecordingLLM(responses=REPLIES, calls=[]),
        LcRecordingLLM(responses=REPLIES, calls=[]),
    )
    ours = AgentExecutor(
        agent=ZeroShotAgent.from_llm_and_tools(ours_llm, _tools("ours")),
        tools=_tools("ours"),
        return_intermediate_steps=True,
    )
    ref = lc_agents.AgentExecutor(
        agent=lc_agents.ZeroShotAgent.from_llm_and_tools(ref_llm, _tools("ref")),
        tools=_tools("ref"),
        return_intermediate_steps=True,
    )
    _compare(ours, ref, ours_llm, ref_llm)
    assert ours_llm.calls[1][1] == ["\nObservation:", "\n\tObservation:"]


@pytest.mark.parametrize(
    ("kind", "inputs"),
    [
        ("zero-shot-react-description", {}),
        ("conversational-react-description", {"chat_history": "Human: hi\nAI: hello"}),
    ],
)
def test_initialize_agent_with_a_langchain_llm_matches_langchain(
    kind: str, inputs: dict[str, Any]
) -> None:
    replies = {
        "zero-shot-react-description": REPLIES,
        "conversational-react-description": [
            "Thought: Do I need to use a tool? Yes\nAction: echo\nAction Input: hello",
            "Thought: Do I need to use a tool? No\nAI: it said hello",
        ],
    }[kind]
    ours_llm = LcRecordingLLM(responses=replies, calls=[])
    ref_llm = LcRecordingLLM(responses=replies, calls=[])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ours = initialize_agent(
            _tools("ours"), ours_llm, agent=AgentType(kind), return_intermediate_steps=True
        )
        ref = lc_agents.initialize_agent(
            _tools("ref"),
            ref_llm,
            agent=lc_agents.AgentType(kind),
            return_intermediate_steps=True,
        )
    question = {"input": "say hello", **inputs}
    ours_out, ref_out = ours.invoke(question), ref.invoke(question)
    assert ours_llm.calls == ref_llm.calls
    assert len(ours_llm.calls) == 2
    assert ours_out["output"] == ref_out["output"] == "it said hello"
    assert _steps(ours_out["intermediate_steps"]) == _steps(ref_out["intermediate_steps"])


def test_llm_chain_with_a_langchain_llm_matches_langchain() -> None:
    ours_llm = LcRecordingLLM(responses=["Paris"], calls=[])
    ref_llm = LcRecordingLLM(responses=["Paris"], calls=[])
    template = "Capital of {country}?"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # both warn, as LangChain does
        ours = LLMChain(llm=ours_llm, prompt=PromptTemplate.from_template(template))
        ref = LcLLMChain(llm=ref_llm, prompt=LcPromptTemplate.from_template(template))
    inputs = {"country": "France", "stop": ["\n"]}
    assert ours.predict(**inputs) == ref.predict(**inputs) == "Paris"
    assert ours_llm.calls == ref_llm.calls == [("Capital of France?", ["\n"])]


class LcWordStreamingLLM(LcLLM):
    """A LangChain text model with `_stream` (as providers write it): the reply word by word."""

    responses: list[str]
    calls: list[Any]

    @property
    def _llm_type(self) -> str:
        return "word-streaming"

    def _call(self, prompt: str, stop: Any = None, run_manager: Any = None, **kw: Any) -> str:
        self.calls.append(prompt)
        return self.responses[len(self.calls) - 1]

    def _stream(
        self, prompt: str, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[LcGenerationChunk]:
        for word in re.findall(r"\S+\s*", self._call(prompt)):
            yield LcGenerationChunk(text=word)


def test_a_langchain_llm_in_a_pipeline_invokes_and_streams_as_in_langchain() -> None:
    def run(prompt: Any) -> tuple[Any, ...]:
        llm = LcWordStreamingLLM(responses=["one two", "three four five"], calls=[])
        chain = prompt | llm
        return chain.invoke({"n": 2}), list(chain.stream({"n": 3})), llm.calls

    ours = run(PromptTemplate.from_template("Count {n}"))
    assert ours == run(LcPromptTemplate.from_template("Count {n}"))
    assert ours == ("one two", ["three ", "four ", "five"], ["Count 2", "Count 3"])


async def test_a_langchain_llm_in_a_pipeline_async() -> None:
    llm = LcRecordingLLM(responses=["a", "b"], calls=[])
    chain = actloop.ChatPromptTemplate.from_messages([("system", "Be brief."), ("human", "{q}")])
    assert await (chain | llm.bind(stop=["."])).ainvoke({"q": "hi"}) == "a"
    assert [c async for c in (chain | llm).astream({"q": "yo"})] == ["b"]
    assert llm.calls == [
        ("System: Be brief.\nHuman: hi", ["."]),
        ("System: Be brief.\nHuman: yo", None),
    ]


def test_from_langchain_moves_bound_kwargs_onto_an_actloop_binding() -> None:
    llm = LcFakeListLLM(responses=["x"])
    wrapped = from_langchain(llm.bind(stop=["\n"], suffix="!").bind(stop=["END"]))
    assert isinstance(wrapped, actloop.runnables.RunnableBinding)
    assert isinstance(wrapped.bound, LangChainLLM) and isinstance(wrapped.bound, BaseLLM)
    assert wrapped.bound.langchain_llm is llm
    assert wrapped.kwargs == {"stop": ["END"], "suffix": "!"}
    assert wrapped.invoke("q") == "x"
    plain = from_langchain(llm)
    assert isinstance(plain, LangChainLLM)
    assert (plain._llm_type, dict(plain._identifying_params)) == (
        "fake-list",
        {"responses": ["x"]},
    )


class LcRecorder(LcHandler):
    """A LangChain handler recording the LLM and agent events it is given."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_llm_start(self, serialized: Any, prompts: list[str], **kwargs: Any) -> None:
        params = kwargs["invocation_params"]
        self.events.append(("llm_start", prompts, params["stop"], params["_type"]))

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.events.append(("llm_end", [[g.text for g in gs] for gs in response.generations]))

    def on_agent_finish(self, finish: Any, **kwargs: Any) -> None:
        self.events.append(("agent_finish", finish.return_values))


def test_a_langchain_handler_sees_the_llm_events_langchain_sends() -> None:
    def run(lib: str) -> list[tuple[str, Any]]:
        llm = LcRecordingLLM(responses=REPLIES, calls=[])
        if lib == "ours":
            agent = create_react_agent(llm, _tools("ours"), REACT_PROMPT)
            executor: Any = AgentExecutor(agent=agent, tools=_tools("ours"))
        else:
            prompt = LcPromptTemplate.from_template(REACT_PROMPT.template)
            agent = lc_agents.create_react_agent(llm, _tools("ref"), prompt)
            executor = lc_agents.AgentExecutor(agent=agent, tools=_tools("ref"))
        recorder = LcRecorder()
        executor.invoke({"input": "q"}, {"callbacks": [recorder]})
        return recorder.events

    ours = run("ours")
    assert ours == run("ref")
    assert [e[0] for e in ours] == ["llm_start", "llm_end", "llm_start", "llm_end", "agent_finish"]
    assert ours[0][2:] == (["\nObservation"], "recording")


def _tree(run: Any) -> tuple[Any, ...]:
    return (run.name, run.run_type, tuple(_tree(c) for c in run.child_runs))


def _llm_outputs(run: Any) -> list[Any]:
    """The `generations` texts a LangChain tracer stored for each LLM run under `run`."""
    own = (
        [[g["text"] for g in gs] for gs in run.outputs["generations"]]
        if run.run_type == "llm"
        else []
    )
    return ([own] if own else []) + [o for c in run.child_runs for o in _llm_outputs(c)]


def test_langchain_collect_runs_sees_one_llm_run_per_call_as_in_langchain(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def run(lib: str) -> list[Any]:
        llm = LcRecordingLLM(responses=REPLIES, calls=[])
        if lib == "ours":
            agent = create_react_agent(llm, _tools("ours"), REACT_PROMPT)
            executor: Any = AgentExecutor(agent=agent, tools=_tools("ours"))
        else:
            prompt = LcPromptTemplate.from_template(REACT_PROMPT.template)
            agent = lc_agents.create_react_agent(llm, _tools("ref"), prompt)
            executor = lc_agents.AgentExecutor(agent=agent, tools=_tools("ref"))
        with lc_collect_runs() as collected:
            executor.invoke({"input": "q"})
        return collected.traced_runs

    ours, ref = run("ours"), run("ref")
    assert [_tree(r) for r in ours] == [_tree(r) for r in ref]
    assert len(ours) == 1 and _tree(ours[0])[1] == "chain"
    assert _llm_outputs(ours[0]) == _llm_outputs(ref[0]) == [[[REPLIES[0]]], [[REPLIES[1]]]]
    assert "Error in" not in caplog.text  # no tracer callback failed on our results


def test_the_langchain_models_own_callbacks_fire_as_in_langchain() -> None:
    def run(lib: str) -> list[tuple[str, Any]]:
        recorder = LcRecorder()
        llm = LcRecordingLLM(responses=["Paris"], calls=[], callbacks=[recorder])
        prompt = (PromptTemplate if lib == "ours" else LcPromptTemplate).from_template("{q}")
        assert (prompt | llm).invoke({"q": "Capital of France?"}) == "Paris"
        return recorder.events

    assert (
        run("ours")
        == run("ref")
        == [
            ("llm_start", ["Capital of France?"], None, "recording"),
            ("llm_end", [["Paris"]]),
        ]
    )


class LcStopRecordingChat(LcBaseChatModel):
    """A LangChain chat model that records the stop words of each call and finishes at once."""

    stops: list[Any]

    @property
    def _llm_type(self) -> str:
        return "stop-recording-chat"

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> LcChatResult:
        self.stops.append(stop)
        reply = lc_messages.AIMessage(content="Final Answer: x")
        return LcChatResult(generations=[LcChatGeneration(message=reply)])


@pytest.mark.parametrize("stream_runnable", [True, False])
def test_a_langchain_chat_model_gets_the_stop_create_react_agent_binds(
    stream_runnable: bool,
) -> None:
    def run(lib: str) -> list[Any]:
        model = LcStopRecordingChat(stops=[])
        tools = _tools(lib)
        if lib == "ours":
            agent = create_react_agent(model, tools, REACT_PROMPT)
            executor: Any = AgentExecutor(agent=agent, tools=tools, stream_runnable=stream_runnable)
        else:
            prompt = LcPromptTemplate.from_template(REACT_PROMPT.template)
            agent = lc_agents.create_react_agent(model, tools, prompt)
            executor = lc_agents.AgentExecutor(
                agent=agent, tools=tools, stream_runnable=stream_runnable
            )
        assert executor.invoke({"input": "q"})["output"] == "x"
        return model.stops

    assert run("ours") == run("ref") == [["\nObservation"]]
