"""Memory against langchain-classic 1.0.8: every memory class on an executor, sync and async,
three turns of a conversation, with the conversational legacy agents (through
`initialize_agent(..., memory=...)`) and an OpenAI functions agent whose prompt has a
`chat_history` placeholder, with and without `return_intermediate_steps`. Both sides send the
same prompts to the scripted models, give the same outputs and warnings, and end with the same
memory contents."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import langchain_core.messages as lc_messages
import langchain_core.prompts as lc_prompts
import langchain_core.tools as lc_tools
import pytest
from langchain_classic import agents as lc_agents
from langchain_classic import memory as lc_memory
from langchain_classic.chains import LLMChain as LcLLMChain
from test_classic_compat import (
    LcRecordingChat,
    LcRecordingLLM,
    OurRecordingLLM,
    _dump,
    _echo,
    _our_calls,
)

import actloop
from actloop import memory, messages, prompts, tools
from actloop.classic import AgentType, LLMChain, initialize_agent
from actloop.serialization import dumpd
from actloop.testing import ScriptedChatModel


def _words(batch: list[Any]) -> int:
    return sum(len(str(m.content).split()) for m in batch)


class OurCountingChat(ScriptedChatModel):
    """A scripted chat model that counts a message list's words as its tokens."""

    def get_num_tokens_from_messages(self, batch: list[Any]) -> int:
        return _words(batch)


class LcCountingChat(LcRecordingChat):
    """The langchain-core twin of `OurCountingChat`."""

    def get_num_tokens_from_messages(self, messages: list[Any], tools: Any = None) -> int:
        return _words(messages)


SUMMARIES = ["S1", "S2", "S3", "S4", "S5", "S6"]


def _memory_model(lib: str) -> Any:
    if lib == "ours":
        return OurCountingChat(SUMMARIES)
    return LcCountingChat(responses=[lc_messages.AIMessage(content=s) for s in SUMMARIES], calls=[])


def _memory(lib: str, kind: str, key: str, as_messages: bool) -> tuple[Any, Any]:
    """A memory of `kind` under `key`, and the model it calls (None if it calls none)."""
    mod: Any = memory if lib == "ours" else lc_memory
    common: dict[str, Any] = {"memory_key": key, "return_messages": as_messages}
    model = _memory_model(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if kind == "buffer":
            return mod.ConversationBufferMemory(**common), None
        if kind == "window":
            return mod.ConversationBufferWindowMemory(k=1, **common), None
        if kind == "token":
            return mod.ConversationTokenBufferMemory(llm=model, max_token_limit=9, **common), None
        if kind == "summary":
            return mod.ConversationSummaryMemory(llm=model, **common), model
        if kind == "summary_buffer":
            made = mod.ConversationSummaryBufferMemory(llm=model, max_token_limit=9, **common)
            return made, model
        if kind == "readonly":
            shared = mod.ConversationBufferMemory(**common)
            shared.save_context({"input": "earlier"}, {"output": "remembered"})
            return mod.ReadOnlySharedMemory(memory=shared), None
        assert kind == "combined"
        both = [
            mod.ConversationBufferMemory(input_key="input", **common),
            mod.ConversationBufferWindowMemory(memory_key="recent", input_key="input", k=1),
        ]
        return mod.CombinedMemory(memories=both), None


KINDS = ["buffer", "window", "token", "summary", "summary_buffer", "readonly", "combined"]


def _plain(value: Any) -> Any:
    """Memory contents comparable across the libraries."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [(m.type, m.content) for m in value]
    return value


TEXT_TURNS = [
    [
        "Thought: Do I need to use a tool? Yes\nAction: echo\nAction Input: hi",
        "Thought: Do I need to use a tool? No\nAI: it said hi",
    ],
    ["Thought: Do I need to use a tool? No\nAI: you are Ann"],
    ["Thought: Do I need to use a tool? No\nAI: bye Ann"],
]
JSON_TURNS = [
    [
        '```json\n{"action": "echo", "action_input": "hi"}\n```',
        '```json\n{"action": "Final Answer", "action_input": "it said hi"}\n```',
    ],
    ['```json\n{"action": "Final Answer", "action_input": "you are Ann"}\n```'],
    ['```json\n{"action": "Final Answer", "action_input": "bye Ann"}\n```'],
]
QUESTIONS = ["say hi with echo", "I am Ann; who am I?", "bye"]


def _agent_model(lib: str, chat: bool, replies: list[str]) -> Any:
    if chat:
        if lib == "ours":
            return ScriptedChatModel(replies)
        return LcRecordingChat(
            responses=[lc_messages.AIMessage(content=r) for r in replies], calls=[]
        )
    if lib == "ours":
        return OurRecordingLLM(responses=replies, calls=[])
    return LcRecordingLLM(responses=replies, calls=[])


def _calls(lib: str, model: Any) -> Any:
    if model is None:
        return None
    if lib == "ours" and isinstance(model, ScriptedChatModel):
        return _our_calls(model)
    return model.calls


def _executor(lib: str, kind: str, agent_type: str, steps: bool) -> tuple[Any, Any, Any]:
    chat = agent_type.startswith("chat")
    turns = JSON_TURNS if chat else TEXT_TURNS
    model = _agent_model(lib, chat, [r for turn in turns for r in turn])
    mem, mem_model = _memory(lib, kind, "chat_history", as_messages=chat)
    tool_mod: Any = tools if lib == "ours" else lc_tools
    echo = tool_mod.Tool(name="echo", func=_echo, description="Echo the text.")
    create = initialize_agent if lib == "ours" else lc_agents.initialize_agent
    agent_kind = AgentType(agent_type) if lib == "ours" else lc_agents.AgentType(agent_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        executor = create(
            [echo], model, agent=agent_kind, memory=mem, return_intermediate_steps=steps
        )
    return executor, model, mem_model


def _converse(executor: Any, run_async: bool) -> tuple[list[Any], list[str]]:
    """Three turns; the outputs (steps as plain tuples) and the warnings' texts."""
    outputs: list[Any] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", DeprecationWarning)
        for question in QUESTIONS:
            if run_async:
                out = asyncio.run(executor.ainvoke({"input": question}))
            else:
                out = executor.invoke({"input": question})
            outputs.append(_plain_output(out))
    return outputs, [str(w.message) for w in caught]


def _plain_output(out: dict[str, Any]) -> dict[str, Any]:
    plain = {k: _plain(v) for k, v in out.items() if k != "intermediate_steps"}
    if "intermediate_steps" in out:
        plain["intermediate_steps"] = [
            (a.tool, a.tool_input, o) for a, o in out["intermediate_steps"]
        ]
    return plain


def _contents(mem: Any) -> Any:
    state = _plain(mem.load_memory_variables({}))
    for name in ("buffer", "moving_summary_buffer"):
        if isinstance(getattr(mem, name, None), str):
            state[name] = getattr(mem, name)
    return state


AGENTS = ["conversational-react-description", "chat-conversational-react-description"]
# LangChain's async save of these two classes only appends the exchange (the summary is not
# extended, the token buffer not pruned); actloop's does what the sync save does (a documented
# difference), so their async run is compared with LangChain's sync run.
ASYNC_IMPROVED = {"summary", "token"}


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("steps", [False, True], ids=["output", "steps"])
@pytest.mark.parametrize("agent_type", AGENTS)
@pytest.mark.parametrize("kind", KINDS)
def test_memory_on_conversational_agents_matches_langchain(
    kind: str, agent_type: str, steps: bool, run_async: bool
) -> None:
    ours, ours_model, ours_mem_model = _executor("ours", kind, agent_type, steps)
    ref, ref_model, ref_mem_model = _executor("ref", kind, agent_type, steps)
    ref_async = run_async and kind not in ASYNC_IMPROVED
    ours_out, ours_warned = _converse(ours, run_async)
    ref_out, ref_warned = _converse(ref, ref_async)
    assert _calls("ours", ours_model) == _calls("ref", ref_model)
    assert _calls("ours", ours_mem_model) == _calls("ref", ref_mem_model)
    assert ours_out == ref_out
    assert ours_warned == ref_warned
    assert _contents(ours.memory) == _contents(ref.memory)
    assert [o["output"] for o in ours_out] == ["it said hi", "you are Ann", "bye Ann"]


@pytest.mark.parametrize("kind", sorted(ASYNC_IMPROVED))
def test_langchain_async_save_of_these_memories_stays_behind(kind: str) -> None:
    """What the documented difference is about: LangChain's async run leaves its summary or
    token limit behind its sync run; actloop's async run equals the sync one (test above)."""
    agent_type = "conversational-react-description"
    sync_ref = _executor("ref", kind, agent_type, False)[0]
    async_ref = _executor("ref", kind, agent_type, False)[0]
    _converse(sync_ref, False)
    _converse(async_ref, True)
    assert _contents(sync_ref.memory) != _contents(async_ref.memory)


def _functions_executor(lib: str, steps: bool) -> tuple[Any, Any]:
    call = {"function_call": {"name": "echo", "arguments": '{"__arg1": "hi"}'}}
    mod: Any = messages if lib == "ours" else lc_messages
    replies = [
        mod.AIMessage(content="", additional_kwargs=call),
        mod.AIMessage(content="it said hi"),
        mod.AIMessage(content="you are Ann"),
        mod.AIMessage(content="bye Ann"),
    ]
    model: Any = (
        ScriptedChatModel(replies)
        if lib == "ours"
        else LcRecordingChat(responses=replies, calls=[])
    )
    prompt_mod: Any = prompts if lib == "ours" else lc_prompts
    prompt = prompt_mod.ChatPromptTemplate.from_messages(
        [
            ("system", "Be brief."),
            prompt_mod.MessagesPlaceholder(variable_name="chat_history"),
            ("human", "{input}"),
            prompt_mod.MessagesPlaceholder(variable_name="agent_scratchpad"),
        ]
    )
    tool_mod: Any = tools if lib == "ours" else lc_tools
    echo = tool_mod.Tool(name="echo", func=_echo, description="Echo the text.")
    create = (
        actloop.create_openai_functions_agent
        if lib == "ours"
        else (lc_agents.create_openai_functions_agent)
    )
    executor_cls: Any = actloop.AgentExecutor if lib == "ours" else lc_agents.AgentExecutor
    mem, _ = _memory(lib, "buffer", "chat_history", as_messages=True)
    executor = executor_cls(
        agent=create(model, [echo], prompt),
        tools=[echo],
        memory=mem,
        return_intermediate_steps=steps,
        stream_runnable=False,
    )
    return executor, model


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("steps", [False, True], ids=["output", "steps"])
def test_memory_on_an_openai_functions_agent_matches_langchain(
    steps: bool, run_async: bool
) -> None:
    ours, ours_model = _functions_executor("ours", steps)
    ref, ref_model = _functions_executor("ref", steps)
    ours_out, ours_warned = _converse(ours, run_async)
    ref_out, ref_warned = _converse(ref, run_async)
    assert _our_calls(ours_model) == ref_model.calls
    assert ours_out == ref_out
    assert ours_warned == ref_warned
    assert _contents(ours.memory) == _contents(ref.memory)
    assert len(_contents(ours.memory)["chat_history"]) == 6


def _llm_chain(lib: str, run_async: bool) -> tuple[list[Any], Any, Any]:
    replies = ["Hello Ann", "You are Ann", "Bye"]
    model = _agent_model(lib, False, replies)
    prompt_mod: Any = prompts if lib == "ours" else lc_prompts
    prompt = prompt_mod.PromptTemplate.from_template("{history}\nHuman: {input}\nAI:")
    mem, _ = _memory(lib, "window", "history", as_messages=False)
    cls: Any = LLMChain if lib == "ours" else LcLLMChain
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        chain = cls(llm=model, prompt=prompt, memory=mem)
    outs = []
    for question in QUESTIONS:
        if run_async:
            outs.append(asyncio.run(chain.ainvoke(question)))
        else:
            outs.append(chain.invoke(question))
    return outs, model, mem


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_memory_on_an_llm_chain_matches_langchain(run_async: bool) -> None:
    ours_out, ours_model, ours_mem = _llm_chain("ours", run_async)
    ref_out, ref_model, ref_mem = _llm_chain("ref", run_async)
    assert ours_model.calls == ref_model.calls
    assert ours_out == ref_out
    assert ours_out[2] == {
        "input": "bye",
        "history": "Human: I am Ann; who am I?\nAI: You are Ann",
        "text": "Bye",
    }
    assert _contents(ours_mem) == _contents(ref_mem)


def test_a_langchain_memory_works_on_an_actloop_executor() -> None:
    ours, ours_model, _ = _executor("ours", "buffer", AGENTS[1], False)
    ref, ref_model, _ = _executor("ref", "buffer", AGENTS[1], False)
    ours.memory = _memory("ref", "buffer", "chat_history", as_messages=True)[0]
    ours_out, _ = _converse(ours, False)
    ref_out, _ = _converse(ref, False)
    assert _our_calls(ours_model) == ref_model.calls
    # the messages a LangChain memory loads are converted (a copy: LangChain's output keeps the
    # store's live list, which later turns extend)
    assert [o["output"] for o in ours_out] == [o["output"] for o in ref_out]
    assert _contents(ours.memory) == _contents(ref.memory)
    assert type(ours.memory.chat_memory.messages[0]) is lc_messages.HumanMessage


def test_memory_messages_are_the_same_when_serialized() -> None:
    mem, _ = _memory("ours", "buffer", "history", as_messages=True)
    ref, _ = _memory("ref", "buffer", "history", as_messages=True)
    for m in (mem, ref):
        m.save_context({"input": "hi"}, {"output": "yo"})
    from langchain_core.load import dumpd as lc_dumpd

    ours_dumped = [_dump(m, dumpd) for m in mem.load_memory_variables({})["history"]]
    ref_dumped = [_dump(m, lc_dumpd) for m in ref.load_memory_variables({})["history"]]
    assert ours_dumped == ref_dumped


# -- RunnableWithMessageHistory ------------------------------------------------------------------


def _with_history(lib: str, shape: str) -> tuple[Any, Any, dict[str, Any]]:
    """A runnable with message history on both sides; the model and the session store."""
    from langchain_core.chat_history import InMemoryChatMessageHistory as LcHistory
    from langchain_core.runnables.history import RunnableWithMessageHistory as LcWith

    replies = ["Hello Ann", "You are Ann", "Bye"]
    mod: Any = messages if lib == "ours" else lc_messages
    model: Any = (
        ScriptedChatModel(replies)
        if lib == "ours"
        else LcRecordingChat(responses=[mod.AIMessage(content=r) for r in replies], calls=[])
    )
    store: dict[str, Any] = {}
    history_cls: Any = memory.InMemoryChatMessageHistory if lib == "ours" else LcHistory

    def get(session_id: str) -> Any:
        if session_id not in store:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                store[session_id] = history_cls()
        return store[session_id]

    with_history: Any = actloop.runnables.RunnableWithMessageHistory if lib == "ours" else LcWith
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if shape == "messages":
            return with_history(model, get), model, store
        return _prompted(lib, with_history, model, get), model, store


def _prompted(lib: str, with_history: Any, model: Any, get: Any) -> Any:
    prompt_mod: Any = prompts if lib == "ours" else lc_prompts
    prompt = prompt_mod.ChatPromptTemplate.from_messages(
        [
            ("system", "Be brief."),
            prompt_mod.MessagesPlaceholder(variable_name="history"),
            ("human", "{question}"),
        ]
    )
    return with_history(
        prompt | model, get, input_messages_key="question", history_messages_key="history"
    )


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("shape", ["messages", "prompt"])
def test_runnable_with_message_history_matches_langchain(shape: str, run_async: bool) -> None:
    results: dict[str, Any] = {}
    for lib in ("ours", "ref"):
        chain, model, store = _with_history(lib, shape)
        outs = []
        for i, question in enumerate(QUESTIONS):
            value: Any = question if shape == "messages" else {"question": question}
            config = {"configurable": {"session_id": "a" if i < 2 else "b"}}
            if run_async:
                out = asyncio.run(chain.ainvoke(value, config))
            else:
                out = chain.invoke(value, config)
            outs.append((out.type, out.content))
        histories = {k: _plain(v.messages) for k, v in store.items()}
        results[lib] = (outs, _calls(lib, model), histories)
    assert results["ours"] == results["ref"]
    assert results["ours"][2]["a"] == [
        ("human", "say hi with echo"),
        ("ai", "Hello Ann"),
        ("human", "I am Ann; who am I?"),
        ("ai", "You are Ann"),
    ]


def test_runnable_with_message_history_refuses_a_missing_session_as_langchain() -> None:
    errors = []
    for lib in ("ours", "ref"):
        chain = _with_history(lib, "prompt")[0]
        with pytest.raises(ValueError) as caught:
            chain.invoke({"question": "hi"})
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("Missing keys ['session_id'] in config['configurable']")
