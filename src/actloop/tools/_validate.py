"""Tool argument checking against a pydantic model or a JSON-schema dict (SPEC B10).

Arguments that fail validation do not raise: the tool's run returns this observation, so the
model can fix its call and the run goes on (`on_tool_end` fires with it)::

    Invalid arguments for tool 'multiply': field 'b': Input should be a valid integer,
    unable to parse string as an integer. Fix the arguments and try again.

Several problems are joined with "; " (`field 'a': Field required; field 'b': ...`); nested
fields are dotted (`field 'items.0'`). Keys the schema does not declare are ignored for pydantic
models, as LangChain does (unless the model forbids extras); JSON-schema tools receive the dict
as given, and only `additionalProperties: false` rejects extras. The JSON-schema check covers
`type`, `required`, `properties`, `additionalProperties: false`, `items`, `enum`, `const`,
`anyOf`/`oneOf`/`allOf` and local `$ref`s; values are not coerced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from actloop.tools._schema import model_fields

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["InvalidArguments", "invalid", "parse_input"]

Loc = tuple[str | int, ...]


class InvalidArguments(ValueError):
    """Tool arguments failed validation; `str(self)` is the observation for the model."""

    def __init__(self, observation: str, cause: Exception | None = None) -> None:
        super().__init__(observation)
        self.cause = cause


def invalid(
    tool: str, problems: Sequence[tuple[Loc, str]], cause: Exception | None = None
) -> InvalidArguments:
    """The InvalidArguments for `problems` (location, reason) of tool `tool`."""
    details = "; ".join(
        f"field {'.'.join(map(str, loc))!r}: {reason}" if loc else reason
        for loc, reason in problems
    )
    return InvalidArguments(
        f"Invalid arguments for tool {tool!r}: {details}. Fix the arguments and try again.", cause
    )


def parse_input(
    tool: str, schema: type[BaseModel] | dict[str, Any], tool_input: Any
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Positional and keyword arguments for the tool, or raise InvalidArguments."""
    if isinstance(schema, dict):
        return _parse_json_schema(tool, schema, tool_input)
    if isinstance(tool_input, str) and _takes_plain_str(schema):
        return (tool_input,), {}  # a str for an unconstrained str field: nothing to check
    from pydantic import ValidationError

    try:
        if isinstance(tool_input, str):  # the string goes to the first field, and is passed as is
            key = next(iter(model_fields(schema)))
            schema.model_validate({key: tool_input})
            return (tool_input,), {}
        result = schema.model_validate(tool_input)
    except ValidationError as exc:
        problems = [(tuple(e["loc"]), e["msg"]) for e in exc.errors(include_url=False)]
        raise invalid(tool, problems, exc) from None
    return (), _validated(schema, result, tool_input)


_PLAIN_STR: dict[type[BaseModel], bool] = {}


def _takes_plain_str(schema: type[BaseModel]) -> bool:
    """True when the schema's first field is a bare `str` (no constraints): any str is valid."""
    plain = _PLAIN_STR.get(schema)
    if plain is None:
        fields = model_fields(schema)
        first = next(iter(fields.values()), None)
        plain = first is not None and first.annotation is str and not first.metadata
        _PLAIN_STR[schema] = plain
    return plain


def _validated(
    schema: type[BaseModel], result: BaseModel, tool_input: Mapping[str, Any]
) -> dict[str, Any]:
    """Given fields (validated), fields given by alias, and fields with defaults; as LangChain."""
    provided = result.model_fields_set
    out: dict[str, Any] = {}
    for name, field in model_fields(schema).items():
        if (
            name in tool_input
            or name in provided
            or (name not in ("args", "kwargs") and not field.is_required())
        ):
            out[name] = getattr(result, name)
    return out


def _parse_json_schema(
    tool: str, schema: dict[str, Any], tool_input: Any
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    properties: dict[str, Any] = schema.get("properties") or {}
    if isinstance(tool_input, str):
        if len(properties) != 1:
            names = ", ".join(repr(n) for n in properties)
            reason = f"expected a JSON object with the fields {names}, got a string"
            raise invalid(tool, [((), reason)])
        key = next(iter(properties))
        if problems := schema_errors(schema, {key: tool_input}, schema):
            raise invalid(tool, problems)
        return (tool_input,), {}
    if problems := schema_errors(schema, tool_input, schema):
        raise invalid(tool, problems)
    return (), dict(tool_input)


# -- a small JSON-schema checker with pydantic's wording -----------------------------------------


def _is_int(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (
        isinstance(v, float) and v.is_integer()
    )


_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "string": (lambda v: isinstance(v, str), "Input should be a valid string"),
    "integer": (_is_int, "Input should be a valid integer"),
    "number": (
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "Input should be a valid number",
    ),
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
    schema: Any, value: Any, root: dict[str, Any], loc: Loc = ()
) -> list[tuple[Loc, str]]:
    """Problems of `value` against JSON schema `schema` as (location, reason) pairs."""
    if not isinstance(schema, dict):
        return []
    schema = _resolve(schema, root)  # pyright: ignore[reportUnknownArgumentType]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and not any(
            not schema_errors(o, value, root, loc)
            for o in options  # pyright: ignore[reportUnknownVariableType]
        ):
            return [(loc, "Input should match one of the allowed schemas")]
    problems: list[tuple[Loc, str]] = []
    for sub in schema.get("allOf") or ():
        problems += schema_errors(sub, value, root, loc)
    if type_problem := _type_error(schema.get("type"), value):
        return [*problems, (loc, type_problem)]
    if "enum" in schema and value not in schema["enum"]:
        problems.append((loc, _one_of_text(schema["enum"])))
    if "const" in schema and value != schema["const"]:
        problems.append((loc, _one_of_text([schema["const"]])))
    if isinstance(value, dict):
        problems += _object_errors(schema, value, root, loc)  # pyright: ignore[reportUnknownArgumentType]
    elif isinstance(value, list) and isinstance(items := schema.get("items"), dict):
        for i, item in enumerate(value):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            problems += schema_errors(items, item, root, (*loc, i))
    return problems


def _type_error(declared: Any, value: Any) -> str | None:
    if declared is None:
        return None
    names = [declared] if isinstance(declared, str) else list(declared)
    known = [n for n in names if n in _TYPES]
    if not known or any(_TYPES[n][0](value) for n in known):
        return None
    return _TYPES[known[0]][1]


def _object_errors(
    schema: dict[str, Any], value: dict[str, Any], root: dict[str, Any], loc: Loc
) -> list[tuple[Loc, str]]:
    properties: dict[str, Any] = schema.get("properties") or {}
    problems: list[tuple[Loc, str]] = [
        ((*loc, name), "Field required")
        for name in schema.get("required") or ()
        if name not in value
    ]
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            problems += schema_errors(properties[name], item, root, (*loc, name))
        elif extra is False:
            problems.append(((*loc, name), "Extra inputs are not permitted"))
        elif isinstance(extra, dict):
            problems += schema_errors(extra, item, root, (*loc, name))
    return problems
