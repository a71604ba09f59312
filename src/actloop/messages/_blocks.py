"""Typed content blocks, as langchain-core's `langchain_core.messages.content` names them."""

from __future__ import annotations

from typing import Any, Literal, cast

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


KNOWN_BLOCK_TYPES = frozenset(
    {
        "text",
        "text-plain",
        "reasoning",
        "image",
        "audio",
        "video",
        "file",
        "tool_call",
        "tool_call_chunk",
        "invalid_tool_call",
        "server_tool_call",
        "server_tool_call_chunk",
        "server_tool_result",
        "non_standard",
        "refusal",
    }
)
"""langchain-core's v1 standard block types (`KNOWN_BLOCK_TYPES`)."""

_V0_SOURCES = {"url": "url", "base64": "base64", "id": "file_id"}
"""A v0 multimodal block's `source_type` -> the v1 key its value goes to."""


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """`content` as langchain-core's standard blocks (`BaseMessage.content_blocks`): text as
    text blocks, v1 blocks as they are, v0 multimodal blocks (`source_type`) and OpenAI Chat
    Completions parts (`image_url`, `input_audio`, `file`) converted, the rest `non_standard`.
    Converted media blocks get no generated `id` (langchain-core adds a random `lc_...` one)."""
    items: list[Any] = [content] if isinstance(content, str) and content else list(content or [])
    blocks: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
        elif isinstance(item, dict):
            blocks.append(_standard(cast("dict[str, Any]", item)))
    return blocks


def _standard(block: dict[str, Any]) -> dict[str, Any]:
    """One content part as a v1 block."""
    kind = block.get("type")
    if kind in ("image", "audio", "file") and "source_type" in block:
        return _from_v0(block) or {"type": "non_standard", "value": block}
    converted = _from_openai(block) if kind in ("image_url", "input_audio", "file") else None
    if converted is not None:
        return converted
    return block if kind in KNOWN_BLOCK_TYPES else {"type": "non_standard", "value": block}


def _with_extras(block: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in extras.items() if v is not None}
    if kept:
        block["extras"] = kept
    return block


def _from_v0(block: dict[str, Any]) -> dict[str, Any] | None:
    """A LangChain v0 multimodal block (`source_type` url/base64/id, or a text file) as v1."""
    source = block["source_type"]
    if source == "text" and block["type"] == "file":
        known = {"mime_type", "type", "source_type", "url"}
        new: dict[str, Any] = {
            "type": "text-plain",
            "text": block["url"],
            "mime_type": "text/plain",
        }
    elif source in _V0_SOURCES:
        key = {"url": "url", "base64": "data", "id": "id"}[source]
        known = {"type", "source_type", key} | ({"mime_type"} if source != "id" else set[str]())
        new = {"type": block["type"], _V0_SOURCES[source]: block[key]}
    else:
        return None
    if block.get("mime_type") and source != "id":
        new["mime_type"] = block["mime_type"]
    return _with_extras(new, {k: v for k, v in block.items() if k not in known})


def _data_uri(url: Any) -> tuple[str, str] | None:
    """(mime type, base64 data) of a `data:<mime>;base64,<data>` URI."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    head, comma, data = url[5:].partition(",")
    mime, _, encoding = head.partition(";")
    if not comma or encoding != "base64" or not mime or not data:
        return None
    return mime, data


def _from_openai(block: dict[str, Any]) -> dict[str, Any] | None:
    """An OpenAI Chat Completions media part as a v1 block (None when it is not one)."""
    kind = block["type"]
    extras = {k: v for k, v in block.items() if k not in ("type", kind)}
    inner = block.get(kind)
    if not isinstance(inner, dict):
        return None
    part = cast("dict[str, Any]", inner)
    if kind == "image_url" and isinstance(part.get("url"), str):
        for k, v in part.items():
            if k != "url":
                extras["detail" if k == "detail" else f"image_url_{k}"] = v
        parsed = _data_uri(part["url"])
        if parsed is None:
            return _with_extras({"type": "image", "url": part["url"]}, extras)
        return _with_extras({"type": "image", "base64": parsed[1], "mime_type": parsed[0]}, extras)
    if kind == "input_audio" and "data" in part and "format" in part:
        extras |= {f"audio_{k}": v for k, v in part.items() if k not in ("data", "format")}
        new = {"type": "audio", "base64": part["data"], "mime_type": f"audio/{part['format']}"}
        return _with_extras(new, extras)
    if kind == "file" and "file_id" in part:
        extras |= {f"file_{k}": v for k, v in part.items() if k != "file_id"}
        return _with_extras({"type": "file", "file_id": part["file_id"]}, extras)
    parsed = _data_uri(part.get("file_data")) if kind == "file" else None
    if parsed is None:
        return None
    extras |= {f"file_{k}": v for k, v in part.items() if k not in ("file_data", "filename")}
    new = {"type": "file", "base64": parsed[1], "mime_type": "application/pdf"}
    if part.get("filename") is not None:
        extras["filename"] = part["filename"]
    return _with_extras(new, extras)
