"""Typed tool-call dicts in langchain-core's shapes, normalized and parsed from OpenAI calls."""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate
from typing import Any, Literal, cast

from typing_extensions import NotRequired, TypedDict

__all__ = [
    "InvalidToolCall",
    "ToolCall",
    "ToolCallChunk",
    "calls_from_chunks",
    "chunks_from_calls",
    "invalid_tool_call",
    "loads_lenient",
    "normalize_chunks",
    "normalize_invalid_tool_calls",
    "normalize_tool_calls",
    "parse_openai_tool_calls",
    "parse_openai_tool_chunks",
    "parse_partial_json",
    "tool_call",
    "tool_call_chunk",
]


class ToolCall(TypedDict):
    """A model's request to call a tool: `{"name", "args", "id", "type": "tool_call"}`."""

    name: str
    args: dict[str, Any]
    id: str | None
    type: NotRequired[Literal["tool_call"]]


class InvalidToolCall(TypedDict):
    """A tool call whose arguments are not valid JSON (kept as the raw string)."""

    type: NotRequired[Literal["invalid_tool_call"]]
    id: str | None
    name: str | None
    args: str | None
    error: str | None
    index: NotRequired[int | str]
    """Position in a streamed reply, kept when the caller gave one."""
    extras: NotRequired[dict[str, Any]]
    """Provider-specific fields, kept when the caller gave them."""


class ToolCallChunk(TypedDict):
    """A streamed fragment of a tool call; fragments with the same `index` merge."""

    name: str | None
    args: str | None
    id: str | None
    index: int | None
    type: NotRequired[Literal["tool_call_chunk"]]


def tool_call(name: str, args: dict[str, Any], id: str | None) -> ToolCall:
    """A complete tool call, keys in langchain-core's order."""
    return {"name": name, "args": args, "id": id, "type": "tool_call"}


def invalid_tool_call(
    name: str | None = None,
    args: str | None = None,
    id: str | None = None,
    error: str | None = None,
) -> InvalidToolCall:
    """A tool call whose arguments could not be parsed."""
    return {"type": "invalid_tool_call", "id": id, "name": name, "args": args, "error": error}


def tool_call_chunk(
    name: str | None = None,
    args: str | None = None,
    id: str | None = None,
    index: int | None = None,
) -> ToolCallChunk:
    """A streamed fragment of a tool call."""
    return {"name": name, "args": args, "id": id, "index": index, "type": "tool_call_chunk"}


def normalize_tool_calls(calls: Iterable[ToolCall]) -> list[ToolCall]:
    """Rebuild user-given tool calls in the stored shape (adds `type`)."""
    return [tool_call(c["name"], c["args"], c.get("id")) for c in calls]


def normalize_invalid_tool_calls(calls: Iterable[InvalidToolCall]) -> list[InvalidToolCall]:
    """Rebuild invalid tool calls in the stored shape, keeping `index`/`extras` if present."""
    result: list[InvalidToolCall] = []
    for c in calls:
        item = invalid_tool_call(c.get("name"), c.get("args"), c.get("id"), c.get("error"))
        if "index" in c:
            item["index"] = c["index"]
        if "extras" in c:
            item["extras"] = c["extras"]
        result.append(item)
    return result


def normalize_chunks(chunks: Iterable[ToolCallChunk]) -> list[ToolCallChunk]:
    """Rebuild tool-call chunks in the stored shape."""
    return [
        tool_call_chunk(c.get("name"), c.get("args"), c.get("id"), c.get("index")) for c in chunks
    ]


def parse_openai_tool_calls(
    raw_calls: list[dict[str, Any]],
) -> tuple[list[ToolCall], list[InvalidToolCall]]:
    """Split OpenAI `tool_calls` (JSON-string arguments) into valid and invalid calls."""
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for raw in raw_calls:
        if "function" not in raw:
            continue
        function = raw["function"]
        try:
            args = json.loads(function["arguments"])
        except json.JSONDecodeError:
            invalid.append(
                invalid_tool_call(function["name"], function["arguments"], raw.get("id"))
            )
        else:
            calls.append(tool_call(function["name"] or "", args or {}, raw.get("id")))
    return calls, invalid


def parse_openai_tool_chunks(raw_calls: list[dict[str, Any]]) -> list[ToolCallChunk]:
    """Turn streamed OpenAI `tool_calls` deltas into tool-call chunks."""
    chunks: list[ToolCallChunk] = []
    for raw in raw_calls:
        function = raw.get("function")
        name = function["name"] if function is not None else None
        args = function["arguments"] if function is not None else None
        chunks.append(tool_call_chunk(name, args, raw.get("id"), raw.get("index")))
    return chunks


def calls_from_chunks(
    chunks: list[ToolCallChunk],
) -> tuple[list[ToolCall], list[InvalidToolCall]]:
    """Parse merged chunks into tool calls; unparseable arguments become invalid calls."""
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for chunk in chunks:
        try:
            args: Any = parse_partial_json(chunk["args"]) if chunk["args"] else {}
        except Exception:
            args = None
        if isinstance(args, dict):
            # a JSON object: its keys are strings
            calls.append(tool_call(chunk["name"] or "", cast("dict[str, Any]", args), chunk["id"]))
        else:
            # langchain-core builds these after validation, so their keys keep this order
            invalid.append(
                {
                    "name": chunk["name"],
                    "args": chunk["args"],
                    "id": chunk["id"],
                    "error": None,
                    "type": "invalid_tool_call",
                }
            )
    return calls, invalid


def chunks_from_calls(calls: list[ToolCall], invalid: list[InvalidToolCall]) -> list[ToolCallChunk]:
    """Chunks standing for already-parsed calls (arguments re-encoded as JSON)."""
    chunks = [tool_call_chunk(c["name"], json.dumps(c["args"]), c["id"]) for c in calls]
    chunks.extend(tool_call_chunk(c["name"], c["args"], c["id"]) for c in invalid)
    return chunks


_LENIENT = json.JSONDecoder(strict=False)
"""`json.loads(text, strict=False)`'s decoder, built once: `loads` builds a new one (and its
scanner) on every call with a keyword, which leaves attribute-name strings in CPython's type
cache and dict-keys blocks in its free list (~12 KiB traced after a few hundred calls)."""


def loads_lenient(text: str) -> Any:
    """`json.loads(text, strict=False)` (raw control characters allowed inside strings)."""
    if isinstance(text, str) and not text.startswith("\ufeff"):  # pyright: ignore[reportUnnecessaryIsInstance]
        return _LENIENT.decode(text)
    return json.loads(text, strict=False)  # bytes, or a BOM: `loads`'s own handling and error


def parse_partial_json(text: str) -> Any:
    """Parse JSON that may be cut off mid-way, closing open strings, objects and arrays."""
    try:
        return loads_lenient(text)
    except json.JSONDecodeError:
        pass
    pieces, stack = _close_partial(text)
    if pieces is None:
        return None
    ends = list(accumulate(map(len, pieces)))
    while pieces:
        try:
            return loads_lenient("".join(pieces + stack))
        except json.JSONDecodeError as e:
            cut = bisect_right(ends, e.pos)
            if cut >= len(pieces):
                cut = len(pieces) - 1
            del pieces[cut:]
            del ends[cut:]
    return loads_lenient(text)


def _close_partial(text: str) -> tuple[list[str] | None, list[str]]:
    pieces: list[str] = []
    stack: list[str] = []
    in_string = escaped = False
    for char in text:
        piece = char
        if in_string:
            if char == '"' and not escaped:
                in_string = False
            elif char == "\n" and not escaped:
                piece = "\\n"
            elif char == "\\":
                escaped = not escaped
            else:
                escaped = False
        elif char == '"':
            in_string, escaped = True, False
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]":
            if not stack or stack[-1] != char:
                return None, stack
            stack.pop()
        pieces.append(piece)
    if in_string:
        if escaped:
            pieces.pop()
        pieces.append('"')
    stack.reverse()
    return pieces, stack
