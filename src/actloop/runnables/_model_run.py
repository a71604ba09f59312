"""Machinery shared by the chat-model and text-model bases: opening a model's callback run.

Both `BaseChatModel` and `BaseLLM` open a run the same way (skip all callback work when no handler
listens, merge config and own tags/metadata with the `ls_*` tracing params); only the start event,
its inputs and the invocation params differ, so each base keeps those and calls these helpers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any, Protocol

from actloop.callbacks import Callbacks
from actloop.callbacks._context import context_handlers
from actloop.callbacks._manager import CallbackManager, configure
from actloop.runnables._base import add_chunks
from actloop.runnables._config import RunnableConfig

__all__ = ["ModelRunOwner", "acollect_input", "collect_input", "configure_model_run", "serialized"]


class ModelRunOwner(Protocol):
    """The settings of a model that decide its callback run (fields of both model bases)."""

    verbose: bool
    callbacks: Callbacks
    tags: list[str] | None
    metadata: dict[str, Any] | None

    def get_name(self) -> str: ...


def configure_model_run(
    model: ModelRunOwner,
    config: RunnableConfig,
    ls_params: Callable[[], Mapping[str, Any]],
) -> CallbackManager | None:
    """The callback manager for one model run, or None when no handler listens (no callback work).

    `ls_params` is only called when a handler may listen, as the model bases did inline.
    """
    callbacks = config.get("callbacks")
    if callbacks is None and not model.callbacks and not model.verbose and not context_handlers():
        return None
    metadata = {
        **config.get("metadata", {}),
        **ls_params(),
        **(model.metadata or {}),
    }
    return configure(
        callbacks,
        model.callbacks,
        verbose=model.verbose,
        tags=[*config.get("tags", ()), *(model.tags or ())],
        metadata=metadata,
    )


def serialized(model: ModelRunOwner) -> dict[str, Any]:
    """A model run's `serialized` (langchain-core's not-implemented shape)."""
    cls = type(model)
    return {
        "lc": 1,
        "type": "not_implemented",
        "id": [*cls.__module__.split("."), cls.__name__],
        "repr": repr(model),
        "name": model.get_name(),
    }


def collect_input(chunks: Iterator[Any]) -> Any:
    """The whole upstream input of a `transform` (its chunks added together)."""
    final: Any = None
    for chunk in chunks:
        final = add_chunks(final, chunk)
    return final


async def acollect_input(chunks: AsyncIterator[Any]) -> Any:
    """The whole upstream input of an `atransform` (its chunks added together)."""
    final: Any = None
    async for chunk in chunks:
        final = add_chunks(final, chunk)
    return final
