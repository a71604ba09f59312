"""`actloop fake-openai`, started as a reader starts it, answered through the real OpenAI client:
a tool call built from the question, then the tool's result as the answer; whole or streamed."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from actloop.messages import HumanMessage, ToolMessage
from actloop.models import ChatOpenAI
from actloop.tools import tool


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    return expression


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "actloop", "fake-openai", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    yield proc.stdout.readline().strip()
    proc.terminate()
    proc.wait(timeout=30)
    proc.stdout.close()


@pytest.mark.parametrize("streaming", [False, True])
def test_a_tool_call_from_the_question_then_the_result(url: str, streaming: bool) -> None:
    llm = ChatOpenAI(model="any", base_url=url, api_key="x", streaming=streaming)
    bound = llm.bind_tools([calculator, multiply])
    first = bound.invoke([HumanMessage("Use multiply: what is 6 times 7?")])
    assert [(c["name"], c["args"]) for c in first.tool_calls] == [("multiply", {"a": 6, "b": 7})]
    second = bound.invoke([HumanMessage("What is (2 + 3) * 4?")])
    assert [(c["name"], c["args"]) for c in second.tool_calls] == [
        ("calculator", {"expression": "(2 + 3) * 4"})
    ]
    call_id = first.tool_calls[0]["id"]
    history = [HumanMessage("6 times 7?"), first, ToolMessage("42", tool_call_id=call_id)]
    assert bound.invoke(history).content == "The answer is 42."
    assert llm.invoke([HumanMessage("hello")]).content == "You asked: hello"
