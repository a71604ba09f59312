"""Trim strategies for `AgentExecutor(trim_intermediate_steps=...)`.

LangChain takes an int (keep the last N steps) or a callable `steps -> steps`; the loop core
(`executor._loop`) calls either before every plan. `TokenBudgetTrim` is such a callable: it keeps
the first turns (the task's context) and as many of the latest turns as fit a token budget,
dropping the middle, counted with the model's own tokenizer when it has one::

    executor = AgentExecutor(
        agent=agent, tools=tools, trim_intermediate_steps=TokenBudgetTrim(2000, model=llm)
    )
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, cast

from actloop.exceptions import ConfigurationError
from actloop.steps import AgentAction

__all__ = ["TokenBudgetTrim", "approximate_tokens"]

Step = tuple[AgentAction, Any]
TokenCounter = Callable[[str], int]
"""Counts the tokens of a text."""


def approximate_tokens(text: str) -> int:
    """About four characters a token (OpenAI's rule of thumb for English): `ceil(len(text) / 4)`.

    The fallback when neither `count_tokens` nor a model with a tokenizer is given.
    """
    return (len(text) + 3) // 4


def _model_counter(model: Any) -> TokenCounter:
    """The model's own `get_num_tokens` (langchain-core's name; `LocalChatModel` has one), else
    `approximate_tokens`."""
    counter: Any = getattr(model, "get_num_tokens", None)
    return cast("TokenCounter", counter) if callable(counter) else approximate_tokens


def _turns(steps: Sequence[Step]) -> list[list[int]]:
    """Step indexes grouped by model reply: the tool calls of one message (a parallel tool call)
    form one turn, since a chat API refuses a tool call whose result is missing."""
    turns: list[list[int]] = []
    previous: Any = None
    for i, (action, _) in enumerate(steps):
        log: Any = getattr(action, "message_log", None)
        message: Any = log[-1] if log else None
        if turns and message is not None and (message is previous or message == previous):
            turns[-1].append(i)
        else:
            turns.append([i])
        previous = message
    return turns


class TokenBudgetTrim:
    """Keeps the first turns and the newest ones within `max_tokens`; drops the middle.

    A turn is one reply of the model: its action (several for a parallel tool call) with their
    observations; a turn is kept or dropped whole. The first `keep_first` turns (the task's
    context) and the newest `keep_last` (the result of the last action) are always kept. Then,
    going back from the newest, each older turn is kept while the total stays within
    `max_tokens`; the first one that does not fit ends the search, so the kept tail has no gap.

    A step costs the tokens of its action's `log` (the model's text and call) plus its
    observation's text. Tokens are counted by `count_tokens` if given, else by the model's own
    tokenizer (`model.get_num_tokens`, as langchain-core models and `LocalChatModel` have), else
    by `approximate_tokens`. Counts are cached per text, so each step is tokenized once.
    """

    def __init__(
        self,
        max_tokens: int,
        *,
        keep_first: int = 1,
        keep_last: int = 1,
        count_tokens: TokenCounter | None = None,
        model: Any = None,
    ) -> None:
        _check_count("max_tokens", max_tokens, 1)
        _check_count("keep_first", keep_first, 0)
        _check_count("keep_last", keep_last, 0)
        if count_tokens is not None and model is not None:
            raise ConfigurationError(
                "TokenBudgetTrim counts with count_tokens or with the model's tokenizer; "
                "pass one of count_tokens=... and model=..., not both"
            )
        self.max_tokens = max_tokens
        self.keep_first = keep_first
        self.keep_last = keep_last
        self.count_tokens: TokenCounter = count_tokens or _model_counter(model)
        """The counter in use: `count_tokens`, the model's `get_num_tokens`, or the fallback."""
        self._cost = functools.lru_cache(maxsize=4096)(self.count_tokens)

    def __repr__(self) -> str:
        return (
            f"TokenBudgetTrim(max_tokens={self.max_tokens}, keep_first={self.keep_first}, "
            f"keep_last={self.keep_last})"
        )

    def cost(self, step: Step) -> int:
        """The tokens one `(action, observation)` step counts for."""
        action, observation = step
        return self._cost(f"{action.log}{observation}")

    def __call__(self, steps: list[Step]) -> list[Step]:
        """The steps to show the model: all of them if they fit, else the first and the latest."""
        costs = [self.cost(step) for step in steps]
        if sum(costs) <= self.max_tokens:
            return steps
        turns = _turns(steps)
        weights = [sum(costs[i] for i in turn) for turn in turns]
        head = min(self.keep_first, len(turns))
        start = max(head, len(turns) - self.keep_last)
        used = sum(weights[:head]) + sum(weights[start:])
        while start > head and used + weights[start - 1] <= self.max_tokens:
            start -= 1
            used += weights[start]
        kept = [*turns[:head], *turns[start:]]
        return [steps[i] for turn in kept for i in turn]


def _check_count(name: str, value: Any, least: int) -> None:
    """A developer mistake in a count raises at construction, naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigurationError(f"TokenBudgetTrim {name} must be an int >= {least}, got {value!r}")
