"""Rebuilding allow-listed objects from LangChain-shaped JSON, strictly (for `load`)."""

from __future__ import annotations

import os
from typing import Any

from actloop.exceptions import SerializationError
from actloop.messages import BaseMessage
from actloop.steps import AgentAction

MAX_DEPTH = 200
"""Deepest nesting of dicts and lists walked (langchain-core's `load` uses the same limit)."""
ESCAPED = "__lc_escaped__"
"""Key wrapping user dicts that contain `"lc"`, so they are never read as objects."""

_NONE = type(None)
_KWARG_TYPES: dict[str, tuple[type, ...]] = {
    "content": (str, list),
    "additional_kwargs": (dict,),
    "response_metadata": (dict,),
    "name": (str, _NONE),
    "id": (str, int, _NONE),
    "tool_calls": (list,),
    "invalid_tool_calls": (list,),
    "usage_metadata": (dict, _NONE),
    "tool_call_chunks": (list,),
    "chunk_position": (str, _NONE),
    "tool_call_id": (str, int, float, _NONE),
    "status": (str,),
    "tool": (str,),
    "tool_input": (str, dict),
    "log": (str,),
    "return_values": (dict,),
    "message_log": (list,),
    "action": (AgentAction,),
}
_PARAMS: dict[type, frozenset[str]] = {}
"""Constructor keywords per class, filled lazily from each class's `_fields`."""
_BUILD_ERRORS = (TypeError, KeyError, ValueError, AttributeError, IndexError)


class Reviver:
    """Walks parsed JSON, unescaping user dicts and building allow-listed objects."""

    def __init__(
        self,
        allowed: dict[tuple[str, ...], type],
        secrets_map: dict[str, str],
        secrets_from_env: bool,
        ignore_unserializable: bool,
    ) -> None:
        self.allowed = allowed
        self.secrets_map = secrets_map
        self.secrets_from_env = secrets_from_env
        self.ignore_unserializable = ignore_unserializable

    def walk(self, obj: Any, depth: int) -> Any:
        """The loaded form of `obj`; children are loaded before their parent."""
        if depth > MAX_DEPTH:
            msg = f"Cannot load an object nested more than {MAX_DEPTH} levels deep."
            raise SerializationError(msg)
        if obj is None or isinstance(obj, (str, int, float, bool)):
            return obj
        if isinstance(obj, dict):
            if len(obj) == 1 and ESCAPED in obj:  # pyright: ignore[reportUnknownArgumentType]
                return obj[ESCAPED]  # pyright: ignore[reportUnknownVariableType]
            return self.revive({k: self.walk(v, depth + 1) for k, v in obj.items()})  # pyright: ignore[reportUnknownVariableType]
        if isinstance(obj, list):
            items = [self.walk(v, depth + 1) for v in obj]  # pyright: ignore[reportUnknownVariableType]
            if len(items) == 2 and isinstance(items[0], AgentAction):
                return tuple(items)  # an intermediate step: (action, observation)
            return items
        msg = f"Cannot load a value of type {type(obj).__name__}; expected parsed JSON."
        raise SerializationError(msg)

    def revive(self, value: dict[str, Any]) -> Any:
        """Build the object a serialized dict describes; other dicts are returned unchanged."""
        kind = value.get("type")
        if value.get("lc") != 1 or kind not in ("constructor", "secret", "not_implemented"):
            return value
        id_ = value.get("id")
        if not isinstance(id_, list) or not id_ or not all(isinstance(p, str) for p in id_):  # pyright: ignore[reportUnknownVariableType]
            msg = (
                f"Cannot load {kind} entry: 'id' must be a non-empty list of strings, got {id_!r}."
            )
            raise SerializationError(msg)
        path: tuple[str, ...] = tuple(id_)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        if kind == "secret":
            return self._secret(path)
        if kind == "not_implemented":
            if self.ignore_unserializable:
                return None
            msg = (
                f"Cannot load {list(path)!r}: it was serialized as not_implemented "
                f"(repr={value.get('repr')!r})."
            )
            raise SerializationError(msg)
        return self._construct(path, value.get("kwargs", {}))

    def _secret(self, path: tuple[str, ...]) -> str | None:
        if len(path) != 1:
            msg = f"Cannot load secret {list(path)!r}: a secret id has exactly one name."
            raise SerializationError(msg)
        key = path[0]
        if key in self.secrets_map:
            return self.secrets_map[key]
        if self.secrets_from_env:
            return os.environ.get(key) or None
        return None

    def _construct(self, path: tuple[str, ...], kwargs: Any) -> Any:
        cls = self.allowed.get(path)
        if cls is None:
            msg = (
                f"Deserialization of {list(path)!r} is not allowed: load builds only actloop's "
                "messages and agent data classes (narrow them with allowed_objects=...)."
            )
            raise SerializationError(msg)
        if not isinstance(kwargs, dict):
            kind = type(kwargs).__name__
            msg = f"Cannot load {list(path)!r}: 'kwargs' must be an object, got {kind}."
            raise SerializationError(msg)
        return _build(cls, path, kwargs)  # pyright: ignore[reportUnknownArgumentType]


def _build(cls: type, path: tuple[str, ...], kwargs: dict[str, Any]) -> Any:
    """Call the constructor with the known keywords after checking their types."""
    where = f"Cannot load {list(path)!r}"
    expected_type = getattr(cls, "type", None)
    if "type" in kwargs and kwargs["type"] != expected_type:
        msg = f"{where}: kwargs type {kwargs['type']!r} does not match {expected_type!r}."
        raise SerializationError(msg)
    params = _PARAMS.get(cls)
    if params is None:
        params = _PARAMS[cls] = frozenset(getattr(cls, "_fields", ()))
    accepted = {k: v for k, v in kwargs.items() if k in params}
    for key, value in accepted.items():
        types = _KWARG_TYPES.get(key)
        if types is not None and not isinstance(value, types):
            msg = f"{where}: {key!r} has type {type(value).__name__}."
            raise SerializationError(msg)
    if "message_log" in accepted and not all(
        isinstance(m, BaseMessage) for m in accepted["message_log"]
    ):
        msg = f"{where}: 'message_log' must hold messages only."
        raise SerializationError(msg)
    try:
        return cls(**accepted)
    except _BUILD_ERRORS as e:
        msg = f"{where}: {e}"
        raise SerializationError(msg) from e
