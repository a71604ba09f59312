"""`astream_events(version="v1")` gives langchain-core's v1 events, event for event.

The same scripted replies run through LangChain (langchain-core, langchain-classic 1.0.8) and
through actloop; the whole event lists are compared field by field: event, name, tags, metadata,
`parent_ids` (always empty in v1) and data, as JSON from each library's own `dumpd`. Run ids are
replaced by their order of first appearance (so which events share a run is compared too);
langchain-core's generated message ids (`lc_run-...`) and its `lc_versions` metadata are left
out, and a prompt value is compared as its messages.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _scenarios import (
    AL,
    LC,
    Lib,
    Reply,
    build,
    plain,
    tool_calling_executor,
    without_run_ids,
)
from langchain_classic.agents import initialize_agent as lc_initialize_agent
from langchain_core._api.deprecation import LangChainDeprecationWarning
from langchain_core.language_models.fake import FakeListLLM as LcFakeListLLM
from langchain_core.language_models.fake_chat_models import (
    GenericFakeChatModel as LcFakeChatModel,
)
from langchain_core.language_models.llms import LLM as LcLLM
from langchain_core.messages import AIMessage as LcAIMessage
from langchain_core.output_parsers import StrOutputParser as LcStrOutputParser
from langchain_core.outputs import GenerationChunk as LcGenerationChunk
from langchain_core.prompts import ChatPromptTemplate as LcChatPromptTemplate
from langchain_core.prompts import PromptTemplate as LcPromptTemplate
from langchain_core.runnables import RunnableLambda as LcLambda
from langchain_core.tools import tool as lc_tool
from test_chat_model_events_compat import GenericFakeChatModel
from test_executor_compat import IDS, SCENARIOS

import actloop
from actloop import AgentAction, AgentExecutor, AgentFinish, BaseSingleActionAgent, Resume
from actloop.checkpoint import SqliteCheckpointer
from actloop.classic import initialize_agent
from actloop.llms import LLM
from actloop.output_parsers import StrOutputParser
from actloop.outputs import GenerationChunk
from actloop.prompts import ChatPromptTemplate, PromptTemplate
from actloop.runnables import RunnableLambda
from actloop.testing import FakeListLLM
from actloop.tools import tool

pytestmark = [
    pytest.mark.filterwarnings("ignore:Use `langchain.agents.create_agent`:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning"),
]

DEPRECATED = "astream_events version='v1' is deprecated. Use version='v2' or astream instead."
TOOL_CALLING_REPLIES = (
    Reply("Let me look.", (("search", {"__arg1": "cats"}, "call_1"),)),
    Reply("", (("lookup", {"__arg1": "dogs"}, "call_2"),)),
    Reply("All done now."),
)
PARALLEL_CALLS_REPLIES = (
    Reply("", (("search", {"__arg1": "cats"}, "call_1"), ("lookup", {"__arg1": "dogs"}, "call_2"))),
    Reply("Both found."),
)


# -- the comparison ------------------------------------------------------------------------------


def _prompt_values_as_messages(value: Any) -> Any:
    """A prompt value as `{"prompt_value": messages}`, a text generation chunk as its fields
    (actloop's have no LangChain `dumpd`)."""
    if hasattr(value, "to_messages") and hasattr(value, "to_string"):
        return {"prompt_value": value.to_messages()}
    if type(value).__name__ == "GenerationChunk":
        return {"generation_chunk": value.text, "info": value.generation_info}
    if isinstance(value, dict):
        return {k: _prompt_values_as_messages(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, (list, tuple)):
        return [_prompt_values_as_messages(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata without `lc_versions`; the LangChain twin model's provider named as actloop's."""
    shown = {k: v for k, v in metadata.items() if k != "lc_versions"}
    if isinstance(shown.get("ls_provider"), str):
        shown["ls_provider"] = shown["ls_provider"].removeprefix("lc")
    return shown


def _view(lib: Lib, event: dict[str, Any], run_ids: dict[str, int]) -> dict[str, Any]:
    """Every field of an event, library-neutral; the run id as its order of first appearance."""
    assert set(event) == {"event", "name", "run_id", "tags", "metadata", "data", "parent_ids"}
    return {
        "event": event["event"],
        "name": event["name"],
        "run": run_ids.setdefault(str(event["run_id"]), len(run_ids)),
        "tags": event["tags"],
        "metadata": _metadata(event["metadata"]),
        "parent_ids": [run_ids.setdefault(str(p), len(run_ids)) for p in event["parent_ids"]],
        "data": without_run_ids(plain(lib, _prompt_values_as_messages(event["data"]))),
    }


async def _v1(lib: Lib, runnable: Any, value: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """The run's v1 events, seen through `_view`; the deprecation warning is checked."""
    run_ids: dict[str, int] = {}
    with pytest.warns(LangChainDeprecationWarning, match=DEPRECATED):
        events: AsyncIterator[dict[str, Any]] = runnable.astream_events(
            value, version="v1", **kwargs
        )
        return [_view(lib, event, run_ids) async for event in events]


async def _v1_failing(lib: Lib, runnable: Any, value: Any, error: str) -> list[dict[str, Any]]:
    """The v1 events of a run that raises `error` (a message pattern), up to the error."""
    seen: list[dict[str, Any]] = []
    run_ids: dict[str, int] = {}
    with pytest.warns(LangChainDeprecationWarning), pytest.raises(Exception, match=error):
        async for event in runnable.astream_events(value, version="v1"):
            seen.append(_view(lib, event, run_ids))
    return seen


def _settled(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events with each block of tool events sorted and tool runs named by their tool: tools
    called in parallel end in whichever order they finish (in LangChain too)."""
    out: list[dict[str, Any]] = []
    block: list[dict[str, Any]] = []
    for event in [*events, None]:
        if event is not None and event["event"].startswith("on_tool_"):
            block.append({**event, "run": event["name"]})
            continue
        out.extend(sorted(block, key=lambda e: (e["name"], e["event"] != "on_tool_start")))
        block = []
        if event is not None:
            out.append(event)
    return out


def _kinds(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["event"], e["name"]) for e in events]


# -- runnables -----------------------------------------------------------------------------------


def _add_one(x: int) -> int:
    return x + 1


async def _aadd_one(x: int) -> int:
    return x + 1


async def test_runnable_lambda() -> None:
    expected = await _v1(LC, LcLambda(_add_one), 1)
    assert expected == [
        {
            "event": "on_chain_start",
            "name": "_add_one",
            "run": 0,
            "tags": [],
            "metadata": {},
            "parent_ids": [],
            "data": {"input": 1},
        },
        {
            "event": "on_chain_stream",
            "name": "_add_one",
            "run": 0,
            "tags": [],
            "metadata": {},
            "parent_ids": [],
            "data": {"chunk": 2},
        },
        {
            "event": "on_chain_end",
            "name": "_add_one",
            "run": 0,
            "tags": [],
            "metadata": {},
            "parent_ids": [],
            "data": {"output": 2},
        },
    ]
    assert await _v1(AL, RunnableLambda(_add_one), 1) == expected


async def test_async_runnable_lambda_with_run_name_tags_and_metadata() -> None:
    config = {"run_name": "adder", "tags": ["t"], "metadata": {"user": "ann"}}
    expected = await _v1(LC, LcLambda(_aadd_one), 1, config=config)
    assert {e["name"] for e in expected} == {"adder"}
    assert {str(e["tags"]) + str(e["metadata"]) for e in expected} == {"['t']{'user': 'ann'}"}
    assert await _v1(AL, RunnableLambda(_aadd_one), 1, config=config) == expected


def _lc_chain(reply: str) -> Any:
    prompt = LcChatPromptTemplate.from_messages([("system", "be brief"), ("human", "{q}")])
    return prompt | LcFakeChatModel(messages=iter([LcAIMessage(reply)])) | LcStrOutputParser()


def _chain(reply: str) -> Any:
    prompt = ChatPromptTemplate.from_messages([("system", "be brief"), ("human", "{q}")])
    return prompt | GenericFakeChatModel([reply]) | StrOutputParser()


async def test_prompt_model_parser_chain() -> None:
    config = {"tags": ["t1"], "metadata": {"a": 1}}
    expected = await _v1(LC, _lc_chain("hello big world"), {"q": "hi"}, config=config)
    got = await _v1(AL, _chain("hello big world"), {"q": "hi"}, config=config)
    assert got == expected
    # v1's own shapes: the model's end output is the dumped LLMResult, the parser starts without
    # its (streamed) input and ends with it, the root ends with its output only.
    model_end = next(e for e in got if e["event"] == "on_chat_model_end")
    assert model_end["data"]["output"]["type"] == "LLMResult"
    assert model_end["data"]["output"]["generations"][0][0]["text"] == "hello big world"
    parser = [e["data"] for e in got if e["name"] == "StrOutputParser"]
    assert parser[0] == {} and parser[-1]["output"] == "hello big world"
    assert got[-1]["data"] == {"output": "hello big world"}
    assert got[-1]["tags"] == ["t1"] and got[-1]["metadata"] == {"a": 1}


async def test_streaming_chat_model() -> None:
    lc_model = LcFakeChatModel(messages=iter([LcAIMessage("hello big world")]))
    expected = await _v1(LC, lc_model, "hi")
    got = await _v1(AL, GenericFakeChatModel(["hello big world"]), "hi")
    assert got == expected
    assert [e["event"] for e in got] == [
        "on_chat_model_start",
        *["on_chat_model_stream"] * 5,
        "on_chat_model_end",
    ]
    assert got[0]["data"] == {"input": "hi"}
    assert got[-1]["metadata"] == {}  # the root shows the call's metadata only


@lc_tool("search")
def lc_search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


@tool("search")
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


async def test_tool() -> None:
    expected = await _v1(LC, lc_search, {"query": "cats"})
    got = await _v1(AL, search, {"query": "cats"})
    assert got == expected
    assert _kinds(got) == [
        ("on_tool_start", "search"),
        ("on_tool_stream", "search"),
        ("on_tool_end", "search"),
    ]
    assert got[1]["data"] == {"chunk": "results for cats"}


async def test_failing_step_ends_and_the_error_propagates() -> None:
    def fail(x: int) -> int:
        raise ValueError(f"bad {x}")

    lc_chain = LcLambda(_add_one) | LcLambda(fail)
    expected = await _v1_failing(LC, lc_chain, 1, "bad 2")
    got = await _v1_failing(AL, RunnableLambda(_add_one) | RunnableLambda(fail), 1, "bad 2")
    assert got == expected
    assert got[-1]["event"] == "on_chain_end" and got[-1]["name"] == "fail"
    assert got[-1]["data"] == {"input": 2, "output": None}


async def test_unknown_version_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'v1' and 'v2'.*'v3'"):
        async for _ in RunnableLambda(_add_one).astream_events(1, version="v3"):
            pass


def _words_model(base: type, chunk: type) -> Any:
    """A text model of `base` (langchain-core's or actloop's `LLM`) named `Words`, streaming
    "hello big world" word by word as `chunk`s."""

    def _call(self: Any, prompt: str, stop: Any = None, run_manager: Any = None, **kw: Any) -> str:
        return "hello big world"

    def _stream(
        self: Any, prompt: str, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Any:
        for word in ("hello", " big", " world"):
            piece = chunk(text=word)
            if run_manager is not None:
                run_manager.on_llm_new_token(word, chunk=piece)
            yield piece

    llm_type = property(lambda self: "words")  # pyright: ignore[reportUnknownLambdaType]
    words = type("Words", (base,), {"_call": _call, "_stream": _stream, "_llm_type": llm_type})
    return words()


@pytest.mark.parametrize("streaming", [True, False])
async def test_prompt_text_model_chain(streaming: bool) -> None:
    """A text-completion model's `on_llm_*` events (v1 streams its tokens as strings)."""
    lc_model = (
        _words_model(LcLLM, LcGenerationChunk)
        if streaming
        else LcFakeListLLM(responses=["hello big world"])
    )
    model = (
        _words_model(LLM, GenerationChunk)
        if streaming
        else FakeListLLM(responses=["hello big world"])
    )
    lc_chain = LcPromptTemplate.from_template("say {x}") | lc_model
    expected = await _v1(LC, lc_chain, {"x": "hi"})
    got = await _v1(AL, PromptTemplate.from_template("say {x}") | model, {"x": "hi"})
    assert got == expected
    tokens = [e["data"]["chunk"] for e in got if e["event"] == "on_llm_stream"]
    assert tokens == (["hello", " big", " world"] if streaming else [])
    end = next(e for e in got if e["event"] == "on_llm_end")["data"]
    generation = {"text": "hello big world", "generation_info": None, "type": "Generation"}
    assert end == {
        "input": {"prompts": ["say hi"]},
        "output": {
            "generations": [[generation]],
            "llm_output": None,
            "run": None,
            "type": "LLMResult",
        },
    }


async def test_text_model_events_in_v2_too() -> None:
    """The `on_llm_*` events are the shared machinery's: v2 has them as langchain-core's v2."""

    async def v2(lib: Lib, chain: Any) -> list[dict[str, Any]]:
        run_ids: dict[str, int] = {}
        return [
            _view(lib, e, run_ids) async for e in chain.astream_events({"x": "hi"}, version="v2")
        ]

    expected = await v2(
        LC, LcPromptTemplate.from_template("say {x}") | _words_model(LcLLM, LcGenerationChunk)
    )
    got = await v2(AL, PromptTemplate.from_template("say {x}") | _words_model(LLM, GenerationChunk))
    assert got == expected
    assert [e["event"] for e in got if e["event"].startswith("on_llm")] == [
        "on_llm_start",
        *["on_llm_stream"] * 3,
        "on_llm_end",
    ]


# -- filters -------------------------------------------------------------------------------------

FILTERS: list[dict[str, Any]] = [
    {"include_names": ["StrOutputParser"]},
    {"include_types": ["chat_model", "prompt"]},
    {"include_tags": ["seq:step:2"]},
    {"include_tags": ["t1"]},
    {"exclude_names": ["RunnableSequence"]},
    {"exclude_types": ["chat_model"]},
    {"exclude_tags": ["seq:step:1", "seq:step:3"]},
    {"include_types": ["parser", "chain"], "exclude_names": ["RunnableSequence"]},
    {"include_names": ["ChatPromptTemplate"], "include_types": ["parser"]},
]


@pytest.mark.parametrize("filters", FILTERS, ids=[str(f) for f in FILTERS])
async def test_filters_on_a_chain(filters: dict[str, Any]) -> None:
    config = {"tags": ["t1"]}
    expected = await _v1(LC, _lc_chain("a b"), {"q": "hi"}, config=config, **filters)
    got = await _v1(AL, _chain("a b"), {"q": "hi"}, config=config, **filters)
    assert got == expected


async def test_exclude_filters_in_v2_too() -> None:
    """The include/exclude rule is shared: v2 filters as langchain-core's v2 does."""

    async def v2(runnable: Any) -> list[tuple[str, str]]:
        return [
            (e["event"], e["name"])
            async for e in runnable.astream_events(
                {"q": "hi"},
                version="v2",
                include_types=["chain", "parser"],
                exclude_names=["RunnableSequence"],
                exclude_tags=["nothing"],
            )
        ]

    expected = await v2(_lc_chain("a b"))
    assert expected == [
        ("on_parser_start", "StrOutputParser"),
        ("on_parser_stream", "StrOutputParser"),
        ("on_parser_stream", "StrOutputParser"),
        ("on_parser_stream", "StrOutputParser"),
        ("on_parser_end", "StrOutputParser"),
    ]
    assert await v2(_chain("a b")) == expected


# -- executors -----------------------------------------------------------------------------------


def _async_tool(lib: Lib, name: str, prefix: str) -> Any:
    async def run(query: str) -> str:
        await asyncio.sleep(0)
        return f"{prefix} {query}"

    return lib.Tool(name=name, func=None, coroutine=run, description=f"{name} tool")


def _tools(lib: Lib, kind: str) -> list[Any] | None:
    """The executor's tools: sync (the default search and lookup), async, or one of each."""
    if kind == "sync":
        return None
    lookup = _async_tool(lib, "lookup", "entry")
    if kind == "mixed":
        return [lib.Tool(name="search", func=lambda q: f"results for {q}", description="s"), lookup]
    return [_async_tool(lib, "search", "results for"), lookup]


@pytest.mark.parametrize("tools", ["sync", "async", "mixed"])
@pytest.mark.parametrize("replies", [TOOL_CALLING_REPLIES, PARALLEL_CALLS_REPLIES])
async def test_tool_calling_agent_executor(tools: str, replies: tuple[Reply, ...]) -> None:
    inputs = {"input": "question"}
    lc_executor = tool_calling_executor(LC, replies, _tools(LC, tools))
    expected = await _v1(LC, lc_executor, inputs)
    got = await _v1(AL, tool_calling_executor(AL, replies, _tools(AL, tools)), inputs)
    assert _settled(got) == _settled(expected)
    assert got[0]["data"] == {"input": inputs}
    assert got[-1]["event"] == "on_chain_end" and got[-1]["name"] == "AgentExecutor"
    assert {"on_tool_start", "on_tool_end", "on_chat_model_stream"} <= {e["event"] for e in got}


async def test_tool_calling_agent_executor_with_steps_and_filters() -> None:
    inputs = {"input": "question"}
    filters = {"include_types": ["tool", "chat_model"], "exclude_names": ["lookup"]}
    options = {"return_intermediate_steps": True}
    lc_executor = tool_calling_executor(LC, TOOL_CALLING_REPLIES, **options)
    expected = await _v1(LC, lc_executor, inputs, **filters)
    executor = tool_calling_executor(AL, TOOL_CALLING_REPLIES, **options)
    got = await _v1(AL, executor, inputs, **filters)
    assert got == expected
    assert {e["name"] for e in got} == {"search", "ScriptedChatModel"}


EXECUTOR_SCENARIOS = [
    "plain_finish",
    "actions_then_finish",
    "parse_error_true",
    "return_direct_one_action",
    "iteration_limit",
    "runnable_agent",
    "runnable_multi_action_iteration_limit",
]


@pytest.mark.parametrize("name", EXECUTOR_SCENARIOS)
async def test_scripted_agent_executor(name: str) -> None:
    scenario = SCENARIOS[IDS.index(name)]
    expected = await _v1(LC, build(LC, scenario)[0], dict(scenario.inputs))
    got = await _v1(AL, build(AL, scenario)[0], dict(scenario.inputs))
    assert got == expected


async def test_executor_whose_tool_raises() -> None:
    scenario = SCENARIOS[IDS.index("tool_error")]
    inputs = dict(scenario.inputs)
    expected = await _v1_failing(LC, build(LC, scenario)[0], inputs, "tool broke on x")
    got = await _v1_failing(AL, build(AL, scenario)[0], inputs, "tool broke on x")
    assert got == expected
    assert _kinds(got)[-2:] == [("on_tool_start", "broken"), ("on_tool_end", "broken")]


async def test_initialize_agent_zero_shot() -> None:
    """A legacy agent on a text model, with `initialize_agent`'s tag on the executor's run only.

    Known difference, outside the event shapes: LangChain's `LLMChain` calls the text model by
    `generate_prompt` without metadata, so its model runs lack the `ls_*` metadata that actloop's
    (like any langchain-core `invoke`) carry; the model events are compared without it."""
    replies = ["I should search\nAction: search\nAction Input: cats", "Final Answer: done"]
    lc_tools = [LC.Tool(name="search", func=lambda q: f"r {q}", description="search")]
    tools = [AL.Tool(name="search", func=lambda q: f"r {q}", description="search")]
    zero_shot = "zero-shot-react-description"
    lc_agent = lc_initialize_agent(lc_tools, LcFakeListLLM(responses=replies), agent=zero_shot)
    agent = initialize_agent(tools, FakeListLLM(responses=replies), agent=zero_shot)
    expected = await _v1(LC, lc_agent, {"input": "q"})
    got = await _v1(AL, agent, {"input": "q"})
    llm = [e for e in got if e["event"].startswith("on_llm_")]
    assert {str(e["metadata"]) for e in llm} == {
        "{'ls_provider': 'fakelist', 'ls_model_type': 'llm', "
        "'ls_stop': ['\\nObservation:', '\\n\\tObservation:']}"
    }
    for event in llm:
        event["metadata"] = {}
    assert got == expected
    assert {str(e["tags"]) for e in got} == {"[]"}  # the executor's own tag is not inherited
    assert _kinds(got)[-1] == ("on_chain_end", "AgentExecutor")


async def test_executor_tags_are_its_own_run_s() -> None:
    """An executor's `tags` tag its own run only, as LangChain's chains' local tags (v2 shows
    the root's own tags; v1 the call's)."""

    async def tags(lib: Lib, version: str) -> list[tuple[str, str, list[str]]]:
        executor = tool_calling_executor(lib, TOOL_CALLING_REPLIES, tags=["mine"])
        events = executor.astream_events(
            {"input": "q"}, {"tags": ["call"]}, version=version, include_types=["chain", "tool"]
        )
        # sorted: the order of inherited and step tags differs (in v2 too), not the tags
        return [(e["event"], e["name"], sorted(e["tags"])) async for e in events]

    expected = await tags(LC, "v2")
    got = await tags(AL, "v2")
    assert got == expected
    assert got[0] == ("on_chain_start", "AgentExecutor", ["call", "mine"])
    assert ("on_tool_start", "search", ["call"]) in got
    with pytest.warns(LangChainDeprecationWarning):
        expected = await tags(LC, "v1")
    with pytest.warns(LangChainDeprecationWarning):
        got = await tags(AL, "v1")
    assert got == expected
    assert got[0] == ("on_chain_start", "AgentExecutor", ["call"])


# -- durable runs --------------------------------------------------------------------------------


async def test_durable_run_streams_the_same_events(tmp_path: Path) -> None:
    """A run journaled to a checkpointer gives the events of the same run without one."""
    inputs = {"input": "question"}
    expected = await _v1(LC, tool_calling_executor(LC, TOOL_CALLING_REPLIES), inputs)
    store = SqliteCheckpointer(tmp_path / "runs.db")
    executor = tool_calling_executor(AL, TOOL_CALLING_REPLIES, checkpointer=store)
    config = {"configurable": {"thread_id": "T"}}
    got = await _v1(AL, executor, inputs, config=config)
    assert got == expected
    record = store.get("T")
    assert record is not None and record.status == "finished"
    store.close()


class _SendTwice(BaseSingleActionAgent):
    """Sends "one", then finishes with what the send returned."""

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        if not intermediate_steps:
            return AgentAction("send", "one", "send one")
        return AgentFinish({"output": intermediate_steps[0][1]}, "done")


async def test_durable_run_paused_for_approval_then_resumed(tmp_path: Path) -> None:
    """v1 events of a run that pauses for approval, and of its `Resume`."""
    send = actloop.Tool(name="send", func=lambda text: f"sent {text}", description="send")
    send.requires_approval = True
    store = SqliteCheckpointer(tmp_path / "runs.db")
    executor = AgentExecutor(agent=_SendTwice(), tools=[send], checkpointer=store)
    config = {"configurable": {"thread_id": "T"}}
    first = await _v1(AL, executor, {"input": "q"}, config=config)
    assert _kinds(first) == [("on_chain_start", "AgentExecutor")] + [
        ("on_chain_stream", "AgentExecutor")
    ] * 2 + [("on_chain_end", "AgentExecutor")]
    pending = [{"id": "0-0", "tool": "send", "tool_input": "one", "log": "send one"}]
    paused = {"pending_approvals": pending, "thread_id": "T", "status": "paused"}
    assert first[-1]["data"]["output"].items() >= paused.items()
    resumed = await _v1(AL, executor, Resume(approve=True), config=config)
    assert _kinds(resumed) == [
        ("on_chain_start", "AgentExecutor"),
        ("on_chain_stream", "AgentExecutor"),  # the saved actions
        ("on_tool_start", "send"),
        ("on_tool_end", "send"),
        ("on_chain_stream", "AgentExecutor"),  # the steps
        ("on_chain_stream", "AgentExecutor"),  # the output
        ("on_chain_end", "AgentExecutor"),
    ]
    assert resumed[0]["data"] == {"input": plain(AL, Resume(approve=True))}
    assert resumed[2]["data"] == {}  # a tool given a string shows no input in v1
    assert resumed[3]["data"] == {"output": "sent one"}
    assert resumed[-1]["data"]["output"]["output"] == "sent one"
    assert len({e["run"] for e in resumed}) == 2
    store.close()
