"""The async fast path of a sequence nothing listens to (`RunnableSequence.astream` without
callbacks, as `RunnableAgent.aplan` streams `prompt | model | parser`): the same chunks, in the
same order, from the same calls as the layered path every step streams through
(`Runnable.astream`), with far fewer async generators."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from actloop.callbacks import BaseCallbackHandler, collect_runs
from actloop.messages import AIMessage, AIMessageChunk
from actloop.output_parsers import StrOutputParser
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.runnables import (
    Runnable,
    RunnableLambda,
    RunnableParallel,
    RunnablePassthrough,
    RunnableSequence,
)
from actloop.runnables._config import RunnableConfig
from actloop.testing import ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import tool

Chain = Callable[[list[str]], Runnable[Any, Any]]


@tool
def noop(x: str) -> str:
    """Does nothing."""
    return x


def _prompt() -> ChatPromptTemplate:
    return ChatPromptTemplate.from_messages(
        [("system", "Be brief."), ("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
    )


CALL = AIMessage(content="", tool_calls=[{"name": "noop", "args": {"x": "a"}, "id": "c1"}])
TEXT = AIMessage(content="the final answer, in words")


def _model(log: list[str], reply: AIMessage = TEXT) -> ScriptedChatModel:
    """A scripted model (a text reply streams in several chunks); each call is logged."""

    def record(messages: Any, stop: Any, kwargs: Any) -> None:
        log.append(f"model:{len(messages)}")

    model = ScriptedChatModel(responses=[reply])
    model._record = record  # pyright: ignore[reportAttributeAccessIssue]
    return model


def _step(log: list[str], name: str, out: Callable[[Any], Any]) -> RunnableLambda[Any, Any]:
    def run(value: Any) -> Any:
        log.append(name)
        return out(value)

    return RunnableLambda(run, name=name)


def _agent(log: list[str]) -> Runnable[Any, Any]:
    return create_tool_calling_agent(_model(log, CALL), [noop], _prompt())


def _agent_input() -> dict[str, Any]:
    return {"input": "hi", "intermediate_steps": []}


def _prompt_model(log: list[str]) -> Runnable[Any, Any]:
    """The model last: its chunks stream out one by one."""
    return _step(log, "in", lambda v: v) | _prompt() | _model(log).bind(stop=["\n\n"])


def _streaming_middle(log: list[str]) -> Runnable[Any, Any]:
    """A parser that streams chunk by chunk, then a lambda merging what it streamed."""
    return (
        _prompt()
        | _model(log)
        | StrOutputParser()
        | _step(log, "upper", lambda s: f"{s!r}".upper())
    )


def _parallel_first(log: list[str]) -> Runnable[Any, Any]:
    """A map whose values are a lambda and a streaming chain, merged per key."""
    return RunnableSequence(
        RunnableParallel(
            {
                "kept": _step(log, "kept", lambda v: v["input"]),
                "reply": _prompt() | _model(log, CALL),
            }
        ),
        _step(log, "after", lambda v: (type(v).__name__, v["kept"], v["reply"])),
    )


class _Silent(Runnable[Any, Any]):
    """A step that takes its whole input and streams nothing."""

    async def _atransform(
        self, chunks: AsyncIterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[Any]:
        async for _ in chunks:
            pass
        return
        yield


def _silent_step(log: list[str]) -> Runnable[Any, Any]:
    return RunnableSequence(
        RunnablePassthrough.assign(extra=_step(log, "extra", lambda v: 1)),
        _Silent(),
        _step(log, "sees", lambda v: repr(v)),
        _step(log, "last", lambda v: v + "!"),
    )


def _failing(log: list[str]) -> Runnable[Any, Any]:
    def fail(value: Any) -> Any:
        log.append("fail")
        raise ValueError(f"bad {value['input']}")

    return _step(log, "first", lambda v: v) | RunnableLambda(fail) | _prompt() | _model(log)


CHAINS: dict[str, tuple[Chain, Any]] = {
    "tool-calling agent": (_agent, _agent_input()),
    "model last": (_prompt_model, {"input": "hi", "agent_scratchpad": []}),
    "streaming middle": (_streaming_middle, {"input": "hi", "agent_scratchpad": []}),
    "parallel first": (_parallel_first, {"input": "hi", "agent_scratchpad": []}),
    "a step streams nothing": (_silent_step, {"input": "hi"}),
}


async def _chunks(stream: AsyncIterator[Any]) -> list[Any]:
    return [chunk async for chunk in stream]


@pytest.mark.parametrize("name", list(CHAINS))
async def test_the_same_chunks_and_calls_as_the_layered_path(name: str) -> None:
    build, value = CHAINS[name]
    quick_log: list[str] = []
    layered_log: list[str] = []
    quick = await _chunks(build(quick_log).astream(value))
    layered = await _chunks(Runnable.astream(build(layered_log), value))
    assert quick == layered
    assert [type(c) for c in quick] == [type(c) for c in layered]
    assert quick_log == layered_log
    assert quick  # every chain here yields something


async def test_the_chunks_themselves() -> None:
    """Exact values, so that the comparison above cannot pass on two equal wrong answers."""
    log: list[str] = []
    (actions,) = await _chunks(_agent(log).astream(_agent_input()))
    assert [(a.tool, a.tool_input, a.tool_call_id) for a in actions] == [("noop", {"x": "a"}, "c1")]
    assert log == ["model:2"]
    chunks = await _chunks(_prompt_model([]).astream({"input": "hi", "agent_scratchpad": []}))
    assert len(chunks) > 1 and all(type(c) is AIMessageChunk for c in chunks)
    assert "".join(str(c.content) for c in chunks) == TEXT.content
    assert await _chunks(_silent_step([]).astream({"input": "hi"})) == ["None!"]
    (merged,) = await _chunks(_parallel_first([]).astream({"input": "hi", "agent_scratchpad": []}))
    assert merged[:2] == ("AddableDict", "hi")
    assert type(merged[2]) is AIMessageChunk and merged[2].tool_calls[0]["id"] == "c1"


async def test_an_error_stops_the_sequence_at_the_same_step() -> None:
    value = {"input": "hi", "agent_scratchpad": []}
    quick_log: list[str] = []
    layered_log: list[str] = []
    with pytest.raises(ValueError, match=r"^bad hi$"):
        await _chunks(_failing(quick_log).astream(value))
    with pytest.raises(ValueError, match=r"^bad hi$"):
        await _chunks(Runnable.astream(_failing(layered_log), value))
    assert quick_log == layered_log == ["first", "fail"]


class _Recorder(BaseCallbackHandler):
    """Every chain and model event, with the run's name where it has one."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.events.append(("chain_start", kwargs.get("name")))

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        self.events.append(("chain_end", outputs))

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.events.append(("chat_model_start", len(messages[0])))

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.events.append(("token", token))

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.events.append(("llm_end", response.generations[0][0].text))


async def test_a_step_with_its_own_callbacks_reports_as_on_the_layered_path() -> None:
    """Callbacks bound to one step (`with_config`) keep that step, and the steps around it,
    on their streaming path: the same events, in the same order."""

    def build(recorder: _Recorder) -> Runnable[Any, Any]:
        model = _model([]).with_config(callbacks=[recorder])
        return _prompt() | model | _step([], "tail", lambda m: m.content)

    value = {"input": "hi", "agent_scratchpad": []}
    quick, layered = _Recorder(), _Recorder()
    assert await _chunks(build(quick).astream(value)) == [TEXT.content]
    assert await _chunks(Runnable.astream(build(layered), value)) == [TEXT.content]
    assert quick.events == layered.events
    assert quick.events[0] == ("chat_model_start", 2)
    assert quick.events[-1] == ("llm_end", TEXT.content)
    tokens = [token for kind, token in quick.events if kind == "token"]
    assert len(tokens) > 1 and "".join(tokens) == TEXT.content


async def test_callbacks_on_the_sequence_take_the_layered_path() -> None:
    value = {"input": "hi", "agent_scratchpad": []}
    quick, layered = _Recorder(), _Recorder()
    await _chunks(_agent([]).astream(value | {"intermediate_steps": []}, {"callbacks": [quick]}))
    await _chunks(
        Runnable.astream(_agent([]), value | {"intermediate_steps": []}, {"callbacks": [layered]})
    )
    assert quick.events == layered.events
    names = [name for kind, name in quick.events if kind == "chain_start"]
    assert names[0] == "RunnableSequence"
    assert "ChatPromptTemplate" in names and "ToolsAgentOutputParser" in names


class _Upper(RunnableLambda[Any, Any]):
    """A lambda whose subclass streams its own way: the fast path must not assume it buffers."""

    def atransform(
        self, chunks: AsyncIterator[Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        async def gen() -> AsyncIterator[Any]:
            async for chunk in chunks:
                yield str(chunk.content).upper()

        return gen()


async def test_a_subclass_overriding_its_stream_keeps_its_own_stream() -> None:
    def build(log: list[str]) -> Runnable[Any, Any]:
        return _prompt() | _model(log) | _Upper(lambda v: v) | _step(log, "join", lambda s: s)

    value = {"input": "hi", "agent_scratchpad": []}
    first: list[str] = []
    quick = await _chunks(build(first).astream(value))
    assert quick == await _chunks(Runnable.astream(build([]), value))
    assert quick == [str(TEXT.content).upper()]
    assert first == ["model:2", "join"]


async def test_few_async_generators_a_plan() -> None:
    """The tool-calling agent's plan with nothing listening: the sequence's generator, the
    model's chunks and the scripted reply's stream; the layered path has sixteen."""
    counts: list[int] = []
    for stream in (_agent([]).astream, lambda v: Runnable.astream(_agent([]), v)):
        firstiter, finalizer = sys.get_asyncgen_hooks()
        started: list[object] = []

        def count(agen: object, hook: Any = firstiter, seen: list[object] = started) -> None:
            seen.append(agen)
            if hook is not None:
                hook(agen)

        sys.set_asyncgen_hooks(firstiter=count, finalizer=finalizer)
        try:
            await _chunks(stream(_agent_input()))
        finally:
            sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)
        counts.append(len(started))
    assert counts == [3, 16]


def _tree(runs: list[Any]) -> list[Any]:
    return [(r.run_type, r.name, r.inputs, r.outputs, _tree(r.child_runs)) for r in runs]


async def test_a_context_collector_sees_the_same_runs() -> None:
    """`collect_runs` attaches a handler without any config callbacks: the runs the layered
    path opens there (the prompt's, the model's and the parser's invoke) are opened alike."""
    trees: list[list[Any]] = []
    for stream in (_agent([]).astream, lambda v: Runnable.astream(_agent([]), v)):
        with collect_runs() as collector:
            await _chunks(stream(_agent_input()))
        trees.append(_tree(collector.traced_runs))
    quick, layered = trees
    assert [(kind, name) for kind, name, *_ in quick] == [
        ("prompt", "ChatPromptTemplate"),
        ("llm", "ScriptedChatModel"),
        ("parser", "ToolsAgentOutputParser"),
    ]
    assert repr(quick) == repr(layered)
