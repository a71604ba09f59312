"""The Runnable protocol: invoke, stream, batch and their async twins, composed with `|`."""

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
from actloop.runnables._history import RunnableWithMessageHistory
from actloop.runnables._log import RunLog, RunLogPatch

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
