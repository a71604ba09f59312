"""LangChain-compatible JSON (`dumpd`/`dumps`) and an allow-listed reader (`load`/`loads`).

Messages and agent data serialize byte-for-byte as langchain-core writes them: constructor dicts
`{"lc": 1, "type": "constructor", "id": [...], "kwargs": {...}}`; plain dicts holding an `"lc"`
key are wrapped as `{"__lc_escaped__": {...}}`; other objects become `"not_implemented"` entries.

Beyond LangChain (SPEC B4), an `AgentStep` is a constructor dict too:
`{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "agent", "AgentStep"],
"kwargs": {"action": <action dict>, "observation": <value>}}`.
Tuples are written as JSON lists; on load, a two-item list whose first item is an agent action
comes back as a tuple, so intermediate steps `[(action, observation), ...]` round-trip to equal
values. `load` builds only the classes of `actloop.messages` and `actloop.agents` (under every id
langchain-core maps to them) and reads secrets only from `secrets_map`, or from the environment
when `secrets_from_env=True`. Any other id, `not_implemented` entries, malformed entries and
nesting deeper than 200 levels raise `SerializationError` (a ValueError); so does `dumps` of a value
JSON cannot hold (nesting past 200 levels, an integer of more than 4,300 digits, a set or another
object inside a dict with an `"lc"` key, which is escaped as is, as langchain-core does). Dict keys
that are not strings come back as strings, as in any JSON (`{1: "a"}` loads as `{"1": "a"}`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from actloop.exceptions import SerializationError
from actloop.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from actloop.serialization._revive import ESCAPED as _ESCAPED
from actloop.serialization._revive import MAX_DEPTH as _MAX_DEPTH
from actloop.serialization._revive import Reviver
from actloop.steps import (
    AgentAction,
    AgentActionMessageLog,
    AgentFinish,
    AgentStep,
    ToolAgentAction,
)

__all__ = ["dumpd", "dumps", "load", "loads"]

_REQ: Any = object()  # field always written
_DICT: Any = object()  # dict field with an empty default
_LIST: Any = object()  # list field with an empty default

_MSG = (
    ("content", _REQ),
    ("additional_kwargs", _DICT),
    ("response_metadata", _DICT),
    ("type", _REQ),
)
_MSG_TAIL = (("name", None), ("id", None))
_AI = (
    *_MSG,
    *_MSG_TAIL,
    ("tool_calls", _LIST),
    ("invalid_tool_calls", _LIST),
    ("usage_metadata", None),
)
_ACTION = (("tool", _REQ), ("tool_input", _REQ), ("log", _REQ), ("type", _REQ))
_FIELDS: dict[type, tuple[tuple[str, Any], ...]] = {
    HumanMessage: (*_MSG, *_MSG_TAIL),
    SystemMessage: (*_MSG, *_MSG_TAIL),
    FunctionMessage: (*_MSG, ("name", _REQ), ("id", None)),
    ToolMessage: (*_MSG, *_MSG_TAIL, ("tool_call_id", _REQ), ("artifact", None), ("status", _REQ)),
    AIMessage: _AI,
    AIMessageChunk: (*_AI, ("tool_call_chunks", _LIST), ("chunk_position", None)),
    AgentAction: _ACTION,
    AgentActionMessageLog: (*_ACTION, ("message_log", _REQ)),
    ToolAgentAction: (*_ACTION, ("message_log", _REQ), ("tool_call_id", _REQ)),
    AgentFinish: (("return_values", _REQ), ("log", _REQ), ("type", _REQ)),
    AgentStep: (("action", _REQ), ("observation", _REQ)),
}
_MESSAGE_MODULES: dict[type, str] = {
    AIMessage: "ai",
    AIMessageChunk: "ai",
    FunctionMessage: "function",
    HumanMessage: "human",
    SystemMessage: "system",
    ToolMessage: "tool",
}
_AGENT_CLASSES = (AgentAction, AgentActionMessageLog, AgentFinish, AgentStep, ToolAgentAction)
_NONE = type(None)


def _lc_id(cls: type) -> list[str]:
    for base in cls.__mro__:
        if base in _MESSAGE_MODULES:
            return ["langchain", "schema", "messages", cls.__name__]
        if base in _AGENT_CLASSES:
            return ["langchain", "schema", "agent", cls.__name__]
    return [*cls.__module__.split("."), cls.__name__]


def _allowed_ids() -> dict[tuple[str, ...], type]:
    """Every id langchain-core maps to one of our classes, plus LangChain's own ids for them."""
    ids: dict[tuple[str, ...], type] = {}
    for cls, module in _MESSAGE_MODULES.items():
        name = cls.__name__
        ids["langchain", "schema", "messages", name] = cls
        ids["langchain_core", "messages", module, name] = cls
        ids["langchain_core", "messages", name] = cls
        if cls in (AIMessage, FunctionMessage, HumanMessage, SystemMessage):
            ids["langchain", "schema", name] = cls
    for cls in _AGENT_CLASSES:
        ids["langchain", "schema", "agent", cls.__name__] = cls
    for cls in (AgentAction, AgentActionMessageLog, AgentFinish):
        ids["langchain_core", "agents", cls.__name__] = cls
    ids["langchain", "agents", "output_parsers", "tools", "ToolAgentAction"] = ToolAgentAction
    return ids


_ALLOWED = _allowed_ids()


def dumpd(obj: Any) -> Any:
    """A JSON-ready value for `obj` in LangChain's serialized shape."""
    return _dump(obj, 0)


def dumps(obj: Any, *, pretty: bool = False, **kwargs: Any) -> str:
    """`dumpd(obj)` as a JSON string (`pretty` indents by `indent`, default 2)."""
    if "default" in kwargs:
        msg = "`default` should not be passed to dumps"
        raise SerializationError(msg)
    if pretty:
        kwargs.setdefault("indent", 2)
    data = _dump(obj, 0)
    try:
        return json.dumps(data, **kwargs)
    except (ValueError, RecursionError) as e:  # an int past Python's 4,300-digit str limit
        msg = f"Cannot serialize: {e}"
        raise SerializationError(msg) from e
    except TypeError as e:  # a set, an object... inside an escaped dict, which is kept as is
        msg = f"Cannot serialize a dict with an 'lc' key holding a value JSON cannot hold: {e}"
        raise SerializationError(msg) from e


def _dump(obj: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        msg = f"Cannot serialize an object nested more than {_MAX_DEPTH} levels deep."
        raise SerializationError(msg)
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    kind: type = type(obj)  # pyright: ignore[reportUnknownVariableType]
    fields = _fields_for(kind)
    if fields is not None:
        return _dump_constructor(obj, fields, depth)
    if isinstance(obj, dict):
        if not all(isinstance(k, (str, int, float, bool, _NONE)) for k in obj):  # pyright: ignore[reportUnknownVariableType]
            return _not_implemented(obj)
        if "lc" in obj or (len(obj) == 1 and _ESCAPED in obj):  # pyright: ignore[reportUnknownArgumentType]
            return {_ESCAPED: obj}  # pyright: ignore[reportUnknownVariableType]
        return {k: _dump(v, depth + 1) for k, v in obj.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(obj, (list, tuple)):
        return [_dump(v, depth + 1) for v in obj]  # pyright: ignore[reportUnknownVariableType]
    return _not_implemented(obj)


def _fields_for(cls: type) -> tuple[tuple[str, Any], ...] | None:
    fields = _FIELDS.get(cls)
    if fields is None and issubclass(cls, (BaseMessage, *_AGENT_CLASSES)):
        fields = next((_FIELDS[b] for b in cls.__mro__ if b in _FIELDS), None)
    return fields


def _dump_constructor(obj: Any, fields: tuple[tuple[str, Any], ...], depth: int) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for name, rule in fields:
        value = getattr(obj, name)
        if _useful(value, rule):
            kwargs[name] = _dump(value, depth + 1)
    if isinstance(obj, AIMessage):  # langchain-core's `lc_attributes` always adds these
        kwargs.setdefault("tool_calls", _dump(obj.tool_calls, depth + 1))
        kwargs.setdefault("invalid_tool_calls", _dump(obj.invalid_tool_calls, depth + 1))
    return {"lc": 1, "type": "constructor", "id": _lc_id(type(obj)), "kwargs": kwargs}  # pyright: ignore[reportUnknownArgumentType]


def _useful(value: Any, rule: Any) -> bool:
    """Whether langchain-core writes this field: required, truthy, or not the default."""
    if rule is _REQ:
        return True
    try:
        if value:
            return True
    except Exception:
        pass
    if rule is _DICT:
        return not isinstance(value, dict)
    if rule is _LIST:
        return not isinstance(value, list)
    try:
        return bool(value != rule)
    except Exception:
        return False


def _not_implemented(obj: Any) -> dict[str, Any]:
    try:
        target: Any = obj if hasattr(obj, "__name__") else obj.__class__
        id_: list[str] = [*target.__module__.split("."), target.__name__]
    except Exception:
        id_ = []
    result: dict[str, Any] = {"lc": 1, "type": "not_implemented", "id": id_, "repr": None}
    try:
        result["repr"] = repr(obj)
    except Exception:
        pass
    return result


def loads(
    text: str | bytes,
    *,
    secrets_map: dict[str, str] | None = None,
    secrets_from_env: bool = False,
    allowed_objects: Iterable[type] | str | None = None,
    ignore_unserializable_fields: bool = False,
) -> Any:
    """Parse JSON text and `load` it."""
    try:
        data = json.loads(text)
    except RecursionError as e:
        msg = f"Cannot load an object nested more than {_MAX_DEPTH} levels deep."
        raise SerializationError(msg) from e
    except (ValueError, TypeError) as e:
        msg = f"Cannot load: not valid JSON ({e})"
        raise SerializationError(msg) from e
    return load(
        data,
        secrets_map=secrets_map,
        secrets_from_env=secrets_from_env,
        allowed_objects=allowed_objects,
        ignore_unserializable_fields=ignore_unserializable_fields,
    )


def load(
    obj: Any,
    *,
    secrets_map: dict[str, str] | None = None,
    secrets_from_env: bool = False,
    allowed_objects: Iterable[type] | str | None = None,
    ignore_unserializable_fields: bool = False,
) -> Any:
    """Rebuild objects from parsed JSON; only allow-listed classes, secrets only when asked.

    `allowed_objects`: None, "all" or "core" for every actloop class, "messages" for messages
    only, or an explicit list of classes.
    """
    allowed = _select_allowed(allowed_objects)
    reviver = Reviver(allowed, secrets_map or {}, secrets_from_env, ignore_unserializable_fields)
    return reviver.walk(obj, 0)


def _select_allowed(allowed_objects: Iterable[type] | str | None) -> dict[tuple[str, ...], type]:
    if allowed_objects is None or allowed_objects in ("all", "core"):
        return _ALLOWED
    if allowed_objects == "messages":
        return {k: v for k, v in _ALLOWED.items() if issubclass(v, BaseMessage)}
    if isinstance(allowed_objects, str):
        msg = f"allowed_objects={allowed_objects!r}: use 'all', 'messages' or a list of classes"
        raise SerializationError(msg)
    classes = set(allowed_objects)
    unknown = [c for c in classes if c not in _ALLOWED.values()]
    if unknown:
        msg = f"allowed_objects may only name actloop message and agent classes, got {unknown!r}"
        raise SerializationError(msg)
    return {k: v for k, v in _ALLOWED.items() if v in classes}
