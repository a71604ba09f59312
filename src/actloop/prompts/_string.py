"""Text prompts: the prompt base class, `StringPromptTemplate` and the f-string `PromptTemplate`.

Templates are parsed once at construction with `string.Formatter().parse` (which also validates
them); formatting is a single `str.format_map` call.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from string import Formatter
from typing import TYPE_CHECKING, Any, cast

from typing_extensions import Self

from actloop.messages._record import Record
from actloop.prompts._values import PromptValue, StringPromptValue, troubleshooting
from actloop.runnables._base import Runnable, unpackable
from actloop.runnables._compose import AddableDict
from actloop.runnables._config import RunnableConfig

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "BasePromptTemplate",
    "PromptTemplate",
    "StringPromptTemplate",
    "check_format",
    "passable",
    "prompt_text",
    "template_variables",
]

_INVALID = "INVALID_PROMPT_INPUT"
_SELF = ("self",)


def passable(values: dict[str, Any]) -> bool:
    """Whether a prompt may hand `values` down its layers as it is instead of `**values` at each
    (a copy per layer, see `unpackable`): a plain dict (or an `AddableDict`) whose keys are
    strings other than `self`, so every `**values` would succeed and give the same mapping."""
    return (type(values) is dict or type(values) is AddableDict) and unpackable(values, _SELF)


def prompt_text(prompt: StringPromptTemplate, values: dict[str, Any]) -> str:
    """`prompt.format(**values)` for `passable` values: a `PromptTemplate` with its own `format`
    and no partials formats from `values` as it is."""
    if type(prompt).format is PromptTemplate.format and not prompt.partial_variables:
        return cast("PromptTemplate", prompt).template.format_map(values)
    return prompt.format(**values)


class BasePromptTemplate(Record, Runnable[dict[str, Any], PromptValue]):
    """A prompt: a Runnable from a dict of variables to a `PromptValue`."""

    _run_type = "prompt"

    _repr_defaults = {"optional_variables": []}  # noqa: RUF012 - read-only class data
    input_variables: list[str]
    """Names of the variables a caller must supply, sorted."""
    optional_variables: list[str]
    """Names of optional placeholders (they default to empty lists)."""
    partial_variables: dict[str, Any]
    """Values (or zero-argument callables) already bound to variables."""

    def _repr_parts(self) -> list[str]:
        """LangChain's fields: `input_types` (empty: actloop keeps no input types) follows the
        variables."""
        parts = super()._repr_parts()
        at = 2 if len(parts) > 1 and parts[1].startswith("optional_variables=") else 1
        return [*parts[:at], "input_types={}", *parts[at:]]

    def format_prompt(self, **kwargs: Any) -> PromptValue:
        """The prompt value for these variables."""
        raise NotImplementedError(f"{type(self).__name__} does not implement format_prompt")

    async def aformat_prompt(self, **kwargs: Any) -> PromptValue:
        """The prompt value for these variables (async; formatting does no I/O)."""
        return self.format_prompt(**kwargs)

    def format(self, **kwargs: Any) -> str:
        """The prompt as a string for these variables."""
        return self.format_prompt(**kwargs).to_string()

    async def aformat(self, **kwargs: Any) -> str:
        """The prompt as a string for these variables (async)."""
        return self.format(**kwargs)

    def partial(self, **kwargs: Any) -> Self:
        """A copy with some variables bound (values or zero-argument callables)."""
        new = copy.copy(self)
        new.partial_variables = {**self.partial_variables, **kwargs}
        new.input_variables = [v for v in self.input_variables if v not in kwargs]
        return new

    def _invoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> PromptValue:
        return self._prompt_value(self._validate_input(input))

    def _prompt_value(self, values: dict[str, Any]) -> PromptValue:
        """`format_prompt(**values)`; actloop's own prompts format from `values` as it is when
        it is `passable` (and `format_prompt` is theirs)."""
        return self.format_prompt(**values)

    async def _ainvoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> PromptValue:
        return await self.aformat_prompt(**self._validate_input(input))

    def _validate_input(self, input: Any) -> dict[str, Any]:
        """The input as a dict holding every required variable, or LangChain's error."""
        if not isinstance(input, dict):
            if len(self.input_variables) != 1:
                msg = (
                    f"Expected mapping type as input to {type(self).__name__}. "
                    f"Received {type(input)}."
                )
                raise TypeError(troubleshooting(msg, _INVALID))
            input = {self.input_variables[0]: input}
        values: dict[str, Any] = input  # pyright: ignore[reportUnknownVariableType]
        missing = set(self.input_variables).difference(values)
        if missing:
            msg = (
                f"Input to {type(self).__name__} is missing variables {missing}. "
                f" Expected: {self.input_variables}"
                f" Received: {list(values.keys())}"
            )
            example = missing.pop()
            msg += (
                f"\nNote: if you intended {{{example}}} to be part of the string"
                " and not a variable, please escape it with double curly braces like: "
                f"'{{{{{example}}}}}'."
            )
            raise KeyError(troubleshooting(msg, _INVALID))
        return values

    def _merge_partial_and_user_variables(self, **kwargs: Any) -> dict[str, Any]:
        """Partial values (callables called) overridden by `kwargs` (LangChain's helper name)."""
        return self._merge_partials(kwargs)

    def _merge_partials(self, values: dict[str, Any]) -> dict[str, Any]:
        """Partial values (callables called) overridden by `values`."""
        if not self.partial_variables:
            return values
        merged = {k: v() if callable(v) else v for k, v in self.partial_variables.items()}
        merged.update(values)
        return merged

    def _check_names(self) -> None:
        """Reject the reserved name `stop` and variables that are both input and partial."""
        if "stop" in self.input_variables:
            msg = (
                "Cannot have an input variable named 'stop', as it is used internally,"
                " please rename."
            )
            raise ValueError(troubleshooting(msg, _INVALID))
        if "stop" in self.partial_variables:
            msg = (
                "Cannot have an partial variable named 'stop', as it is used internally,"
                " please rename."
            )
            raise ValueError(troubleshooting(msg, _INVALID))
        overlap = set(self.input_variables).intersection(self.partial_variables)
        if overlap:
            msg = f"Found overlapping input and partial variables: {overlap}"
            raise ValueError(troubleshooting(msg, _INVALID))


class StringPromptTemplate(BasePromptTemplate):
    """A prompt that formats to text; subclass it and implement `format` for custom prompts."""

    _fields = ("input_variables", "optional_variables", "partial_variables")

    def __init__(
        self,
        *,
        input_variables: Sequence[str] = (),
        partial_variables: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> None:
        self.input_variables = list(input_variables)
        self.optional_variables = []
        self.partial_variables = dict(partial_variables or {})
        for key, value in fields.items():
            setattr(self, key, value)
        self._check_names()

    def format_prompt(self, **kwargs: Any) -> PromptValue:
        """The formatted text as a `StringPromptValue`."""
        return StringPromptValue(self.format(**kwargs))

    def _prompt_value(self, values: dict[str, Any]) -> PromptValue:
        if type(self).format_prompt is StringPromptTemplate.format_prompt and passable(values):
            return StringPromptValue(prompt_text(self, values))
        return self.format_prompt(**values)

    def format(self, **kwargs: Any) -> str:
        """The formatted text."""
        raise NotImplementedError(f"{type(self).__name__} does not implement format")


class PromptTemplate(StringPromptTemplate):
    """An f-string text prompt; `input_variables` are read from the template, not passed in."""

    _fields = ("input_variables", "optional_variables", "partial_variables", "template")

    def __init__(
        self,
        *,
        template: str,
        input_variables: Sequence[str] | None = None,
        partial_variables: Mapping[str, Any] | None = None,
        template_format: str = "f-string",
        validate_template: bool = False,
    ) -> None:
        check_format(template_format)
        partials = dict(partial_variables or {})
        variables = template_variables(template)
        if validate_template:
            _validate_template(variables, input_variables, partials)
        self.template = template
        self.template_format = template_format
        self.validate_template = validate_template
        super().__init__(
            input_variables=[v for v in variables if v not in partials], partial_variables=partials
        )

    @classmethod
    def from_template(
        cls,
        template: str,
        *,
        template_format: str = "f-string",
        partial_variables: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Self:
        """A prompt from an f-string template."""
        return cls(
            template=template,
            template_format=template_format,
            partial_variables=partial_variables,
            **kwargs,
        )

    @classmethod
    def from_file(
        cls, template_file: str | Path, encoding: str | None = None, **kwargs: Any
    ) -> Self:
        """A prompt whose template is the text of a file."""
        from pathlib import Path  # only here: pathlib and urllib.parse cost ~2 ms at import

        return cls.from_template(Path(template_file).read_text(encoding=encoding), **kwargs)

    @classmethod
    def from_examples(
        cls,
        examples: list[str],
        suffix: str,
        input_variables: list[str],
        example_separator: str = "\n\n",
        prefix: str = "",
        **kwargs: Any,
    ) -> Self:
        """A prompt of `prefix`, the examples and `suffix`, joined by `example_separator`."""
        template = example_separator.join([prefix, *examples, suffix])
        return cls(template=template, input_variables=input_variables, **kwargs)

    def format(self, **kwargs: Any) -> str:
        """The template with the variables (and partials) filled in."""
        return self.template.format_map(self._merge_partials(kwargs))

    def partial(self, **kwargs: Any) -> Self:
        """A copy with some variables bound (values or zero-argument callables)."""
        return type(self)(
            template=self.template, partial_variables={**self.partial_variables, **kwargs}
        )

    def __add__(self, other: Any) -> PromptTemplate:
        """The concatenation of two templates (or a template and a template string)."""
        if isinstance(other, str):
            other = PromptTemplate.from_template(other)
        if not isinstance(other, PromptTemplate):
            raise NotImplementedError(f"Unsupported operand type for +: {type(other)}")
        partials = dict(self.partial_variables)
        for key, value in other.partial_variables.items():
            if key in partials:
                raise ValueError("Cannot have same variable partialed twice.")
            partials[key] = value
        return PromptTemplate(
            template=self.template + other.template,
            partial_variables=partials,
            validate_template=self.validate_template and other.validate_template,
            input_variables=[*self.input_variables, *other.input_variables],
        )


def _validate_template(
    variables: list[str], input_variables: Sequence[str] | None, partials: Mapping[str, Any]
) -> None:
    """`validate_template=True`: every template variable must be an input or a partial."""
    if input_variables is None:
        raise ValueError("Input variables must be provided to validate the template.")
    all_inputs = [*input_variables, *partials]
    if set(variables).difference(all_inputs):
        raise ValueError(
            "Invalid prompt schema; check for mismatched or missing input parameters"
            f" from {all_inputs}."
        )


def check_format(template_format: str) -> None:
    """Reject template formats other than f-string (mustache and jinja2 are not supported)."""
    if template_format != "f-string":
        raise ValueError(
            f"template_format {template_format!r} is not supported; actloop prompts use 'f-string'"
        )


def template_variables(template: str) -> list[str]:
    """The sorted variable names of an f-string template; rejects fields LangChain rejects."""
    names: set[str] = set()
    for _, field, spec, _ in Formatter().parse(template):
        if field is None:
            continue
        if "." in field or "[" in field or "]" in field:
            raise ValueError(
                f"Invalid variable name {field!r} in f-string template. Variable names cannot "
                "contain attribute access (.) or indexing ([])."
            )
        if field.isdigit():
            raise ValueError(
                f"Invalid variable name {field!r} in f-string template. Variable names cannot be "
                "all digits as they are interpreted as positional arguments."
            )
        if spec and ("{" in spec or "}" in spec):
            raise ValueError(
                "Invalid format specifier in f-string template. "
                "Nested replacement fields are not allowed."
            )
        names.add(field)
    return sorted(names)
