"""A tiny base for plain data classes: pydantic-like equality and a readable repr."""

from __future__ import annotations

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

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    __hash__ = None  # pyright: ignore[reportAssignmentType]  # unhashable: equality is by value

    def __repr__(self) -> str:
        parts: list[str] = []
        defaults = self._repr_defaults
        for field in self._fields:
            value = getattr(self, field)
            if field in defaults:
                default = defaults[field]
                if default is ALWAYS_HIDE or value is default or _same(value, default):
                    continue
            parts.append(f"{field}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _same(value: Any, default: Any) -> bool:
    """Equality that never raises (values may compare oddly)."""
    try:
        return bool(value == default) and type(value) is type(default)
    except Exception:
        return False
