"""SummarizationMiddleware when the summary call overflows the model's context, against LangChain.

Both libraries' `ChatOpenAI` talk to the same kind of loopback OpenAI server, which answers the
first summary call with OpenAI's 400 `context_length_exceeded` and the second with a summary.
LangChain 1.5 catches langchain-openai's `ContextOverflowError` and asks once more with the middle
of the history cut out; actloop must send the very same two requests and give the same summary,
and raise the same way when the shorter prompt overflows too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents.middleware import SummarizationMiddleware as LcSummarization
from langchain_core.messages import HumanMessage as LcHuman
from langchain_openai import ChatOpenAI as LcChatOpenAI

from actloop.agents import create_agent
from actloop.agents.middleware import SummarizationMiddleware
from actloop.messages import AIMessage, HumanMessage
from actloop.models import BadRequestError, ChatOpenAI, ContextOverflowError
from actloop.testing import ScriptedChatModel
from support.openai_server import LoopbackServer, Reply, message, running


def overflow(text: str = "prompt is too long: 250000 tokens > 200000 maximum") -> Reply:
    """A server's answer to a prompt longer than the context window (OpenAI's error code; the
    text one langchain-openai recognizes: it reads the message only)."""
    error = {"message": text, "type": "invalid_request_error", "code": "context_length_exceeded"}
    return Reply("http", status=400, body=json.dumps({"error": error}).encode())


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


def history() -> list[tuple[str, str]]:
    """Ten long turns; the retry keeps the first and the last, not the middle."""
    return [("human", f"turn-{i} " * 500) for i in range(10)]


def prompts(server: LoopbackServer) -> list[str]:
    """The user prompt of each summary request the server received."""
    return [body["messages"][-1]["content"] for body in server.bodies]


def actloop_summary(server: LoopbackServer, max_input_tokens: int | None = None) -> str:
    model = ChatOpenAI("gpt-test", base_url=server.url, api_key="k", max_retries=0)
    if max_input_tokens is not None:
        model.profile = {"max_input_tokens": max_input_tokens}
    middleware = SummarizationMiddleware(model=model, trim_tokens_to_summarize=None)
    return middleware._create_summary([HumanMessage(text) for _, text in history()])


def langchain_summary(server: LoopbackServer, max_input_tokens: int | None = None) -> str:
    profile: Any = None if max_input_tokens is None else {"max_input_tokens": max_input_tokens}
    model = LcChatOpenAI(
        model="gpt-test", base_url=server.url, api_key="k", max_retries=0, profile=profile
    )
    middleware = LcSummarization(model=model, trim_tokens_to_summarize=None)
    return middleware._create_summary([LcHuman(text) for _, text in history()])


@pytest.mark.parametrize("max_input_tokens", [None, 2000])
def test_an_overflowing_summary_call_is_retried_with_the_middle_cut_as_langchain_does(
    max_input_tokens: int | None,
) -> None:
    sent: list[list[str]] = []
    results: list[str] = []
    for summarize in (langchain_summary, actloop_summary):
        for srv in running():
            srv.script(overflow(), message("Summary."))
            results.append(summarize(srv, max_input_tokens))
            sent.append(prompts(srv))
    assert results == ["Summary.", "Summary."]
    assert sent[1] == sent[0]
    first, retry = sent[1]
    assert len(retry) < len(first)
    assert "turn-0" in retry and "turn-9" in retry and "turn-5" not in retry
    assert "[... middle of conversation omitted ...]" in retry


def test_an_overflow_on_the_retry_too_raises_context_overflow(server: LoopbackServer) -> None:
    server.script(overflow(), overflow())
    with pytest.raises(ContextOverflowError) as info:
        actloop_summary(server)
    assert isinstance(info.value, BadRequestError)
    assert info.value.status_code == 400
    assert len(server.requests) == 2


def test_openai_s_error_code_alone_marks_an_overflow(server: LoopbackServer) -> None:
    """OpenAI's own text does not name the overflow; its `code` does. actloop reads the whole
    answer (langchain-openai, reading the message only, would not retry here)."""
    server.script(overflow("This model's maximum context length is 128000 tokens."))
    server.script(message("Summary."))
    assert actloop_summary(server) == "Summary."
    assert len(server.requests) == 2


def test_other_bad_requests_are_not_retried(server: LoopbackServer) -> None:
    server.script(Reply("http", status=400, body=b'{"error": {"message": "Unknown parameter"}}'))
    with pytest.raises(BadRequestError) as info:
        actloop_summary(server)
    assert not isinstance(info.value, ContextOverflowError)
    assert len(server.requests) == 1


def test_an_agent_summarizes_through_an_overflow(server: LoopbackServer) -> None:
    server.script(overflow(), message("Summary."))
    summarizer = ChatOpenAI("gpt-test", base_url=server.url, api_key="k", max_retries=0)
    middleware = SummarizationMiddleware(
        model=summarizer,
        trigger=("messages", 4),
        keep=("messages", 1),
        trim_tokens_to_summarize=None,
    )
    agent = create_agent(ScriptedChatModel(["done"]), middleware=[middleware])
    turns: list[Any] = [HumanMessage(f"turn-{i} " * 500) for i in range(4)]
    result = agent.invoke({"messages": turns})
    assert [m.content[:60] for m in result["messages"]] == [
        "Here is a summary of the conversation to date:\n\nSummary.",
        turns[-1].content[:60],
        "done",
    ]
    assert isinstance(result["messages"][-1], AIMessage)
    assert len(server.requests) == 2
