"""A small JSON-schema checker for tool arguments, reporting problems in pydantic's wording.

Covers `type`, `required`, `properties`, `additionalProperties`, `items`, `enum`, `const`,
`anyOf`/`oneOf`/`allOf`, local `$ref`s, and the bounds `minimum`, `maximum`, `exclusiveMinimum`,
`exclusiveMaximum` (numbers, or draft-4 booleans), `minLength`, `maxLength`, `pattern`,
`minItems` and `maxItems`. Values are not coerced. A bound whose value is not of its type (say
`"maximum": "10"`, or a pattern that does not compile) is a problem too, so a broken schema
refuses every call instead of letting arguments through unchecked.

The check never raises `RecursionError`: it stops descending after `MAX_DEPTH` nested checks (a
value nested that deep, or a schema whose `$ref`s loop without consuming the value) and reports
that as a problem. Patterns run on Python's `re`; the tool's author chooses them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any, cast

__all__ = ["MAX_DEPTH", "TOO_DEEP", "Loc", "Problem", "schema_errors"]

Loc = tuple[str | int, ...]
Problem = tuple[Loc, str]

MAX_DEPTH = 100
"""How many nested checks one call may take (each object or array level is at least one)."""
TOO_DEEP = f"Input is nested too deeply to check (more than {MAX_DEPTH} levels)"


def _is_int(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (
        isinstance(v, float) and v.is_integer()
    )


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "string": (lambda v: isinstance(v, str), "Input should be a valid string"),
    "integer": (_is_int, "Input should be a valid integer"),
    "number": (_is_number, "Input should be a valid number"),
    "boolean": (lambda v: isinstance(v, bool), "Input should be a valid boolean"),
    "array": (lambda v: isinstance(v, list), "Input should be a valid list"),
    "object": (lambda v: isinstance(v, dict), "Input should be a valid dictionary"),
    "null": (lambda v: v is None, "Input should be None"),
}


def _one_of_text(values: Sequence[Any]) -> str:
    shown = [repr(v) for v in values]
    if len(shown) <= 1:
        return f"Input should be {''.join(shown)}"
    return f"Input should be {', '.join(shown[:-1])} or {shown[-1]}"


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    target: Any = root
    for part in ref[2:].split("/"):
        target = cast("dict[str, Any]", target).get(part, {}) if isinstance(target, dict) else {}
    rest = {k: v for k, v in schema.items() if k != "$ref"}
    return {**target, **rest} if isinstance(target, dict) else rest


def schema_errors(
    schema: Any, value: Any, root: dict[str, Any], loc: Loc = (), depth: int = 0
) -> list[Problem]:
    """Problems of `value` against JSON schema `schema` as (location, reason) pairs."""
    if not isinstance(schema, dict):
        return []
    if depth >= MAX_DEPTH:
        return [(loc, TOO_DEEP)]
    schema = _resolve(schema, root)  # pyright: ignore[reportUnknownArgumentType]
    deeper = depth + 1
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and (
            failed := _no_option_fits(options, value, root, loc, deeper)  # pyright: ignore[reportUnknownArgumentType]
        ):
            return failed
    problems: list[Problem] = []
    for sub in schema.get("allOf") or ():
        problems += schema_errors(sub, value, root, loc, deeper)
    if type_problem := _type_error(schema.get("type"), value):
        return [*problems, (loc, type_problem)]
    problems += [(loc, reason) for reason in _value_errors(schema, value)]
    if isinstance(value, dict):
        problems += _object_errors(schema, value, root, loc, deeper)  # pyright: ignore[reportUnknownArgumentType]
    elif isinstance(value, list):
        problems += _array_errors(schema, value, root, loc, deeper)  # pyright: ignore[reportUnknownArgumentType]
    return problems


def _value_errors(schema: dict[str, Any], value: Any) -> list[str]:
    """Reasons from `enum`, `const` and the bounds."""
    reasons: list[str] = []
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        reasons.append(_one_of_text(cast("list[Any]", enum)))
    if "const" in schema and value != schema["const"]:
        reasons.append(_one_of_text([schema["const"]]))
    return reasons + _bound_errors(schema, value)


def _array_errors(
    schema: dict[str, Any], value: list[Any], root: dict[str, Any], loc: Loc, depth: int
) -> list[Problem]:
    items = schema.get("items")
    problems: list[Problem] = []
    if not isinstance(items, dict):
        return problems
    for i, item in enumerate(value):
        problems += schema_errors(items, item, root, (*loc, i), depth)
        if problems and problems[-1][1] == TOO_DEEP:
            break  # one report is enough; checking every sibling costs time, not safety
    return problems


def _no_option_fits(
    options: list[Any], value: Any, root: dict[str, Any], loc: Loc, depth: int
) -> list[Problem]:
    """No problem if some option fits; else the too-deep report if there was one, or one line."""
    too_deep: list[Problem] = []
    for option in options:
        problems = schema_errors(option, value, root, loc, depth)
        if not problems:
            return []
        too_deep = too_deep or [p for p in problems if p[1] == TOO_DEEP]
    return too_deep or [(loc, "Input should match one of the allowed schemas")]


def _type_error(declared: Any, value: Any) -> str | None:
    if declared is None:
        return None
    names = [declared] if isinstance(declared, str) else list(declared)
    known = [n for n in names if n in _TYPES]
    if not known or any(_TYPES[n][0](value) for n in known):
        return None
    return _TYPES[known[0]][1]


def _object_errors(
    schema: dict[str, Any], value: dict[str, Any], root: dict[str, Any], loc: Loc, depth: int
) -> list[Problem]:
    properties: dict[str, Any] = schema.get("properties") or {}
    problems: list[Problem] = [
        ((*loc, name), "Field required")
        for name in schema.get("required") or ()
        if name not in value
    ]
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            problems += schema_errors(properties[name], item, root, (*loc, name), depth)
        elif extra is False:
            problems.append(((*loc, name), "Extra inputs are not permitted"))
        elif isinstance(extra, dict):
            problems += schema_errors(extra, item, root, (*loc, name), depth)
    return problems


# -- bounds --------------------------------------------------------------------------------------


def _bound_errors(schema: dict[str, Any], value: Any) -> list[str]:
    """Reasons `value` breaks the schema's numeric, length or pattern bounds (pydantic's words)."""
    if _is_number(value):
        return _number_errors(schema, value)
    if isinstance(value, str):
        problems = _count_errors(schema, len(value), "minLength", "maxLength", _chars)
        if "pattern" in schema:
            problems += _pattern_errors(schema["pattern"], value)
        return problems
    if isinstance(value, list):
        return _count_errors(schema, len(value), "minItems", "maxItems", _items)  # pyright: ignore[reportUnknownArgumentType]
    return []


def _broken(key: str, bound: Any) -> str:
    return f"the tool's schema has an invalid {key!r}: {bound!r}"


def _number_errors(schema: dict[str, Any], value: float) -> list[str]:
    problems: list[str] = []
    for key, exclusive, upper in (
        ("minimum", "exclusiveMinimum", False),
        ("maximum", "exclusiveMaximum", True),
    ):
        draft4 = schema.get(exclusive) is True  # draft 4: a flag that makes `key` exclusive
        for name, strict in ((key, draft4), (exclusive, True)):
            bound = schema.get(name)
            if bound is None or (name == exclusive and isinstance(bound, bool)):
                continue
            if not _is_number(bound):
                problems.append(_broken(name, bound))
            elif not _within(value, bound, upper=upper, strict=strict):
                words = ("less" if upper else "greater") + (
                    " than" if strict else " than or equal to"
                )
                problems.append(f"Input should be {words} {bound}")
    return problems


def _within(value: float, bound: float, *, upper: bool, strict: bool) -> bool:
    if upper:
        return value < bound if strict else value <= bound
    return value > bound if strict else value >= bound


def _chars(n: int) -> str:
    return f"String should have {{}} {n} character{'s' if n != 1 else ''}"


def _items(n: int) -> str:
    return f"List should have {{}} {n} item{'s' if n != 1 else ''} after validation, not {{}}"


def _count_errors(
    schema: dict[str, Any], size: int, low: str, high: str, text: Callable[[int], str]
) -> list[str]:
    problems: list[str] = []
    for key, holds, words in ((low, size.__ge__, "at least"), (high, size.__le__, "at most")):
        bound = schema.get(key)
        if bound is None:
            continue
        if not _is_int(bound) or bound < 0:
            problems.append(_broken(key, bound))
        elif not holds(int(bound)):
            problems.append(text(int(bound)).format(words, size))
    return problems


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _pattern_errors(pattern: Any, value: str) -> list[str]:
    compiled = _compiled(pattern) if isinstance(pattern, str) else None
    if compiled is None:
        return [_broken("pattern", pattern)]
    return [] if compiled.search(value) else [f"String should match pattern {pattern!r}"]
