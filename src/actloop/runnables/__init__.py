"""The Runnable protocol: invoke, stream, batch and their async twins, composed with `|`."""

from typing import TYPE_CHECKING, Any

from actloop.runnables._base import (
    Runnable,
    RunnableBinding,
    add,
    coerce_to_runnable,
    run_in_executor,
)
from actloop.runnables._compose import (
    AddableDict,
    RunnableAssign,
    RunnableLambda,
    RunnableParallel,
    RunnablePassthrough,
    RunnableSequence,
)
from actloop.runnables._config import RunnableConfig, ensure_config, merge_configs
from actloop.runnables._log import RunLog, RunLogPatch

if TYPE_CHECKING:  # loaded on first use (__getattr__ below)
    from actloop.runnables._history import RunnableWithMessageHistory

__all__ = [
    "AddableDict",
    "RunLog",
    "RunLogPatch",
    "Runnable",
    "RunnableAssign",
    "RunnableBinding",
    "RunnableConfig",
    "RunnableLambda",
    "RunnableParallel",
    "RunnablePassthrough",
    "RunnableSequence",
    "RunnableWithMessageHistory",
    "add",
    "coerce_to_runnable",
    "ensure_config",
    "merge_configs",
    "run_in_executor",
]


def __getattr__(name: str) -> Any:
    """`RunnableWithMessageHistory` loads on first use (its chat history module with it)."""
    if name != "RunnableWithMessageHistory":
        raise AttributeError(f"module 'actloop.runnables' has no attribute {name!r}")
    from actloop.runnables._history import RunnableWithMessageHistory

    globals()[name] = RunnableWithMessageHistory
    return RunnableWithMessageHistory
