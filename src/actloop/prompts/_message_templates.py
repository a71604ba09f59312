"""Message templates of a chat prompt: human/AI/system templates and `MessagesPlaceholder`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

from typing_extensions import Self

from actloop.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from actloop.messages._record import Record
from actloop.prompts._string import (
    PromptTemplate,
    check_format,
    prompt_text,
    template_variables,
)
from actloop.prompts._values import convert_to_messages

__all__ = [
    "AIMessagePromptTemplate",
    "BaseMessagePromptTemplate",
    "HumanMessagePromptTemplate",
    "MessagesPlaceholder",
    "SystemMessagePromptTemplate",
    "part_messages",
]


class BaseMessagePromptTemplate(Record):
    """A part of a chat prompt that formats to a list of messages."""

    __slots__ = ()

    @property
    def input_variables(self) -> list[str]:
        """The variables this part needs."""
        raise NotImplementedError

    def format_messages(self, **kwargs: Any) -> list[BaseMessage]:
        """The messages for these variables."""
        raise NotImplementedError

    async def aformat_messages(self, **kwargs: Any) -> list[BaseMessage]:
        """The messages for these variables (async; formatting does no I/O)."""
        return self.format_messages(**kwargs)


class MessagesPlaceholder(BaseMessagePromptTemplate):
    """Stands for a list of messages passed in a variable (e.g. chat history, agent scratchpad)."""

    __slots__ = ("n_messages", "optional", "variable_name")
    _fields = ("variable_name", "optional", "n_messages")
    _repr_defaults: ClassVar[dict[str, Any]] = {"optional": False, "n_messages": None}

    def __init__(
        self, variable_name: str, *, optional: bool = False, n_messages: int | None = None
    ) -> None:
        self.variable_name = variable_name
        self.optional = optional
        self.n_messages = n_messages
        """Keep only the last `n_messages` messages (all when None)."""

    @property
    def input_variables(self) -> list[str]:
        """The variable name, unless the placeholder is optional."""
        return [] if self.optional else [self.variable_name]

    def format_messages(self, **kwargs: Any) -> list[BaseMessage]:
        """The variable's list, coerced to messages (strings, `(role, text)` pairs, dicts)."""
        return _listed(self, kwargs)


def _listed(placeholder: MessagesPlaceholder, kwargs: dict[str, Any]) -> list[BaseMessage]:
    """`placeholder.format_messages(**kwargs)` of the class's own, `kwargs` read as it is."""
    name = placeholder.variable_name
    value = kwargs.get(name, []) if placeholder.optional else kwargs[name]
    if not isinstance(value, list):
        raise ValueError(
            f"variable {name} should be a list of base messages, got {value} of type {type(value)}"
        )
    messages = convert_to_messages(value)  # pyright: ignore[reportUnknownArgumentType]
    if placeholder.n_messages:
        messages = messages[-placeholder.n_messages :]
    return messages


class _ImageTemplate(Record):
    """An `image_url` content part whose url (and detail) are f-string templates."""

    __slots__ = ("input_variables", "template")
    _fields = ("template", "input_variables")

    def __init__(self, template: Mapping[str, Any], input_variables: list[str]) -> None:
        self.template = dict(template)
        self.input_variables = input_variables

    @classmethod
    def from_part(cls, part: Mapping[str, Any]) -> _ImageTemplate:
        """The template for `{"image_url": "url {x}"}` or `{"image_url": {"url": ..., ...}}`."""
        image = part["image_url"]
        if isinstance(image, str):
            variables = template_variables(image)
            if len(variables) > 1:
                msg = (
                    "Only one format variable allowed per image template."
                    f"\nGot: {variables}\nFrom: {part}"
                )
                raise ValueError(msg)
            return cls({"url": image}, variables)
        if isinstance(image, dict):
            fields: dict[str, Any] = image  # pyright: ignore[reportUnknownVariableType]
            keys = ("url", "path", "detail")
            return cls(
                fields, [v for k in keys if k in fields for v in template_variables(fields[k])]
            )
        raise ValueError(f"Invalid image template: {part}")

    def format(self, **kwargs: Any) -> dict[str, Any]:
        """The `image_url` object: `{"url": ..., "detail": ...}`."""
        done = {
            k: v.format_map(kwargs) if isinstance(v, str) else v for k, v in self.template.items()
        }
        if done.get("path"):
            msg = (
                "Loading images from 'path' has been removed as of 0.3.15 for security "
                "reasons. Please specify images by 'url'."
            )
            raise ValueError(msg)
        url = done.get("url")
        if not url:
            raise ValueError("Must provide url.")
        if not isinstance(url, str):
            raise ValueError("url must be a string.")
        out: dict[str, Any] = {"url": url}
        if detail := done.get("detail"):
            out["detail"] = detail
        return out


class _StringMessagePromptTemplate(BaseMessagePromptTemplate):
    """A message whose content is a text template, or a list of text and image templates."""

    __slots__ = ("additional_kwargs", "prompt")
    _fields = ("prompt", "additional_kwargs")
    message_class: ClassVar[type[BaseMessage]] = HumanMessage

    def __init__(
        self,
        prompt: PromptTemplate | list[PromptTemplate | _ImageTemplate],
        *,
        additional_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.prompt = prompt
        self.additional_kwargs = {} if additional_kwargs is None else additional_kwargs

    @classmethod
    def from_template(
        cls,
        template: str | Sequence[str | dict[str, Any]],
        template_format: str = "f-string",
        *,
        partial_variables: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Self:
        """A message template from a template string or a list of content-part templates."""
        if isinstance(template, str):
            prompt = PromptTemplate.from_template(
                template, template_format=template_format, partial_variables=partial_variables
            )
            return cls(prompt, **kwargs)
        if partial_variables:
            raise ValueError("Partial variables are not supported for list of templates.")
        return cls([_part_template(t, template_format) for t in template], **kwargs)

    @property
    def input_variables(self) -> list[str]:
        """The variables of the text template (of every part, for list content)."""
        if isinstance(self.prompt, list):
            return [v for part in self.prompt for v in part.input_variables]
        return self.prompt.input_variables

    def format(self, **kwargs: Any) -> BaseMessage:
        """The message for these variables."""
        return _message(self, kwargs)

    async def aformat(self, **kwargs: Any) -> BaseMessage:
        """The message for these variables (async)."""
        return self.format(**kwargs)

    def format_messages(self, **kwargs: Any) -> list[BaseMessage]:
        """The one message for these variables, in a list."""
        return [self.format(**kwargs)]


def _message(template: _StringMessagePromptTemplate, kwargs: dict[str, Any]) -> BaseMessage:
    """`template.format(**kwargs)` of the class's own, `kwargs` read as it is."""
    prompt = template.prompt
    extra = dict(template.additional_kwargs) if template.additional_kwargs else None  # a copy
    if not isinstance(prompt, list):  # `prompt_text` formats any other prompt with `**kwargs`
        return template.message_class(prompt_text(prompt, kwargs), additional_kwargs=extra)
    content: list[str | dict[str, Any]] = []
    for part in prompt:
        inputs = {v: kwargs[v] for v in part.input_variables}
        if isinstance(part, _ImageTemplate):
            content.append({"type": "image_url", "image_url": part.format(**inputs)})
        elif text := part.format(**inputs):
            content.append({"type": "text", "text": text})
    return template.message_class(content, additional_kwargs=extra)


def part_messages(part: BaseMessagePromptTemplate, values: dict[str, Any]) -> list[BaseMessage]:
    """`part.format_messages(**values)` for a chat prompt's `passable` values: actloop's own
    templates (those not overriding how they format) read `values` as it is, not a copy each."""
    cls = type(part)
    if cls.format_messages is _StringMessagePromptTemplate.format_messages:
        template = cast("_StringMessagePromptTemplate", part)
        if type(template).format is _StringMessagePromptTemplate.format:
            return [_message(template, values)]
    elif cls.format_messages is MessagesPlaceholder.format_messages:
        return _listed(cast("MessagesPlaceholder", part), values)
    return part.format_messages(**values)


def _part_template(
    part: str | dict[str, Any], template_format: str
) -> PromptTemplate | _ImageTemplate:
    """A template for one content part: a string or `{"type": "text"|"image_url", ...}`."""
    if isinstance(part, str):
        return PromptTemplate.from_template(part, template_format=template_format)
    keys = set(part)
    if "text" in keys and keys <= {"type", "text"}:
        return PromptTemplate.from_template(part["text"], template_format=template_format)
    if "image_url" in keys and keys <= {"type", "image_url"}:
        check_format(template_format)
        return _ImageTemplate.from_part(part)
    raise ValueError(
        f"Invalid template: {part}; actloop supports text and image_url content-part templates"
    )


class HumanMessagePromptTemplate(_StringMessagePromptTemplate):
    """Formats to a `HumanMessage`."""

    __slots__ = ()
    message_class: ClassVar[type[BaseMessage]] = HumanMessage


class AIMessagePromptTemplate(_StringMessagePromptTemplate):
    """Formats to an `AIMessage`."""

    __slots__ = ()
    message_class: ClassVar[type[BaseMessage]] = AIMessage


class SystemMessagePromptTemplate(_StringMessagePromptTemplate):
    """Formats to a `SystemMessage`."""

    __slots__ = ()
    message_class: ClassVar[type[BaseMessage]] = SystemMessage
