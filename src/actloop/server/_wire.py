"""LangServe's wire format: objects as the JSON LangChain's pydantic models dump to.

`langserve.RemoteRunnable` revives a dict with a known `"type"` (`"ai"`, `"AgentAction"`, ...)
into the LangChain object, so actions, messages and events are sent in exactly that shape: every
field of the record plus its `type` (an AgentStep carries none, as in LangChain).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, cast

from actloop.messages._record import Record
from actloop.steps import AgentStep

__all__ = ["as_text", "dumps", "encode", "json_text"]

_MAX_DEPTH = 64


def encode(value: Any, depth: int = 0) -> Any:
    """`value` as plain JSON data in LangServe's shape; unknown objects become their `str`."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None  # as JSON.stringify writes NaN
    if depth > _MAX_DEPTH:
        return str(value)
    if isinstance(value, Mapping):
        items = cast(Mapping[Any, Any], value).items()
        return {str(k): encode(v, depth + 1) for k, v in items}
    if isinstance(value, (list, tuple)):
        return [encode(v, depth + 1) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, Record):
        return _record(value, depth)
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    return str(value)


def _record(record: Record, depth: int) -> dict[str, Any]:
    fields: tuple[str, ...] = getattr(record, "_fields", ())
    data = {name: encode(getattr(record, name, None), depth + 1) for name in fields}
    kind = getattr(record, "type", None)
    if isinstance(kind, str) and not isinstance(record, AgentStep):
        data["type"] = kind
    return data


def dumps(value: Any) -> str:
    """`encode(value)` as compact JSON text (see `json_text`)."""
    return json_text(encode(value))


def as_text(value: Any) -> str:
    """A value as message text: a string as it is, anything else as `dumps` JSON (what a
    protocol shows of an observation or an answer that is not text)."""
    return value if isinstance(value, str) else dumps(value)


def json_text(data: Any) -> str:
    """Plain JSON data as compact text that always encodes to UTF-8: a lone surrogate (a model
    or a stored value may hold one) is written as its `\\udXXX` escape, never a 500."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
