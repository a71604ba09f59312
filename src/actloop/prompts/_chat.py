"""Prompt templates shaped like langchain-core's: `PromptTemplate`, `ChatPromptTemplate`, ...

Templates are f-strings parsed once at construction; formatting is one `str.format_map` call per
text template. Prompts are Runnables from a dict of variables to a `PromptValue`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from typing_extensions import Self

from actloop.messages import BaseMessage
from actloop.prompts._message_templates import (
    AIMessagePromptTemplate,
    BaseMessagePromptTemplate,
    HumanMessagePromptTemplate,
    MessagesPlaceholder,
    SystemMessagePromptTemplate,
    part_messages,
)
from actloop.prompts._string import (
    BasePromptTemplate,
    PromptTemplate,
    StringPromptTemplate,
    check_format,
    passable,
)
from actloop.prompts._values import (
    ChatPromptValue,
    PromptValue,
    StringPromptValue,
    get_buffer_string,
)

__all__ = [
    "AIMessagePromptTemplate",
    "BaseMessagePromptTemplate",
    "BasePromptTemplate",
    "ChatPromptTemplate",
    "ChatPromptValue",
    "HumanMessagePromptTemplate",
    "MessageLike",
    "MessagesPlaceholder",
    "PromptTemplate",
    "PromptValue",
    "StringPromptTemplate",
    "StringPromptValue",
    "SystemMessagePromptTemplate",
    "get_buffer_string",
]

_PLAIN_AFORMAT = BaseMessagePromptTemplate.aformat_messages
"""A part's `aformat_messages` that only calls its `format_messages` (formatting does no I/O)."""


class ChatPromptTemplate(BasePromptTemplate):
    """A prompt of messages: fixed ones, templated ones and placeholders for message lists."""

    _fields = ("input_variables", "optional_variables", "partial_variables", "messages")

    def __init__(
        self,
        messages: Sequence[Any],
        *,
        template_format: str = "f-string",
        partial_variables: Mapping[str, Any] | None = None,
        input_variables: Sequence[str] | None = None,
        validate_template: bool = False,
        **_ignored: Any,
    ) -> None:
        check_format(template_format)
        self.messages: list[MessageLike] = [_to_template(m, template_format) for m in messages]
        partials = dict(partial_variables or {})
        required: set[str] = set()
        optional: set[str] = set()
        for message in self.messages:
            if isinstance(message, MessagesPlaceholder) and message.optional:
                optional.add(message.variable_name)
                partials.setdefault(message.variable_name, [])
            elif not isinstance(message, BaseMessage):
                required.update(message.input_variables)
        required.difference_update(partials, optional)
        if validate_template and input_variables is not None and required != set(input_variables):
            msg = f"Got mismatched input_variables. Expected: {required}. Got: {input_variables}"
            raise ValueError(msg)
        self.input_variables = sorted(required)
        self.optional_variables = sorted(optional)
        self.partial_variables = partials
        self.validate_template = validate_template
        self._check_names()

    @classmethod
    def from_messages(
        cls, messages: Sequence[Any], template_format: str = "f-string"
    ) -> ChatPromptTemplate:
        """A chat prompt from `(role, template)` tuples, messages, templates or placeholders."""
        return cls(messages, template_format=template_format)

    @classmethod
    def from_template(cls, template: str, **kwargs: Any) -> ChatPromptTemplate:
        """A chat prompt of one human message template."""
        prompt = PromptTemplate.from_template(template, **kwargs)
        return cls([HumanMessagePromptTemplate(prompt=prompt)])

    def format_messages(self, **kwargs: Any) -> list[BaseMessage]:
        """The messages for these variables; placeholders expand to their message lists."""
        return self._messages(kwargs)

    def _messages(self, kwargs: dict[str, Any]) -> list[BaseMessage]:
        """`format_messages(**kwargs)` for a `passable` `kwargs`: the merged values go to each
        part as they are (`part_messages`), not copied by `**` per part."""
        values = self._merge_partials(kwargs)
        plain = values is kwargs or passable(values)
        out: list[BaseMessage] = []
        for message in self.messages:
            if isinstance(message, BaseMessage):
                out.append(message)
            elif not plain:
                out.extend(message.format_messages(**values))
            elif isinstance(message, BaseMessagePromptTemplate):
                out.extend(part_messages(message, values))
            elif type(message).format_messages is ChatPromptTemplate.format_messages:  # nested
                out.extend(message._messages(values))
            else:  # a part of another kind (`_to_template` builds a `(class, template)`'s class)
                out.extend(message.format_messages(**values))
        return out

    async def aformat_messages(self, **kwargs: Any) -> list[BaseMessage]:
        """The messages for these variables (async)."""
        values = self._merge_partials(kwargs)
        out: list[BaseMessage] = []
        for message in self.messages:
            if isinstance(message, BaseMessage):
                out.append(message)
            elif type(message).aformat_messages is _PLAIN_AFORMAT:  # no coroutine per part
                out.extend(message.format_messages(**values))
            else:
                out.extend(await message.aformat_messages(**values))
        return out

    def format_prompt(self, **kwargs: Any) -> ChatPromptValue:
        """The messages as a `ChatPromptValue`."""
        return ChatPromptValue(self.format_messages(**kwargs))

    def _prompt_value(self, values: dict[str, Any]) -> PromptValue:
        cls = type(self)
        if (
            cls.format_prompt is ChatPromptTemplate.format_prompt
            and cls.format_messages is ChatPromptTemplate.format_messages
            and passable(values)
        ):
            return ChatPromptValue(self._messages(values))
        return self.format_prompt(**values)

    async def aformat_prompt(self, **kwargs: Any) -> ChatPromptValue:
        """The messages as a `ChatPromptValue` (async)."""
        return ChatPromptValue(await self.aformat_messages(**kwargs))

    def partial(self, **kwargs: Any) -> Self:
        """A copy with some variables bound (values or zero-argument callables)."""
        return type(self)(self.messages, partial_variables={**self.partial_variables, **kwargs})

    def __add__(self, other: Any) -> ChatPromptTemplate:
        """This prompt followed by another chat prompt, message(s), template or string."""
        partials = {**self.partial_variables, **getattr(other, "partial_variables", {})}
        if isinstance(other, ChatPromptTemplate):
            extra: list[Any] = list(other.messages)
        elif isinstance(other, (BaseMessagePromptTemplate, BaseMessage, ChatPromptTemplate)):
            extra = [other]
        elif isinstance(other, (list, tuple)):
            extra = list(ChatPromptTemplate.from_messages(other).messages)  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(other, str):
            extra = [HumanMessagePromptTemplate.from_template(other)]
        else:
            raise NotImplementedError(f"Unsupported operand type for +: {type(other)}")
        return ChatPromptTemplate([*self.messages, *extra]).partial(**partials)

    def __getitem__(self, index: int | slice) -> Any:
        """One message (template), or a chat prompt of a slice of them."""
        if isinstance(index, slice):
            return ChatPromptTemplate.from_messages(self.messages[index])
        return self.messages[index]

    def __len__(self) -> int:
        return len(self.messages)

    def append(self, message: Any) -> None:
        """Add a message; like LangChain, `input_variables` is not recomputed."""
        self.messages.append(_to_template(message, "f-string"))

    def extend(self, messages: Sequence[Any]) -> None:
        """Add messages; like LangChain, `input_variables` is not recomputed."""
        self.messages.extend(_to_template(m, "f-string") for m in messages)


MessageLike = BaseMessage | BaseMessagePromptTemplate | ChatPromptTemplate
"""What a `ChatPromptTemplate` holds: fixed messages, message templates, nested chat prompts."""


def _to_template(message: Any, template_format: str) -> MessageLike:
    """A message, template or `(role, template)` / `{"role", "content"}` as a chat prompt part."""
    if isinstance(message, (BaseMessagePromptTemplate, BaseMessage, ChatPromptTemplate)):
        return message
    if isinstance(message, str):
        return _from_role("human", message, template_format)
    pair: tuple[Any, ...]
    if isinstance(message, dict):
        if set(message) != {"content", "role"}:  # pyright: ignore[reportUnknownArgumentType]
            raise ValueError(
                f"Expected dict to have exact keys 'role' and 'content'. Got: {message}"
            )
        pair = (message["role"], message["content"])  # pyright: ignore[reportUnknownVariableType]
    elif isinstance(message, tuple):
        pair = message  # pyright: ignore[reportUnknownVariableType]
        if len(pair) != 2:
            raise ValueError(f"Expected 2-tuple of (role, template), got {message}")
    else:
        raise NotImplementedError(f"Unsupported message type: {type(message)}")
    role, template = pair
    if isinstance(role, str):
        return _from_role(role, template, template_format)
    if isinstance(role, type) and issubclass(role, BaseMessage):
        return _from_role(role.type, template, template_format)
    return role(prompt=PromptTemplate.from_template(template, template_format=template_format))


def _from_role(role: str, template: Any, template_format: str) -> BaseMessagePromptTemplate:
    if role in ("human", "user"):
        return HumanMessagePromptTemplate.from_template(template, template_format)
    if role in ("ai", "assistant"):
        return AIMessagePromptTemplate.from_template(template, template_format)
    if role == "system":
        return SystemMessagePromptTemplate.from_template(template, template_format)
    if role == "placeholder":
        return _placeholder(template)
    raise ValueError(
        f"Unexpected message type: {role}. "
        "Use one of 'human', 'user', 'ai', 'assistant', or 'system'."
    )


def _placeholder(template: Any) -> MessagesPlaceholder:
    """`("placeholder", "{name}")` (optional) or `("placeholder", ["{name}", optional])`."""
    optional = True
    if not isinstance(template, str):
        try:
            template, optional = template
        except ValueError as exc:
            msg = (
                "Unexpected arguments for placeholder message type. Expected either a single "
                "string variable name or a list of [variable_name: str, is_optional: bool]. "
                f"Got: {template}"
            )
            raise ValueError(msg) from exc
        if not isinstance(optional, bool):
            raise ValueError(f"Expected is_optional to be a boolean. Got: {optional}")
        if not isinstance(template, str):
            raise ValueError(f"Expected variable name to be a string. Got: {template}")
    if not (template.startswith("{") and template.endswith("}")):
        raise ValueError(
            f"Invalid placeholder template: {template}. "
            "Expected a variable name surrounded by curly braces."
        )
    return MessagesPlaceholder(template[1:-1], optional=optional)
