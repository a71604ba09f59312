"""`TokenBudget`: the first steps and the newest that fit in the budget reach the model, counted
with the model's tokenizer when it has one."""

from __future__ import annotations

from typing import Any

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish, TokenBudget, Tool
from actloop.classic import ZeroShotAgent
from actloop.llms import LLM
from actloop.testing import FakeListLLM, ScriptedAgent


def _step(i: int, words: int) -> tuple[AgentAction, str]:
    return AgentAction("t", str(i), " ".join(["w"] * words)), " ".join(["o"] * words)


def test_keeps_the_first_step_and_the_latest_that_fit() -> None:
    steps = [_step(i, 2) for i in range(6)]  # each step costs 4 words
    assert TokenBudget(13)(steps) == [steps[0], steps[4], steps[5]]
    assert TokenBudget(12, keep_first=0)(steps) == steps[3:]
    assert TokenBudget(100)(steps) == steps


def test_a_step_too_big_ends_the_tail_even_if_older_ones_would_fit() -> None:
    steps = [_step(0, 1), _step(1, 1), _step(2, 10), _step(3, 1)]
    assert TokenBudget(8)(steps) == [steps[0], steps[3]]


def test_counts_with_the_models_tokenizer() -> None:
    llm = FakeListLLM(responses=["x"])
    llm.get_num_tokens = len  # type: ignore[method-assign]  # one token per character
    steps = [_step(i, 1) for i in range(3)]  # "w" + "o": 2 characters
    assert TokenBudget(4, model=llm)(steps) == [steps[0], steps[2]]
    assert TokenBudget(4, count_tokens=lambda text: 0)(steps) == steps


def test_bad_budget_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="max_tokens > 0"):
        TokenBudget(0)


def _finish(steps: list[tuple[AgentAction, str]], **inputs: str) -> AgentFinish:
    return AgentFinish({"output": "done"}, "")


def test_the_agent_sees_only_the_kept_steps() -> None:
    seen: list[list[str]] = []

    def plan(steps: list[tuple[AgentAction, str]], **inputs: str) -> AgentAction:
        seen.append([a.tool_input for a, _ in steps])
        return AgentAction("echo", str(len(seen)), "go")

    tools = [Tool(name="echo", func=lambda x: x, description="Echo.")]
    executor = AgentExecutor(
        agent=ScriptedAgent([plan, plan, plan, plan, _finish]),
        tools=tools,
        trim_intermediate_steps=TokenBudget(4, keep_first=1),
    )
    assert executor.invoke({"input": "q"})["output"] == "done"
    # each step: log "go" (1 word) + observation (1 word); the first is kept, then one more fits
    assert seen == [[], ["1"], ["1", "2"], ["1", "3"]]


class RecordingLLM(LLM):
    responses: list[str]
    prompts: list[str]

    def _call(self, prompt: str, stop: Any = None, run_manager: Any = None, **kw: Any) -> str:
        self.prompts.append(prompt)
        return self.responses[len(self.prompts) - 1]


def test_a_zero_shot_prompt_keeps_the_first_and_the_latest_step() -> None:
    replies = [f"Action: echo\nAction Input: a{i}" for i in range(3)] + ["Final Answer: ok"]
    llm = RecordingLLM(responses=replies, prompts=[])
    tools = [Tool(name="echo", func=lambda x: f"seen {x}", description="Echo.")]
    agent = ZeroShotAgent.from_llm_and_tools(llm, tools)
    # a step: its log (5 words) and its observation (2 words)
    executor = AgentExecutor(agent=agent, tools=tools, trim_intermediate_steps=TokenBudget(14))
    assert executor.invoke({"input": "q"})["output"] == "ok"
    last = llm.prompts[-1]
    assert "seen a0" in last and "seen a2" in last and "seen a1" not in last
