"""LangChain chat models and tools used in actloop through `from_langchain`.

The models are langchain-core's own fakes (`GenericFakeChatModel`, `FakeMessagesListChatModel`).
`RecordingFake` adds only what a real LangChain model has, `bind_tools`, and a record of its calls;
it builds on FakeMessagesListChatModel because GenericFakeChatModel streams nothing for a reply
that has tool calls but no content.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core import messages as lc
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.outputs import ChatResult
from langchain_core.tools import ToolException as LCToolException
from langchain_core.tools import tool as lc_tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from actloop import (
    AgentExecutor,
    ChatPromptTemplate,
    MessagesPlaceholder,
    create_tool_calling_agent,
)
from actloop.integrations.langchain import (
    LangChainChatModel,
    LangChainTool,
    from_langchain,
    message_from_langchain,
    message_to_langchain,
)
from actloop.messages import (
    AIMessage,
    AIMessageChunk,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from actloop.tools import tool


class RecordingFake(FakeMessagesListChatModel):
    """FakeMessagesListChatModel that records each call and can bind tools like a real model."""

    calls: list[dict[str, Any]] = []  # noqa: RUF012  # a pydantic field, copied per instance

    def _generate(
        self,
        messages: list[Any],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append({"messages": messages, "stop": stop, "kwargs": kwargs})
        return super()._generate(messages, stop, run_manager, **kwargs)

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


def recording(*replies: lc.AIMessage) -> RecordingFake:
    return RecordingFake(responses=list(replies), calls=[])


@lc_tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@lc_tool
def fragile(text: str) -> str:
    """Fails on purpose."""
    raise LCToolException(f"cannot handle {text!r}")


@lc_tool(response_format="content_and_artifact")
def fetch(url: str) -> tuple[str, dict[str, Any]]:
    """Fetch a page."""
    return f"fetched {url}", {"bytes": 42}


CALL = {"name": "multiply", "args": {"a": 6, "b": 7}, "id": "call_1", "type": "tool_call"}


# -- chat models -----------------------------------------------------------------------------------


def test_invoke_converts_messages_both_ways() -> None:
    fake = recording(
        lc.AIMessage(
            "Hello there",
            id="r1",
            usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
        )
    )
    model = from_langchain(fake)
    assert isinstance(model, LangChainChatModel)
    reply = model.invoke(
        [SystemMessage("Be nice."), HumanMessage("Hi", name="ann")], stop=["\nObs"]
    )
    assert reply == AIMessage(
        "Hello there",
        id="r1",
        usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
    )
    [call] = fake.calls
    assert call["messages"] == [lc.SystemMessage("Be nice."), lc.HumanMessage("Hi", name="ann")]
    assert call["stop"] == ["\nObs"]


def test_stream_yields_langchain_tokens() -> None:
    model = from_langchain(
        GenericFakeChatModel(messages=iter([lc.AIMessage("hello big world", id="r1")]))
    )
    chunks = list(model.stream("hi"))
    assert chunks == [
        AIMessageChunk("hello", id="r1"),
        AIMessageChunk(" ", id="r1"),
        AIMessageChunk("big", id="r1"),
        AIMessageChunk(" ", id="r1"),
        AIMessageChunk("world", id="r1", chunk_position="last"),
    ]


def test_tool_calls_survive_invoke_and_stream() -> None:
    reply = lc.AIMessage("", id="r1", tool_calls=[CALL])  # pyright: ignore[reportArgumentType]
    model = from_langchain(FakeMessagesListChatModel(responses=[reply, reply]))
    assert model.invoke("go").tool_calls == [CALL]
    chunks = list(model.stream("go"))
    assert chunks[0].tool_call_chunks == [
        {
            "name": "multiply",
            "args": '{"a": 6, "b": 7}',
            "id": "call_1",
            "index": None,
            "type": "tool_call_chunk",
        }
    ]
    whole = chunks[0] + chunks[1:]
    assert (whole.tool_calls, whole.id) == ([CALL], "r1")


def test_streamed_tool_call_fragments_merge() -> None:
    raw = [
        {
            "index": 0,
            "id": "call_1",
            "type": "function",
            "function": {"name": "multiply", "arguments": '{"a": 6, "b": 7}'},
        }
    ]
    model = from_langchain(
        GenericFakeChatModel(
            messages=iter([lc.AIMessage("", id="r1", additional_kwargs={"tool_calls": raw})])
        )
    )
    chunks = list(model.stream("go"))
    whole = chunks[0] + chunks[1:]
    assert whole.tool_calls == [CALL]


async def test_ainvoke_and_astream() -> None:
    model = from_langchain(
        GenericFakeChatModel(
            messages=iter([lc.AIMessage("one", id="a"), lc.AIMessage("two three", id="b")])
        )
    )
    assert await model.ainvoke("x") == AIMessage("one", id="a")
    chunks = [c async for c in model.astream("y")]
    assert [c.content for c in chunks] == ["two", " ", "three"]


def test_bind_tools_delegates_to_the_langchain_model() -> None:
    @tool
    def lookup(term: str) -> str:
        """Look a term up."""
        return term

    fake = recording(lc.AIMessage("ok", id="r1"))
    bound = from_langchain(fake).bind_tools([from_langchain(multiply), lookup], tool_choice="auto")
    assert isinstance(bound, LangChainChatModel)
    assert bound.invoke("go").content == "ok"
    tools = fake.calls[0]["kwargs"]["tools"]
    assert [t["function"]["name"] for t in tools] == ["multiply", "lookup"]
    assert tools[0] == convert_to_openai_tool(multiply)
    assert fake.calls[0]["kwargs"]["tool_choice"] == "auto"


def test_a_bound_langchain_model_can_be_wrapped() -> None:
    fake = recording(lc.AIMessage("ok", id="r1"))
    model = from_langchain(fake.bind_tools([multiply]))
    assert model.invoke("go").content == "ok"
    assert fake.calls[0]["kwargs"]["tools"][0]["function"]["name"] == "multiply"


@pytest.mark.parametrize(
    "message",
    [
        HumanMessage("hi", name="ann", id="1"),
        SystemMessage("rules"),
        AIMessage(
            "",
            tool_calls=[CALL],
            usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
        ),  # pyright: ignore[reportArgumentType]
        AIMessageChunk(
            "par",
            tool_call_chunks=[{"name": "f", "args": '{"a"', "id": "c", "index": 0}],
            chunk_position="last",
        ),
        ToolMessage("42", tool_call_id="call_1", artifact={"raw": 42}, status="error"),
        FunctionMessage("out", name="f"),
    ],
    ids=["human", "system", "ai", "ai-chunk", "tool", "function"],
)
def test_messages_round_trip(message: Any) -> None:
    there = message_to_langchain(message)
    assert type(there).__name__ == type(message).__name__
    assert message_from_langchain(there) == message


def test_a_langchain_chat_message_maps_by_role() -> None:
    assert message_from_langchain(lc.ChatMessage("hey", role="user")) == HumanMessage("hey")
    with pytest.raises(TypeError, match="role 'critic'"):
        message_from_langchain(lc.ChatMessage("hey", role="critic"))


def test_from_langchain_rejects_other_objects() -> None:
    with pytest.raises(TypeError, match="got int"):
        from_langchain(3)


# -- tools -----------------------------------------------------------------------------------------


def test_a_langchain_tool_runs_as_an_actloop_tool() -> None:
    adapted = from_langchain(multiply)
    assert isinstance(adapted, LangChainTool)
    assert (adapted.name, adapted.description) == ("multiply", "Multiply two integers.")
    assert adapted.args == {
        "a": {"title": "A", "type": "integer"},
        "b": {"title": "B", "type": "integer"},
    }
    assert adapted.run({"a": 6, "b": 7}) == 42
    assert adapted.invoke(
        {"name": "multiply", "args": {"a": 2, "b": 3}, "id": "c1", "type": "tool_call"}
    ) == ToolMessage("6", tool_call_id="c1", name="multiply")


async def test_a_langchain_tool_runs_async() -> None:
    assert await from_langchain(multiply).arun({"a": 3, "b": 4}) == 12


def test_bad_arguments_become_an_observation() -> None:
    observation = from_langchain(multiply).run({"a": "six", "b": 7})
    assert isinstance(observation, str) and "multiply" in observation and "a" in observation


def test_a_langchain_tool_exception_is_handled_like_actloops() -> None:
    adapted = from_langchain(fragile)
    assert isinstance(adapted, LangChainTool)
    adapted.handle_tool_error = True
    assert adapted.run({"text": "x"}) == "cannot handle 'x'"


def test_content_and_artifact_tools_keep_the_artifact() -> None:
    message = from_langchain(fetch).invoke(
        {"name": "fetch", "args": {"url": "a.b"}, "id": "c9", "type": "tool_call"}
    )
    assert message == ToolMessage(
        "fetched a.b", tool_call_id="c9", name="fetch", artifact={"bytes": 42}
    )


# -- agents ----------------------------------------------------------------------------------------


def _prompt() -> ChatPromptTemplate:
    return ChatPromptTemplate.from_messages(
        [
            ("system", "You are a calculator."),
            ("human", "{input}"),
            MessagesPlaceholder("agent_scratchpad"),
        ]
    )


def test_an_agent_runs_a_langchain_model_and_tool() -> None:
    fake = recording(
        lc.AIMessage("", id="r1", tool_calls=[CALL]),  # pyright: ignore[reportArgumentType]
        lc.AIMessage("6 times 7 is 42.", id="r2"),
    )
    tools = [from_langchain(multiply)]
    agent = create_tool_calling_agent(from_langchain(fake), tools, _prompt())
    executor = AgentExecutor(agent=agent, tools=tools, return_intermediate_steps=True)
    result = executor.invoke({"input": "What is 6 times 7?"})
    assert result["output"] == "6 times 7 is 42."
    [(action, observation)] = result["intermediate_steps"]
    assert (action.tool, action.tool_input, action.tool_call_id, observation) == (
        "multiply",
        {"a": 6, "b": 7},
        "call_1",
        42,
    )
    second = fake.calls[1]["messages"]
    assert second[-1] == lc.ToolMessage(
        "42", tool_call_id="call_1", additional_kwargs={"name": "multiply"}
    )
    assert second[-2].tool_calls == [CALL]


async def test_an_agent_runs_a_langchain_model_async() -> None:
    fake = recording(
        lc.AIMessage("", id="r1", tool_calls=[CALL]),  # pyright: ignore[reportArgumentType]
        lc.AIMessage("42", id="r2"),
    )
    tools = [from_langchain(multiply)]
    agent = create_tool_calling_agent(from_langchain(fake), tools, _prompt())
    result = await AgentExecutor(agent=agent, tools=tools).ainvoke({"input": "6*7?"})
    assert result["output"] == "42"


# -- the missing extra -----------------------------------------------------------------------------


def test_a_missing_langchain_core_names_the_extra_to_install() -> None:
    code = """
        import sys
        sys.modules["langchain_core"] = None
        from actloop.integrations.langchain import from_langchain
        from actloop.models import MissingDependencyError
        try:
            from_langchain(object())
        except MissingDependencyError as exc:
            print(exc)
        """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    assert result.stderr == ""
    assert (
        result.stdout
        == 'from_langchain needs the langchain-core package: pip install "actloop[langchain]"\n'
    )
