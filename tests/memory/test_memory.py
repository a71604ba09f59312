"""Memory on actloop's own terms: durable runs (memory loaded once and saved with the run's inputs,
saved after the run's finish is written, once), custom message stores, the warnings, and the
errors of a memory that cannot tell which input or output to keep."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish, Tool, exceptions
from actloop.checkpoint import SqliteCheckpointer
from actloop.exceptions import ActloopDeprecationWarning
from actloop.memory import (
    BaseChatMessageHistory,
    CombinedMemory,
    ConversationBufferMemory,
    ConversationBufferWindowMemory,
    SimpleMemory,
)
from actloop.messages import AIMessage, BaseMessage, HumanMessage
from actloop.testing import ScriptedAgent

pytestmark = pytest.mark.filterwarnings("ignore::actloop.exceptions.ActloopDeprecationWarning")

KEYS = ["input", "history"]


def _finish(text: str) -> AgentFinish:
    return AgentFinish({"output": text}, text)


def _echo(text: str) -> str:
    return f"echo: {text}"


def _plain(messages: Sequence[BaseMessage]) -> list[tuple[str, Any]]:
    return [(m.type, m.content) for m in messages]


def test_a_durable_run_uses_the_memory_it_started_with_and_saves_once_when_it_finishes(
    tmp_path: Path,
) -> None:
    """The run pauses for approval: nothing is saved. Another conversation turn is saved
    meanwhile. The resumed run plans with the history saved in its inputs when it started, and
    its exchange is saved once, when it finishes."""
    memory = ConversationBufferMemory()
    send = Tool(name="send", func=_echo, description="Send.", requires_approval=True)
    agent = ScriptedAgent([AgentAction("send", "hi", "send hi"), _finish("sent")], input_keys=KEYS)
    store = SqliteCheckpointer(tmp_path / "runs.db")
    executor = AgentExecutor(agent=agent, tools=[send], checkpointer=store, memory=memory)
    config: Any = {"configurable": {"thread_id": "T"}}
    memory.save_context({"input": "before"}, {"output": "first"})

    paused = executor.invoke({"input": "send hi"}, config)
    assert paused["status"] == "paused"
    assert paused["history"] == "Human: before\nAI: first"
    assert memory.buffer == "Human: before\nAI: first"  # a paused run saves nothing

    memory.save_context({"input": "meanwhile"}, {"output": "other"})
    done = executor.resume("T", approve=True)
    assert done == {"input": "send hi", "history": "Human: before\nAI: first", "output": "sent"}
    # the resumed run replays its journaled plan and plans once more, with the saved history
    assert [call.inputs["history"] for call in agent.calls] == ["Human: before\nAI: first"] * 2
    assert memory.buffer == (
        "Human: before\nAI: first\nHuman: meanwhile\nAI: other\nHuman: send hi\nAI: sent"
    )


def test_a_failed_durable_run_saves_nothing_and_its_resume_saves_once(tmp_path: Path) -> None:
    memory = ConversationBufferMemory(return_messages=True)
    agent = ScriptedAgent(
        [AgentAction("echo", "a", "echo a"), RuntimeError("crash"), _finish("done")],
        input_keys=KEYS,
    )
    echo = Tool(name="echo", func=_echo, description="Echo.")
    store = SqliteCheckpointer(tmp_path / "runs.db")
    executor = AgentExecutor(agent=agent, tools=[echo], checkpointer=store, memory=memory)
    config: Any = {"configurable": {"thread_id": "T"}}
    with pytest.raises(RuntimeError, match="crash"):
        executor.invoke({"input": "go"}, config)
    assert memory.chat_memory.messages == []
    assert executor.resume("T")["output"] == "done"
    assert _plain(memory.chat_memory.messages) == [("human", "go"), ("ai", "done")]
    # the resumed run plans with the history saved in its inputs (empty), not the memory's
    # current list (which the first attempt's inputs share, as LangChain's do)
    assert agent.calls[-1].inputs["history"] == []
    assert len(agent.calls) == 3


class ListStore(BaseChatMessageHistory):
    """A user's store: only `messages`, `add_messages` and `clear` (the rest is inherited)."""

    def __init__(self) -> None:
        self.rows: list[BaseMessage] = []
        self.writes = 0

    @property
    def messages(self) -> list[BaseMessage]:  # pyright: ignore[reportIncompatibleVariableOverride]
        return list(self.rows)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self.writes += 1
        self.rows.extend(messages)

    def clear(self) -> None:
        self.rows = []


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_a_custom_store_keeps_the_conversation(run_async: bool) -> None:
    store = ListStore()
    memory = ConversationBufferWindowMemory(chat_memory=store, k=1, return_messages=True)
    agent = ScriptedAgent([_finish("one"), _finish("two")], input_keys=KEYS)
    executor = AgentExecutor(agent=agent, tools=[], memory=memory)
    for text in ("a", "b"):
        if run_async:
            asyncio.run(executor.ainvoke(text))  # a bare input goes to the key memory leaves
        else:
            executor.invoke(text)
    assert store.writes == 2
    assert _plain(store.rows) == [("human", "a"), ("ai", "one"), ("human", "b"), ("ai", "two")]
    assert _plain(agent.calls[1].inputs["history"]) == [("human", "a"), ("ai", "one")]
    store.add_user_message("c")
    store.add_ai_message(AIMessage("three"))
    assert str(store).endswith("Human: c\nAI: three")
    asyncio.run(memory.aclear())
    assert store.rows == []


def test_stream_and_iter_save_the_final_output_like_langchain() -> None:
    """LangChain's iterator saves its final chunk, which has `messages` besides `output`: the
    memory takes `output` and warns."""
    memory = ConversationBufferMemory()
    agent = ScriptedAgent([_finish("one"), _finish("two")], input_keys=KEYS)
    executor = AgentExecutor(agent=agent, tools=[], memory=memory)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        chunks = list(executor.stream({"input": "a"}))
        steps = list(executor.iter({"input": "b"}))
    assert chunks[-1]["output"] == "one" and steps[-1]["output"] == "two"
    assert memory.buffer == "Human: a\nAI: one\nHuman: b\nAI: two"
    assert [str(w.message) for w in caught] == [
        "'ConversationBufferMemory' got multiple output keys: dict_keys(['output', "
        "'messages']). The default 'output' key is being used. If this is not desired, please "
        "manually set 'output_key'."
    ] * 2


def test_a_memory_that_cannot_tell_the_input_says_so() -> None:
    memory = ConversationBufferMemory()
    agent = ScriptedAgent([_finish("x")], input_keys=["input", "extra", "history"])
    executor = AgentExecutor(agent=agent, tools=[], memory=memory)
    with pytest.raises(ValueError, match=r"^One input key expected got \['"):
        executor.invoke({"input": "a", "extra": "b"})
    with pytest.raises(ValueError, match="A single string input was passed in"):
        executor.invoke("bare")


def test_a_memory_that_cannot_tell_the_output_says_so() -> None:
    memory = ConversationBufferMemory()
    with pytest.raises(ValueError) as caught:
        memory.save_context({"input": "a"}, {"x": "1", "y": "2"})
    assert str(caught.value) == (
        "Got multiple output keys: dict_keys(['x', 'y']), cannot determine which to store in "
        "memory. Please set the 'output_key' explicitly."
    )
    keyed = ConversationBufferMemory(input_key="q", output_key="y")
    keyed.save_context({"q": "a", "other": "b"}, {"x": "1", "y": "2"})
    assert keyed.buffer == "Human: a\nAI: 2"


def test_combined_memory_refuses_a_variable_twice() -> None:
    with pytest.raises(ValueError) as caught:
        CombinedMemory(memories=[SimpleMemory(memories={"a": 1}), SimpleMemory(memories={"a": 2})])
    assert str(caught.value) == (
        "The same variables {'a'} are found in multiplememory object, which is not allowed by "
        "CombinedMemory."
    )


def test_memory_classes_warn_once_with_langchains_text() -> None:
    exceptions._WARNED.discard("ConversationBufferWindowMemory")  # pyright: ignore[reportPrivateUsage]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ConversationBufferWindowMemory()
        ConversationBufferWindowMemory()
    assert [
        (issubclass(w.category, ActloopDeprecationWarning), str(w.message)) for w in caught
    ] == [
        (
            True,
            "The class `ConversationBufferWindowMemory` was deprecated in LangChain 0.3.1 and "
            "will be removed in 2.0.0. Use `langchain.agents.create_agent` instead. For agents "
            "that need to remember prior interactions, use `create_agent` with checkpointing or "
            "the `Store` API. See https://docs.langchain.com/oss/python/langchain/short-term-"
            "memory and https://docs.langchain.com/oss/python/langchain/long-term-memory",
        )
    ]
    assert caught[0].filename == __file__


def test_no_memory_changes_nothing() -> None:
    agent = ScriptedAgent([_finish("x")], input_keys=["input"])
    executor = AgentExecutor(agent=agent, tools=[])
    assert executor.invoke("a") == {"input": "a", "output": "x"}
    assert HumanMessage("a").content == "a"
