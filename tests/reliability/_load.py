"""The load workload: many concurrent async runs of one executor in one process.

Each run asks a tool-calling agent about `run-<i>`; the model (a `FunctionChatModel`) calls the
`lookup` tool with that key and answers with the tool's result, so every output names its input.
Model and tool latencies are random (seeded); 1% of the runs' tool calls fail. `check()` says,
per run, whether it ended with exactly its own answer or its own error.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any

from actloop import AgentExecutor
from actloop.messages import AIMessage, BaseMessage, ToolMessage
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.testing import FunctionChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import tool

FAILURE_RATE = 0.01


@dataclass
class Plan:
    """Per-run latencies (seconds) and which runs' tool calls fail."""

    model_latency: list[float]
    tool_latency: list[float]
    failing: set[int]


def make_plan(runs: int, seed: int, max_latency: float = 0.02) -> Plan:
    rng = random.Random(seed)
    return Plan(
        [rng.uniform(0, max_latency / 4) for _ in range(runs)],
        [rng.uniform(0, max_latency) for _ in range(runs)],
        {i for i in range(runs) if rng.random() < FAILURE_RATE},
    )


def _index(key: str) -> int:
    return int(key.removeprefix("run-"))


def build_executor(plan: Plan) -> AgentExecutor:
    """One executor (one model, one tool) shared by every run."""

    @tool
    async def lookup(key: str) -> str:
        """Look up the value stored under a key."""
        i = _index(key)
        await asyncio.sleep(plan.tool_latency[i])
        if i in plan.failing:
            raise RuntimeError(f"lookup failed for {key}")
        return f"value of {key}"

    async def reply(messages: list[BaseMessage]) -> AIMessage:
        key = str(messages[0].content)
        await asyncio.sleep(plan.model_latency[_index(key)])
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            call = {
                "name": "lookup",
                "args": {"key": key},
                "id": f"call-{key}",
                "type": "tool_call",
            }
            return AIMessage("", tool_calls=[call])  # type: ignore[list-item]
        return AIMessage(f"answer for {key}: {results[-1].content}")

    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
    )
    model = FunctionChatModel(reply)
    agent = create_tool_calling_agent(model, [lookup], prompt)
    return AgentExecutor(agent=agent, tools=[lookup])


async def run_load(runs: int, seed: int) -> tuple[Plan, list[Any]]:
    """Start every run at once; results (or exceptions) in run order."""
    plan = make_plan(runs, seed)
    executor = build_executor(plan)
    calls = [executor.ainvoke({"input": f"run-{i}"}) for i in range(runs)]
    return plan, await asyncio.gather(*calls, return_exceptions=True)


def check(plan: Plan, results: list[Any]) -> list[str]:
    """Problems found (empty when every run ended with its own answer or its own error)."""
    problems: list[str] = []
    for i, result in enumerate(results):
        key = f"run-{i}"
        if i in plan.failing:
            ok = (
                isinstance(result, RuntimeError)
                and str(result) == f"lookup failed for {key}"
                and getattr(result, "intermediate_steps", None) == []
            )
        else:
            ok = result == {"input": key, "output": f"answer for {key}: value of {key}"}
        if not ok:
            problems.append(f"{key}: {result!r}")
    return problems
