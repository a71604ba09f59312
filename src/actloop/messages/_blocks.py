"""Typed content blocks, as langchain-core's `langchain_core.messages.content` names them."""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict

__all__ = ["TextContentBlock"]


class TextContentBlock(TypedDict):
    """A text block of a message's content: `{"type": "text", "text": ...}`."""

    type: Literal["text"]
    text: str
    id: NotRequired[str]
    annotations: NotRequired[list[Any]]
    index: NotRequired[int | str]
    extras: NotRequired[dict[str, Any]]


TextContentBlock.__module__ = "actloop.messages"  # users import it from there
