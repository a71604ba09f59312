"""One tool call's plumbing: what to inject, the config a tool sees (B5), and output formatting."""

from __future__ import annotations

import json
import types
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, TypeAlias, cast

from actloop.callbacks._manager import RunManager
from actloop.messages import ToolMessage
from actloop.runnables._config import RunnableConfig, ensure_config
from actloop.tools import _schema

__all__ = ["Injection", "Outcome", "format_output", "injection", "prep_run_args", "tool_config"]

_BLOCK_TYPES = frozenset(
    (
        "text",
        "image_url",
        "image",
        "json",
        "search_result",
        "custom_tool_call_output",
        "document",
        "file",
    )
)


class Injection(NamedTuple):
    """What a tool function wants filled in besides its arguments."""

    config: str | None
    run_manager: bool
    callbacks: bool


_injections: weakref.WeakKeyDictionary[Callable[..., Any], Injection | None] = (
    weakref.WeakKeyDictionary()
)
"""`injection` of each plain function seen: a tool built again around the same function (a new
executor's tools, per run) does not inspect its signature and type hints again (~40 us)."""


def injection(func: Callable[..., Any] | None) -> Injection | None:
    """What `func` wants injected, or None (the common case: nothing to do per call)."""
    plain = isinstance(func, types.FunctionType)
    if plain:
        try:
            return _injections[func]
        except KeyError:
            pass
    found = Injection(
        _schema.config_param(func),
        _schema.accepts(func, "run_manager"),
        _schema.accepts(func, "callbacks"),
    )
    result = found if any(found) else None
    if plain:
        assert func is not None
        _injections[func] = result
    return result


Outcome: TypeAlias = "tuple[Any, Any, Literal['success', 'error']]"
"""(content, artifact, status) of one tool call; a plain tuple, cheap on the hot path."""


def tool_config(
    config: RunnableConfig | None,
    run: RunManager | None,
    tags: list[str] | None,
    metadata: dict[str, Any] | None,
) -> RunnableConfig:
    """The config a tool function receives: the caller's, re-parented under this tool run (B5)."""
    out: dict[str, Any] = {
        k: v for k, v in (config or {}).items() if k not in ("run_name", "run_id")
    }
    if run is not None:
        out["callbacks"] = run.get_child()
    if tags:
        out["tags"] = list(dict.fromkeys([*out.get("tags", ()), *tags]))
    if metadata:
        out["metadata"] = {**out.get("metadata", {}), **metadata}
    return cast(RunnableConfig, out)


def prep_run_args(
    value: Any, config: RunnableConfig | None, kwargs: dict[str, Any]
) -> tuple[Any, dict[str, Any]]:
    """`run` arguments for `invoke(value, config)`; a ToolCall gives its args and id."""
    config = ensure_config(config)
    tool_call_id: str | None = None
    tool_input = value
    if isinstance(value, dict):
        call = cast("dict[str, Any]", value)
        if call.get("type") == "tool_call":
            tool_call_id = call["id"]
            tool_input = dict(call["args"])
    return tool_input, {
        "callbacks": config.get("callbacks"),
        "tags": config.get("tags"),
        "metadata": config.get("metadata"),
        "run_name": config.get("run_name"),
        "run_id": config.get("run_id"),
        "config": {k: v for k, v in config.items() if k != "run_id"},
        "tool_call_id": tool_call_id,
        **kwargs,
    }


def format_output(outcome: Outcome, tool_call_id: str | None, name: str) -> Any:
    """The output as LangChain returns it: raw content, or a ToolMessage when there is a call id."""
    content, artifact, status = outcome
    if tool_call_id is None or isinstance(content, ToolMessage):
        return content
    if isinstance(content, list) and content and all(isinstance(c, ToolMessage) for c in content):  # pyright: ignore[reportUnknownVariableType]
        return content  # pyright: ignore[reportUnknownVariableType]
    return ToolMessage(
        _message_content(content),
        artifact=artifact,
        tool_call_id=tool_call_id,
        name=name,
        status=status,
    )


def _message_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        items = cast("Sequence[Any]", content)
        if all(_is_block(c) for c in items):
            return list(items)
    try:
        return json.dumps(content, ensure_ascii=False)
    except Exception:
        return str(cast(Any, content))


def _is_block(obj: Any) -> bool:
    return isinstance(obj, str) or (isinstance(obj, dict) and obj.get("type") in _BLOCK_TYPES)  # pyright: ignore[reportUnknownMemberType]
