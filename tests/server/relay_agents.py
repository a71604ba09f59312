"""The executor tests/server/test_multi_process.py serves from two `actloop serve` processes.

A scripted model (`FunctionChatModel`) plays a fixed policy. Asked "relay X" it calls `record`
with X, then `wait_for` X (which blocks until the file X appears in $ACTLOOP_TEST_GATES), then
`publish` X (which needs approval), then answers "Done X: <result>". Asked "chain X" it does the
same without `publish`. Every tool writes a line to $ACTLOOP_TEST_CALLS when it finishes (and
`wait_for` one when it starts too), so a test sees exactly which calls ran, and where they ran
more than once.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from actloop import AgentExecutor
from actloop.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from actloop.prompts import ChatPromptTemplate
from actloop.testing import FunctionChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import tool


def note(line: str) -> None:
    """Append `line` (with the server's pid) to the calls file."""
    with Path(os.environ["ACTLOOP_TEST_CALLS"]).open("a") as f:
        f.write(f"{line} [{os.getpid()}]\n")


@tool
def record(text: str) -> str:
    """Note a text."""
    note(f"record {text}")
    return f"noted {text}"


@tool
async def wait_for(gate: str) -> str:
    """Wait until the file `gate` appears in the gates folder (a run the test holds mid-call)."""
    note(f"wait_for {gate} started")
    path = Path(os.environ["ACTLOOP_TEST_GATES"]) / gate
    while not path.exists():  # noqa: ASYNC110 (another process makes the file: no event to await)
        await asyncio.sleep(0.02)
    note(f"wait_for {gate}")
    return f"passed {gate}"


@tool(requires_approval=True)
def publish(text: str) -> str:
    """Publish a text (needs a person's approval)."""
    note(f"publish {text}")
    return f"published {text}"


def _call(name: str, args: dict[str, str], n: int) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{n}"}])


def policy(messages: list[BaseMessage]) -> AIMessage | str:
    """The scripted model's reply to the conversation so far."""
    question = next(m.text for m in messages if isinstance(m, HumanMessage))
    results = [m.text for m in messages if isinstance(m, ToolMessage)]
    kind, _, text = question.partition(" ")
    plan = ["record", "wait_for", "publish"] if kind == "relay" else ["record", "wait_for"]
    if len(results) < len(plan):
        name = plan[len(results)]
        return _call(name, {"gate" if name == "wait_for" else "text": text}, len(results))
    return f"Done {text}: {results[-1]}"


def make_executor() -> AgentExecutor:
    """The served executor (its store comes from `actloop serve --db`)."""
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Be brief."), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    tools = [record, wait_for, publish]
    agent = create_tool_calling_agent(FunctionChatModel(policy), tools, prompt)
    return AgentExecutor(agent=agent, tools=tools, max_iterations=10)
