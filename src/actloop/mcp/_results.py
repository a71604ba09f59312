"""What an MCP tool result becomes: text joined, structured content kept, the rest described.

Text blocks are joined with newlines; images, audio and resources are described in one line each
(`[image: image/png, 68 bytes]`) so the model knows they are there; an embedded text resource is
shown with its text. Structured content, when the server sends it, is the tool's return value.
"""

from __future__ import annotations

import base64
from typing import Any

from mcp import types

__all__ = ["describe", "result_size", "result_text"]


def result_text(result: types.CallToolResult) -> str:
    """Every content block of `result`, as text, one after the other."""
    return "\n".join(describe(block) for block in result.content)


def result_size(result: types.CallToolResult) -> int:
    """About how many characters the result's content blocks hold (text and base64 data)."""
    total = 0
    for block in result.content:
        for name in ("text", "data"):
            value = getattr(block, name, None)
            if isinstance(value, str):
                total += len(value)
        resource = getattr(block, "resource", None)
        for name in ("text", "blob"):
            value = getattr(resource, name, None)
            if isinstance(value, str):
                total += len(value)
    return total


def _size(data: str) -> int:
    """Bytes in a base64 payload (without decoding a possibly large blob twice)."""
    try:
        return len(base64.b64decode(data, validate=False))
    except ValueError:
        return len(data)


def describe(block: Any) -> str:
    """One content block as text: text as is, anything else described in a line."""
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent):
        return f"[image: {block.mime_type}, {_size(block.data)} bytes]"
    if isinstance(block, types.AudioContent):
        return f"[audio: {block.mime_type}, {_size(block.data)} bytes]"
    if isinstance(block, types.ResourceLink):
        mime = f", {block.mime_type}" if block.mime_type else ""
        return f"[resource link: {block.uri} ({block.name}{mime})]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        mime = f", {resource.mime_type}" if resource.mime_type else ""
        if isinstance(resource, types.TextResourceContents):
            return f"[resource: {resource.uri}{mime}]\n{resource.text}"
        return f"[resource: {resource.uri}{mime}, {_size(resource.blob)} bytes]"
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind} content]"
