"""The Runnable protocol: invoke, stream, batch and their async twins, composed with `|`."""

from actloop._compose import (
    AddableDict,
    RunnableAssign,
    RunnableLambda,
    RunnableParallel,
    RunnablePassthrough,
    RunnableSequence,
)
from actloop._config import RunnableConfig, ensure_config, merge_configs
from actloop._runnable import Runnable, RunnableBinding, coerce_to_runnable

__all__ = [
    "AddableDict",
    "Runnable",
    "RunnableAssign",
    "RunnableBinding",
    "RunnableConfig",
    "RunnableLambda",
    "RunnableParallel",
    "RunnablePassthrough",
    "RunnableSequence",
    "coerce_to_runnable",
    "ensure_config",
    "merge_configs",
]
