"""Settings fields from class annotations: `Model(temperature=0.2)` for models written the
langchain-core way (annotated class attributes, no `__init__`), without making them pydantic models.

A field is an annotated class attribute of the subclass chain (not a `ClassVar`); its default is
the class attribute, a pydantic `Field(default=...)`/`Field(default_factory=...)` is unwrapped.
"""

from __future__ import annotations

from typing import Any

__all__ = ["field_names", "init_fields"]

_CACHE: dict[type, frozenset[str]] = {}


def field_names(cls: type) -> frozenset[str]:
    """The annotated, non-ClassVar attribute names of `cls` and its bases."""
    names = _CACHE.get(cls)
    if names is None:
        found: set[str] = set()
        for klass in cls.__mro__:
            for name, hint in vars(klass).get("__annotations__", {}).items():
                if not name.startswith("__") and "ClassVar" not in str(hint):
                    found.add(name)
        names = _CACHE[cls] = frozenset(found)
    return names


def _default(value: Any) -> Any:
    """A class attribute as a default: a pydantic FieldInfo gives its default or factory's value."""
    if type(value).__name__ != "FieldInfo":
        return value
    factory = getattr(value, "default_factory", None)
    return factory() if factory is not None else value.default


def init_fields(obj: object, kwargs: dict[str, Any]) -> None:
    """Set each given field on `obj` (unknown names raise) and unwrap FieldInfo defaults."""
    cls = type(obj)
    names = field_names(cls)
    unknown = sorted(set(kwargs) - names)
    if unknown:
        raise TypeError(
            f"{cls.__name__}.__init__() got an unexpected keyword argument {unknown[0]!r} "
            "(settings are the class's annotated fields)"
        )
    for name, value in kwargs.items():
        setattr(obj, name, value)
    for name in names - kwargs.keys():
        current = getattr(cls, name, None)
        if type(current).__name__ == "FieldInfo":
            setattr(obj, name, _default(current))
