"""`create_agent(response_format=...)`: structured output, as `langchain.agents.structured_output`.

A `response_format` is a schema (a pydantic model, a dataclass, a TypedDict or a JSON schema
dict, or a union of them) or a strategy around one:

- `ToolStrategy(schema)`: each schema becomes an artificial tool the model is made to call
  (`tool_choice="any"`); the call's arguments, validated, are the run's `structured_response`
  and a `ToolMessage` answers the call. A validation error (or several structured calls at once)
  is answered with an error `ToolMessage` and the model asked again, per `handle_errors`.
- `ProviderStrategy(schema)`: the provider's native structured output (OpenAI's
  `response_format={"type": "json_schema", ...}`); the reply's text is the JSON.
- `AutoStrategy(schema)` (what a bare schema means): the provider strategy when the model
  supports it (its `profile`, else its name), else the tool strategy.

Errors: `StructuredOutputError` is the root; `MultipleStructuredOutputsError` and
`StructuredOutputValidationError` are raised when `handle_errors` does not retry them.
pydantic is imported only when a schema is used.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, is_dataclass
from types import UnionType
from typing import Any, Generic, Literal, TypeVar, Union, cast, get_args, get_origin

from typing_extensions import is_typeddict

from actloop.messages import AIMessage

__all__ = [
    "AutoStrategy",
    "MultipleStructuredOutputsError",
    "OutputToolBinding",
    "ProviderStrategy",
    "ProviderStrategyBinding",
    "ResponseFormat",
    "SchemaKind",
    "StructuredOutputError",
    "StructuredOutputValidationError",
    "ToolStrategy",
]

SchemaT = TypeVar("SchemaT")

SchemaKind = Literal["pydantic", "dataclass", "typeddict", "json_schema"]

ErrorHandling = (
    bool | str | type[Exception] | tuple[type[Exception], ...] | Callable[[Exception], str]
)
"""`ToolStrategy.handle_errors`: retry all (True), with this text (str), only these types, with
the text a function gives, or never (False)."""


class StructuredOutputError(Exception):
    """The root of structured output errors; `ai_message` is the model's reply."""

    ai_message: AIMessage


class MultipleStructuredOutputsError(StructuredOutputError):
    """The model called several structured output tools where one is expected."""

    def __init__(self, tool_names: list[str], ai_message: AIMessage) -> None:
        self.tool_names = tool_names
        self.ai_message = ai_message
        super().__init__(
            "Model incorrectly returned multiple structured responses "
            f"({', '.join(tool_names)}) when only one is expected."
        )


class StructuredOutputValidationError(StructuredOutputError):
    """A structured output's arguments (or JSON text) failed the schema."""

    def __init__(self, tool_name: str, source: Exception, ai_message: AIMessage) -> None:
        self.tool_name = tool_name
        self.source = source
        self.ai_message = ai_message
        super().__init__(f"Failed to parse structured output for tool '{tool_name}': {source}.")


def _parse_with_schema(schema: Any, schema_kind: SchemaKind, data: dict[str, Any]) -> Any:
    """`data` validated into `schema`'s type (a JSON schema's data is returned as it is)."""
    if schema_kind == "json_schema":
        return data
    from pydantic import TypeAdapter

    try:
        return TypeAdapter(schema).validate_python(data)
    except Exception as e:
        schema_name = getattr(schema, "__name__", str(schema))
        raise ValueError(f"Failed to parse data to {schema_name}: {e}") from e


def _type_of(value: object) -> type[Any]:
    return type(value)


def _adapted_json_schema(form: Any) -> dict[str, Any]:
    from pydantic import TypeAdapter

    return TypeAdapter[Any](form).json_schema()


def _is_model_class(schema: Any, base: type[Any]) -> bool:
    return isinstance(schema, type) and issubclass(schema, base)


def _kind_and_json_schema(schema: Any) -> tuple[SchemaKind, dict[str, Any]]:
    """What kind of schema `schema` is, and its JSON schema."""
    if isinstance(schema, dict):
        return "json_schema", cast("dict[str, Any]", schema)
    from pydantic import BaseModel

    if _is_model_class(schema, BaseModel):
        return "pydantic", schema.model_json_schema()
    if is_dataclass(schema):
        return "dataclass", _adapted_json_schema(schema)
    if is_typeddict(schema):
        return "typeddict", _adapted_json_schema(schema)
    kind = _type_of(schema)
    raise ValueError(
        f"Unsupported schema type: {kind}. "
        f"Supported types: Pydantic models, dataclasses, TypedDicts, and JSON schema dicts."
    )


@dataclass(init=False)
class _SchemaSpec(Generic[SchemaT]):
    """One schema described for a tool or a provider: name, description, kind, JSON schema."""

    schema: Any
    name: str
    """The class's name, a JSON schema's `title`, or `response_format_XXXX`."""
    description: str
    """Given, else a JSON schema's `description` or the class's docstring."""
    schema_kind: SchemaKind
    json_schema: dict[str, Any]
    strict: bool | None = None

    def __init__(
        self,
        schema: Any,
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool | None = None,
    ) -> None:
        self.schema = schema
        fallback = f"response_format_{str(uuid.uuid4())[:4]}"
        if name:
            self.name = name
        elif isinstance(schema, dict):
            self.name = str(cast("dict[str, Any]", schema).get("title", fallback))
        else:
            self.name = str(getattr(schema, "__name__", fallback))
        if description:
            self.description = description
        elif isinstance(schema, dict):
            self.description = cast("dict[str, Any]", schema).get("description", "")
        else:
            self.description = getattr(schema, "__doc__", None) or ""
        self.strict = strict
        self.schema_kind, self.json_schema = _kind_and_json_schema(schema)


def _variants(schema: Any) -> Iterator[Any]:
    """The leaf schemas of a Union or of a JSON schema's `oneOf`."""
    if get_origin(schema) in {UnionType, Union}:
        for arg in get_args(schema):
            yield from _variants(arg)
        return
    if isinstance(schema, dict) and "oneOf" in schema:
        for sub in cast("dict[str, Any]", schema).get("oneOf", []):
            yield from _variants(sub)
        return
    yield schema


@dataclass(init=False)
class ToolStrategy(Generic[SchemaT]):
    """Structured output through artificial tool calls (one tool per schema of a union)."""

    schema: Any
    schema_specs: list[_SchemaSpec[Any]]
    tool_message_content: str | None
    """The answer to a successful structured call (default: "Returning structured response:
    {response}")."""
    handle_errors: ErrorHandling
    """Which errors are answered and retried (see `ErrorHandling`); a JSON schema dict's
    arguments are never validated, so it never errs."""

    def __init__(
        self,
        schema: Any,
        *,
        tool_message_content: str | None = None,
        handle_errors: ErrorHandling = True,
    ) -> None:
        self.schema = schema
        self.tool_message_content = tool_message_content
        self.handle_errors = handle_errors
        self.schema_specs = [_SchemaSpec(s) for s in _variants(schema)]


@dataclass(init=False)
class ProviderStrategy(Generic[SchemaT]):
    """Structured output through the provider's native JSON schema mode."""

    schema: Any
    schema_spec: _SchemaSpec[SchemaT]

    def __init__(self, schema: Any, *, strict: bool | None = None) -> None:
        self.schema = schema
        self.schema_spec = _SchemaSpec(schema, strict=strict)

    def to_model_kwargs(self) -> dict[str, Any]:
        """The bind kwargs asking for it: OpenAI's `response_format` of type `json_schema`."""
        json_schema: dict[str, Any] = {
            "name": self.schema_spec.name,
            "schema": self.schema_spec.json_schema,
        }
        if self.schema_spec.strict:
            json_schema["strict"] = True
        return {"response_format": {"type": "json_schema", "json_schema": json_schema}}


@dataclass
class OutputToolBinding(Generic[SchemaT]):
    """A `ToolStrategy` schema's artificial tool (bound to the model, never run) and parser."""

    schema: Any
    schema_kind: SchemaKind
    tool: Any
    """An actloop `StructuredTool` with the schema as its arguments."""

    @classmethod
    def from_schema_spec(cls, schema_spec: _SchemaSpec[Any]) -> OutputToolBinding[Any]:
        from actloop.tools import StructuredTool

        tool = StructuredTool(
            args_schema=schema_spec.json_schema,
            name=schema_spec.name,
            description=schema_spec.description,
        )
        return cls(schema=schema_spec.schema, schema_kind=schema_spec.schema_kind, tool=tool)

    def parse(self, tool_args: dict[str, Any]) -> Any:
        """The call's arguments as the schema's type (ValueError when they do not fit)."""
        return _parse_with_schema(self.schema, self.schema_kind, tool_args)


@dataclass
class ProviderStrategyBinding(Generic[SchemaT]):
    """A `ProviderStrategy`'s parser of the model's JSON text."""

    schema: Any
    schema_kind: SchemaKind

    @classmethod
    def from_schema_spec(cls, schema_spec: _SchemaSpec[Any]) -> ProviderStrategyBinding[Any]:
        return cls(schema=schema_spec.schema, schema_kind=schema_spec.schema_kind)

    def parse(self, response: AIMessage) -> Any:
        """The reply's text as JSON, validated into the schema's type (ValueError if not)."""
        raw_text = self._extract_text_content_from_message(response)
        try:
            data = json.loads(raw_text)
        except Exception as e:
            schema_name = getattr(self.schema, "__name__", "response_format")
            raise ValueError(
                f"Native structured output expected valid JSON for {schema_name}, "
                f"but parsing failed: {e}."
            ) from e
        return _parse_with_schema(self.schema, self.schema_kind, data)

    @staticmethod
    def _extract_text_content_from_message(message: AIMessage) -> str:
        content: Any = message.content
        if isinstance(content, str):
            return content
        parts: list[str] = []
        for c in cast("list[Any]", content):
            if isinstance(c, dict):
                block = cast("dict[str, Any]", c)
                if block.get("type") == "text" and "text" in block:
                    parts.append(str(block["text"]))
                elif "content" in block and isinstance(block["content"], str):
                    parts.append(block["content"])
            else:
                parts.append(str(c))
        return "".join(parts)


class AutoStrategy(Generic[SchemaT]):
    """The provider strategy when the model supports it, else the tool strategy."""

    schema: Any

    def __init__(self, schema: Any) -> None:
        self.schema = schema


ResponseFormat = ToolStrategy[SchemaT] | ProviderStrategy[SchemaT] | AutoStrategy[SchemaT]
"""Any of the strategies."""
