"""Tool arguments the agent fills in, never the model: LangChain's injected-argument markers.

A tool function's parameter annotated `ToolRuntime` receives the call's runtime (the agent's
state, context, config, store, stream writer and the call's id); `Annotated[T, InjectedState]`
the state (or `InjectedState("key")` one key of it), `Annotated[str, InjectedToolCallId]` the
call's id, `Annotated[T, InjectedStore()]` the store. Such parameters stay in the tool's input
schema (the call is validated with them) and are left out of the schema the model sees. A
`create_agent` agent fills them in (`actloop.agents._tool_node.ToolNode`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "InjectedState",
    "InjectedStore",
    "InjectedToolArg",
    "InjectedToolCallId",
    "ToolRuntime",
    "injected_fields",
    "injected_params",
]


class InjectedToolArg:
    """A tool argument the caller fills in (langchain-core's marker); not shown to the model."""


class InjectedToolCallId(InjectedToolArg):
    """The argument gets the tool call's id."""


class InjectedState(InjectedToolArg):
    """The argument gets the agent's state, or with `InjectedState("key")` one key of it."""

    def __init__(self, field: str | None = None) -> None:
        self.field = field


class InjectedStore(InjectedToolArg):
    """The argument gets the agent's store."""


@dataclass
class ToolRuntime:
    """What a tool call may use besides its arguments: the state, the run's context, config,
    store and stream writer, and the call's id (LangChain's `ToolRuntime`)."""

    state: Any
    context: Any
    config: dict[str, Any]
    stream_writer: Callable[[Any], None]
    tool_call_id: str | None
    store: Any = None

    def __class_getitem__(cls, item: Any) -> type[ToolRuntime]:
        """`ToolRuntime[Context, State]` in annotations, as LangChain's generic class allows."""
        return cls

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """In a tool's args schema: any `ToolRuntime` instance, taken as it is."""
        from pydantic_core import core_schema

        return core_schema.is_instance_schema(cls)


for _cls in (InjectedToolArg, InjectedToolCallId, InjectedState, InjectedStore, ToolRuntime):
    _cls.__module__ = "actloop.tools"  # users import them from there; reprs say so
del _cls


def _kind(annotation: Any, metadata: list[Any]) -> InjectedToolArg | str | None:
    """What a field with `annotation` and `metadata` (its `Annotated` extras) is filled with:
    "runtime", a marker, or None for a model-given argument."""
    if isinstance(annotation, type) and issubclass(annotation, ToolRuntime):
        return "runtime"
    for mark in metadata:
        if isinstance(mark, InjectedToolArg):
            return mark
        if isinstance(mark, type) and issubclass(mark, InjectedToolArg):
            return mark()
    return None


def injected_fields(schema: Any) -> dict[str, InjectedToolArg | str]:
    """The injected fields of a pydantic args schema, name -> what fills it (empty for a dict
    schema or none). A field named `runtime` is the runtime whatever its type, as in LangChain."""
    fields: dict[str, Any] = getattr(schema, "model_fields", None) or {}
    found: dict[str, InjectedToolArg | str] = {}
    for name, info in fields.items():
        kind = "runtime" if name == "runtime" else _kind(info.annotation, list(info.metadata))
        if kind is not None:
            found[name] = kind
    return found


def injected_params(func: Callable[..., Any] | None) -> dict[str, InjectedToolArg | str]:
    """The injected parameters of a tool function (for a tool whose args schema is a JSON
    schema dict, which cannot say): name -> what fills it."""
    if func is None:
        return {}
    import inspect
    import typing

    try:
        hints = typing.get_type_hints(func, include_extras=True)
        names = inspect.signature(func).parameters
    except (NameError, TypeError, ValueError):
        return {}
    found: dict[str, InjectedToolArg | str] = {}
    for name in names:
        hint = hints.get(name)
        metadata = list(getattr(hint, "__metadata__", ()))
        origin = typing.get_args(hint)[0] if metadata else hint
        kind = "runtime" if name == "runtime" else _kind(origin, metadata)
        if kind is not None:
            found[name] = kind
    return found
