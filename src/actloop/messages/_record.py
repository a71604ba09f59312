"""A tiny base for plain data classes: pydantic-like equality, a readable repr and `model_dump`."""

from __future__ import annotations

import builtins
from typing import Any, ClassVar

__all__ = ["ALWAYS_HIDE", "Record"]

ALWAYS_HIDE: Any = object()
"""Marker in `_repr_defaults`: never show this field in the repr."""


class Record:
    """Equal when the class and every field in `_fields` match; unhashable like pydantic models."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _repr_defaults: ClassVar[dict[str, Any]] = {}
    """Fields left out of the repr while they equal this default."""
    _dump_as: ClassVar[dict[str, type[Record]]] = {}
    """Fields whose records dump as a base class, as pydantic dumps a field of a declared type."""
    _dump_type: ClassVar[bool] = True
    """`model_dump` includes the instance's `type` (when the class has one)."""

    def model_dump(self) -> dict[str, Any]:
        """The fields as a dict, nested records dumped too (pydantic's `model_dump`)."""
        return self._dump_fields(type(self))

    def _dump_fields(self, cls: type[Record]) -> dict[str, Any]:
        """The fields `cls` declares: a field declared as a base class dumps as that class."""
        out = {f: Record._dump_value(getattr(self, f), cls._dump_as.get(f)) for f in cls._fields}
        kind = getattr(self, "type", None)
        if cls._dump_type and isinstance(kind, str):
            out["type"] = kind
        return out

    @staticmethod
    def _dump_value(value: Any, as_cls: type[Record] | None) -> Any:
        """One field's value dumped: records as dicts, inside lists, tuples and dicts too."""
        if isinstance(value, Record):
            return value._dump_fields(as_cls or type(value))
        if isinstance(value, (list, tuple)):
            return [Record._dump_value(v, as_cls) for v in value]  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, dict):
            return {k: Record._dump_value(v, None) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
        return value

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    __hash__ = None  # pyright: ignore[reportAssignmentType]  # unhashable: equality is by value

    def _repr_parts(self) -> list[str]:
        """The repr's `field=value` parts (a field at its `_repr_defaults` value left out)."""
        parts: list[str] = []
        defaults = self._repr_defaults
        for field in self._fields:
            value = getattr(self, field)
            if field in defaults:
                default = defaults[field]
                if default is ALWAYS_HIDE or value is default or _same(value, default):
                    continue
            parts.append(f"{field}={value!r}")
        return parts

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self._repr_parts())})"

    def __str__(self) -> str:
        """The repr's fields without the class name, as pydantic's `str()` of a model."""
        return " ".join(self._repr_parts())

    def dict(self, **kwargs: Any) -> builtins.dict[str, Any]:
        """pydantic v1's name of `model_dump` (kept last: it shadows `dict` in this class body)."""
        return self.model_dump()


def _same(value: Any, default: Any) -> bool:
    """Equality that never raises (values may compare oddly)."""
    try:
        return bool(value == default) and type(value) is type(default)
    except Exception:
        return False
