"""`LLMToolEmulator` against LangChain 1.5's: emulated tools are answered by the emulator model
(sent LangChain's prompt, echoed back here so the final messages carry it), the others run."""

from __future__ import annotations

import asyncio
from typing import Any

import langchain.agents.middleware as lc_mw
import pytest
from _both import agents, reply, state_fields
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage as LcAIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

import actloop.agents.middleware as al_mw
from actloop.messages import AIMessage
from actloop.testing import FunctionChatModel


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def weather(city: str) -> str:
    """The weather in a city."""
    raise NotImplementedError("emulated")


TOOLS = [add, weather]
REPLIES = [
    reply(
        "",
        ("weather", {"city": "Paris"}, "c1"),
        ("add", {"a": 2, "b": 3}, "c2"),
        id="r1",
    ),
    reply("", ("weather", {"city": "Oslo"}, "c3"), id="r2"),
    reply("done", id="r3"),
]


class LcEcho(GenericFakeChatModel):
    """LangChain's side of the emulator: replies with the prompt it was sent."""

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> ChatResult:
        message = LcAIMessage(content=f"echo: {messages[-1].content}")
        return ChatResult(generations=[ChatGeneration(message=message)])


def al_echo() -> FunctionChatModel:
    """actloop's side of the emulator: replies with the prompt it was sent."""
    return FunctionChatModel(lambda messages: AIMessage(f"echo: {messages[-1].content}"))


def outcome(agent: Any, *, use_async: bool) -> dict[str, Any]:
    """The final state as fields."""
    inputs = {"messages": [("user", "go")]}
    if use_async:
        return state_fields(asyncio.run(agent.ainvoke(inputs)))
    return state_fields(agent.invoke(inputs))


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("emulated", [["weather"], None])
def test_emulated_and_real_tools(emulated: list[str] | None, use_async: bool) -> None:
    lc, al = agents(
        REPLIES,
        TOOLS,
        lc_middleware=[lc_mw.LLMToolEmulator(tools=emulated, model=LcEcho(messages=iter([])))],
        al_middleware=[al_mw.LLMToolEmulator(tools=emulated, model=al_echo())],
    )
    expected = outcome(lc, use_async=use_async)
    assert outcome(al, use_async=use_async) == expected
    answers = {m["tool_call_id"]: m["content"] for m in expected["messages"] if m["type"] == "tool"}
    assert answers["c1"] == (
        "echo: You are emulating a tool call for testing purposes.\n\n"
        "Tool: weather\nDescription: The weather in a city.\nArguments: {'city': 'Paris'}\n\n"
        "Generate a realistic response that this tool would return given these arguments.\n"
        "Return ONLY the tool's output, no explanation or preamble. "
        "Introduce variation into your responses."
    )
    assert (answers["c2"] == "5") is (emulated is not None)


def test_empty_list_emulates_nothing() -> None:
    replies = [reply("", ("add", {"a": 2, "b": 3}, "c1"), id="r1"), reply("done", id="r2")]
    lc, al = agents(
        replies,
        TOOLS,
        lc_middleware=[lc_mw.LLMToolEmulator(tools=[], model=LcEcho(messages=iter([])))],
        al_middleware=[al_mw.LLMToolEmulator(tools=[], model=al_echo())],
    )
    expected = outcome(lc, use_async=False)
    assert outcome(al, use_async=False) == expected
    assert expected["messages"][2]["content"] == "5"
