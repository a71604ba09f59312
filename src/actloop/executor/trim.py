"""Trim strategies for `AgentExecutor(trim_intermediate_steps=...)`.

`TokenBudget` keeps the first steps (they hold the task's context: what was looked up first) and
then as many of the latest steps as fit in a token budget. Tokens are counted with the model's own
tokenizer when it has one (`model.get_num_tokens`, as LangChain models and actloop's `LLM` do),
else as whitespace-separated words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from actloop.agents import AgentAction

__all__ = ["TokenBudget"]

Steps = list[tuple[AgentAction, Any]]


def _words(text: str) -> int:
    return len(text.split())


class TokenBudget:
    """A `trim_intermediate_steps` callable: the first `keep_first` steps, then the newest steps
    whose log and observation fit in `max_tokens` (older middle steps are dropped, order kept)."""

    def __init__(
        self,
        max_tokens: int,
        *,
        keep_first: int = 1,
        model: Any = None,
        count_tokens: Callable[[str], int] | None = None,
    ) -> None:
        if max_tokens <= 0 or keep_first < 0:
            raise ValueError(
                f"TokenBudget needs max_tokens > 0 and keep_first >= 0, got {max_tokens} and "
                f"{keep_first}"
            )
        counter = count_tokens or getattr(model, "get_num_tokens", None) or _words
        self.max_tokens = max_tokens
        self.keep_first = keep_first
        self.count_tokens: Callable[[str], int] = counter

    def tokens(self, step: tuple[AgentAction, Any]) -> int:
        """What one step costs: its log (the model's words) and its observation."""
        action, observation = step
        return self.count_tokens(action.log) + self.count_tokens(str(observation))

    def __call__(self, steps: Steps) -> Steps:
        first = steps[: self.keep_first]
        budget = self.max_tokens - sum(self.tokens(s) for s in first)
        latest: Steps = []
        for step in reversed(steps[self.keep_first :]):
            cost = self.tokens(step)
            if cost > budget:
                break
            budget -= cost
            latest.append(step)
        return [*first, *reversed(latest)]

    def __repr__(self) -> str:
        return f"TokenBudget(max_tokens={self.max_tokens}, keep_first={self.keep_first})"
