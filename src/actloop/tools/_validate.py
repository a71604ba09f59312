"""Tool argument checking against a pydantic model or a JSON-schema dict (SPEC B10).

Arguments that fail validation do not raise: the tool's run returns this observation, so the
model can fix its call and the run goes on (`on_tool_end` fires with it)::

    Invalid arguments for tool 'multiply': field 'b': Input should be a valid integer,
    unable to parse string as an integer. Fix the arguments and try again.

Several problems are joined with "; " (`field 'a': Field required; field 'b': ...`); nested
fields are dotted (`field 'items.0'`). Keys the schema does not declare are ignored for pydantic
models, as LangChain does (unless the model forbids extras); JSON-schema tools receive the dict
as given, and only `additionalProperties: false` rejects extras. What the JSON-schema check
covers (types, bounds, patterns, ...) is listed in `actloop.tools._jsonschema`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from actloop.tools._schema import fields_of, model_fields, remember

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

    from actloop.tools._jsonschema import Loc, Problem

__all__ = ["InvalidArguments", "invalid", "parse_input"]


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
    if isinstance(tool_input, str) and (_PLAIN_STR.get(schema) or _takes_plain_str(schema)):
        return (tool_input,), {}  # a str for an unconstrained str field: nothing to check
    error_type = _ERROR[0] if _ERROR else _validation_error()
    try:
        if isinstance(tool_input, str):  # the string goes to the first field, and is passed as is
            key = next(iter(model_fields(schema)))
            schema.model_validate({key: tool_input})
            return (tool_input,), {}
        result = schema.model_validate(tool_input)
    except error_type as exc:
        problems = [(tuple(e["loc"]), e["msg"]) for e in exc.errors(include_url=False)]
        raise invalid(tool, problems, exc) from None
    return (), _validated(schema, result, tool_input)


_ERROR: list[type[ValidationError]] = []
"""pydantic's ValidationError once loaded (an import statement per call costs a package
lookup and its `__getattr__`)."""


def _validation_error() -> type[ValidationError]:
    """pydantic's ValidationError, imported on first use (`import actloop` stays pydantic-free)."""
    from pydantic import ValidationError

    _ERROR.append(ValidationError)
    return ValidationError


_PLAIN_STR: dict[type[BaseModel], bool] = {}
_FILLED: dict[type[BaseModel], tuple[tuple[str, bool], ...]] = {}


def _takes_plain_str(schema: type[BaseModel]) -> bool:
    """True when the schema's first field is a bare `str` (no constraints): any str is valid."""
    plain = _PLAIN_STR.get(schema)
    if plain is None:
        first = next(iter(fields_of(schema).values()), None)
        plain = first is not None and first.annotation is str and not first.metadata
        remember(_PLAIN_STR, schema, plain)
    return plain


def _validated(
    schema: type[BaseModel], result: BaseModel, tool_input: Mapping[str, Any]
) -> dict[str, Any]:
    """Given fields (validated), fields given by alias, and fields with defaults; as LangChain."""
    provided = result.model_fields_set
    out: dict[str, Any] = {}
    for name, defaulted in _FILLED.get(schema) or _filled(schema):
        if defaulted or name in tool_input or name in provided:
            out[name] = getattr(result, name)
    return out


def _filled(schema: type[BaseModel]) -> tuple[tuple[str, bool], ...]:
    """The schema's fields in order, each with whether it is passed even when not given (it has
    a default and is not `args`/`kwargs`); computed once per schema."""
    found = tuple(
        (name, name not in ("args", "kwargs") and not field.is_required())
        for name, field in model_fields(schema).items()
    )
    return remember(_FILLED, schema, found)


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
        if problems := _schema_problems(schema, {key: tool_input}):
            raise invalid(tool, problems)
        return (tool_input,), {}
    if problems := _schema_problems(schema, tool_input):
        raise invalid(tool, problems)
    return (), dict(tool_input)


def _schema_problems(schema: dict[str, Any], value: Any) -> list[Problem]:
    """The checker's problems; a call from an already deep stack still gets an observation."""
    from actloop.tools._jsonschema import TOO_DEEP, schema_errors  # only JSON-schema tools need it

    try:
        return schema_errors(schema, value, schema)
    except RecursionError:
        return [((), TOO_DEEP)]
