"""The run config passed through every Runnable call, as in LangChain (`RunnableConfig`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

if TYPE_CHECKING:
    import uuid

    from actloop.callbacks import BaseCallbackHandler, Callbacks
    from actloop.callbacks._manager import CallbackManager

__all__ = ["RunnableConfig", "child_config", "ensure_config", "merge_configs"]


class RunnableConfig(TypedDict, total=False):
    """Options for one call: callbacks, tags, metadata, names and limits."""

    callbacks: Callbacks
    """A list of handlers or a callback manager; inherited by child runs."""
    tags: list[str]
    """Tags for this call and its children."""
    metadata: dict[str, Any]
    """Metadata for this call and its children."""
    run_name: str
    """Name of this call's run (not inherited)."""
    run_id: uuid.UUID
    """Id of this call's run (not inherited)."""
    max_concurrency: int | None
    """Upper bound on parallel work (batch, parallel tools)."""
    recursion_limit: int
    """Kept for LangChain compatibility."""
    configurable: dict[str, Any]
    """Free-form options, e.g. `thread_id` for durable runs."""


_EMPTY: RunnableConfig = {}


def ensure_config(config: RunnableConfig | Mapping[str, Any] | None) -> RunnableConfig:
    """`config` as a RunnableConfig (never None); a dict input is returned as is, not copied."""
    if config is None:
        return {}
    if isinstance(config, dict):
        return config  # pyright: ignore[reportReturnType] (no `cast` call: this runs per Runnable call)
    return RunnableConfig(**config)


def merge_configs(*configs: RunnableConfig | None) -> RunnableConfig:
    """Merge configs left to right: tags concatenate, metadata/configurable merge, rest replace."""
    out: dict[str, Any] = {}
    for config in configs:
        if not config:
            continue
        for key, value in cast("Mapping[str, Any]", config).items():
            if key == "tags":
                out["tags"] = _dedupe([*out.get("tags", ()), *value])
            elif key in ("metadata", "configurable"):
                out[key] = {**out.get(key, {}), **value}
            elif key == "callbacks" and out.get("callbacks") and value:
                out["callbacks"] = _merge_callbacks(out["callbacks"], value)
            else:
                out[key] = value
    return cast(RunnableConfig, out)


def child_config(
    config: RunnableConfig, callbacks: Callbacks, tag: str | None = None
) -> RunnableConfig:
    """Child-call config: run-specific keys dropped, callbacks replaced, an optional tag added."""
    out: dict[str, Any] = {
        k: v for k, v in config.items() if k not in ("run_name", "run_id", "callbacks")
    }
    if callbacks is not None:
        out["callbacks"] = callbacks
    if tag is not None:
        out["tags"] = [tag, *config.get("tags", ())]
    return cast(RunnableConfig, out)


def _dedupe(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _merge_callbacks(
    left: list[BaseCallbackHandler] | CallbackManager,
    right: list[BaseCallbackHandler] | CallbackManager,
) -> list[BaseCallbackHandler] | CallbackManager:
    from actloop.callbacks._manager import CallbackManager

    if isinstance(left, CallbackManager):
        return left.merged_with(right)
    if isinstance(right, CallbackManager):
        return right.merged_with(left)
    return [*left, *right]
