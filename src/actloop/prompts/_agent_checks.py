"""What the `create_*_agent` builders check of their prompt and bind to their model."""

from __future__ import annotations

from typing import Any

from actloop.prompts._string import BasePromptTemplate
from actloop.runnables._base import Runnable

__all__ = ["require_variables", "with_stop"]


def require_variables(prompt: BasePromptTemplate, required: set[str]) -> None:
    """Raise ValueError naming the `required` variables the prompt neither takes nor has bound."""
    missing = required.difference([*prompt.input_variables, *prompt.partial_variables])
    if missing:
        raise ValueError(f"Prompt missing required variables: {missing}")


def with_stop(
    llm: Runnable[Any, Any], stop_sequence: bool | list[str], default: list[str]
) -> Runnable[Any, Any]:
    """`llm` bound to stop at `default` (`stop_sequence=True`), at the words given, or unbound."""
    if not stop_sequence:
        return llm
    return llm.bind(stop=default if stop_sequence is True else stop_sequence)
