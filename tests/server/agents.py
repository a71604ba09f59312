"""Executors the server tests serve by `module:attr`: a tool-calling agent over a scripted model.

The model (a `FunctionChatModel`) plays a fixed policy, so concurrent runs never mix: asked
"add A B" it calls `add` with A and B and then answers "The sum is <result>."; asked "send TEXT"
it calls `send` (which needs approval) and answers "Sent: <result>"; asked "hostile" it answers
with HTML that must stay inert; asked "slow N" it calls `nap` N times (0.1 s each); asked
"flaky TEXT" it calls `flaky`, which raises while $ACTLOOP_TEST_FAIL names an existing file.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from actloop import AgentExecutor
from actloop.checkpoint import SqliteCheckpointer
from actloop.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from actloop.prompts import ChatPromptTemplate
from actloop.testing import FunctionChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import tool

HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def nap(seconds: float) -> str:
    """Sleep, then record that the nap ended in $ACTLOOP_TEST_LOG (when set)."""
    time.sleep(seconds)
    path = os.environ.get("ACTLOOP_TEST_LOG")
    if path:
        with Path(path).open("a") as f:
            f.write("nap done\n")
    return "rested"


@tool
def flaky(text: str) -> str:
    """Fail while the file named by $ACTLOOP_TEST_FAIL exists (a run that fails, then resumes)."""
    flag = os.environ.get("ACTLOOP_TEST_FAIL")
    if flag and Path(flag).exists():
        raise RuntimeError("the flaky service is down")
    return f"echo {text}"


@tool(requires_approval=True)
def send(text: str) -> str:
    """Send a message (needs a person's approval)."""
    return f"sent {text!r}"


def _question(messages: list[BaseMessage]) -> str:
    return next(m.text for m in messages if isinstance(m, HumanMessage))


def _call(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{n}"}])


def policy(messages: list[BaseMessage]) -> AIMessage | str:
    """The scripted model's reply to the conversation so far."""
    question = _question(messages)
    results = [m.text for m in messages if isinstance(m, ToolMessage)]
    words = question.split()
    if words[0] == "add":
        if not results:
            return _call("add", {"a": int(words[1]), "b": int(words[2])}, 0)
        return f"The sum is {results[-1]}."
    if words[0] == "send":
        if not results:
            return _call("send", {"text": " ".join(words[1:])}, 0)
        return f"Sent: {results[-1]}"
    if words[0] == "slow":
        if len(results) < int(words[1]):
            return _call("nap", {"seconds": 0.1}, len(results))
        return f"Napped {len(results)} times."
    if words[0] == "flaky":
        if not results:
            return _call("flaky", {"text": " ".join(words[1:])}, 0)
        return f"Flaky said: {results[-1]}"
    if words[0] == "hostile":
        return f"Here: {HOSTILE}"
    return "I can only add, send, nap or be hostile."


def make_executor(checkpointer: Any = None) -> AgentExecutor:
    """The served executor (zero-argument factory; durable when $ACTLOOP_TEST_DB is set; a run
    deadline of $ACTLOOP_TEST_DEADLINE seconds when that is set)."""
    path = os.environ.get("ACTLOOP_TEST_DB")
    if checkpointer is None and path:
        checkpointer = SqliteCheckpointer(path)
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Be brief."), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    model = FunctionChatModel(policy)
    # An approval tool only in a durable executor: without a checkpointer, a run that holds one
    # is refused before it starts (SECURITY.md: approval never fails open).
    tools = [add, nap, flaky, *([send] if checkpointer is not None else [])]
    agent = create_tool_calling_agent(model, tools, prompt)
    deadline = os.environ.get("ACTLOOP_TEST_DEADLINE")
    return AgentExecutor(
        agent=agent,
        tools=tools,
        checkpointer=checkpointer,
        max_iterations=24,
        max_execution_time=float(deadline) if deadline else None,
    )
