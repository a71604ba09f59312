"""Odd reply shapes of OpenAI-compatible servers: repaired when the meaning is clear, else refused.

Repaired (the reply means what the API would have sent):
- `arguments` sent as a JSON object, array or number: re-encoded as the JSON text the API promises;
- `tool_calls` sent as one call object, or as JSON text of a list or an object: made a list;
- `content` sent as a number or boolean: its JSON text (`42` -> `"42"`, `true` -> `"true"`);
- a numeric tool-call `id`: its text; `usage` that is not an object, or counts that are not
  integers: left out (usage is metadata; losing it loses no work).

Refused with `OddShape` (the wire raises it as `InvalidResponseError`, or `StreamInterruptedError`
for a stream), since no reading of them is safe: `choices` that is not a list of objects, a
`message` or `delta` that is not an object, a tool call or `function` that is not an object, a
name or `function_call` of the wrong type, content that is not text, a number, or a list of parts.

Arguments that do not decode (bad JSON, an integer longer than Python converts, nesting deeper than
the decoder goes) or that decode to something other than an object make an invalid tool call, so
the loop can tell the model; they never raise.
"""

from __future__ import annotations

import json
from typing import Any, cast

from actloop.messages import InvalidToolCall, ToolCall
from actloop.messages._tool_calls import invalid_tool_call, tool_call

__all__ = [
    "OddShape",
    "content_of",
    "decode",
    "first_choice",
    "function_call_of",
    "object_of",
    "parse_calls",
    "raw_tool_calls",
    "usage_of",
]


def _kind(value: object) -> str:
    return type(value).__name__


class OddShape(Exception):
    """A reply whose shape cannot be read; `str(self)` says what was wrong."""


def decode(text: str) -> tuple[Any, str | None]:
    """The JSON value of `text`, or None and why it does not decode (never raises)."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError:
        return None, "not JSON"
    except ValueError as exc:  # an integer longer than int() accepts
        return None, f"JSON that cannot be decoded ({exc})"
    except RecursionError:
        return None, "nested too deeply to decode"


def _encode(value: Any) -> str:
    try:
        return json.dumps(value)
    except (ValueError, RecursionError) as exc:
        raise OddShape(f"arguments that cannot be re-encoded as JSON ({exc!r})") from None


def object_of(value: Any, what: str, *, required: bool = False) -> dict[str, Any]:
    """`value` if it is a JSON object, `{}` for null (unless required); else an OddShape."""
    if value is None:
        if required:
            raise OddShape(f"{what} is missing or null")
        return {}
    if not isinstance(value, dict):
        raise OddShape(f"{what} is a {_kind(value)}, not an object")
    return cast("dict[str, Any]", value)


def first_choice(data: dict[str, Any]) -> dict[str, Any] | None:
    """The first choice of a completion or chunk; None when there is none."""
    choices = data.get("choices")
    if choices is None or choices == []:
        return None
    if not isinstance(choices, list):
        raise OddShape(f"choices is a {_kind(choices)}, not a list")
    return object_of(cast("list[Any]", choices)[0], "choices[0]", required=True)


def content_of(value: Any) -> str | list[str | dict[str, Any]]:
    """Message content: text, a list of parts, or a repaired scalar."""
    kind = _kind(value)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if isinstance(value, list):
        parts = cast("list[Any]", value)
        if all(isinstance(p, (str, dict)) for p in parts):
            return cast("list[str | dict[str, Any]]", parts)
    raise OddShape(f"content is a {kind} that is not text or a list of parts")


def function_call_of(value: Any) -> dict[str, Any] | None:
    """The legacy `function_call` object, or None when absent."""
    return dict(object_of(value, "function_call")) or None


def raw_tool_calls(value: Any, *, streaming: bool = False) -> list[dict[str, Any]]:
    """The reply's `tool_calls` as a list of call objects in the API's shape (repaired)."""
    if value is None or value in ("", []):
        return []
    if isinstance(value, str):
        value, problem = decode(value)
        if problem is not None or not isinstance(value, (list, dict)):
            raise OddShape("tool_calls is a string that is not a JSON list of calls")
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise OddShape(f"tool_calls is a {_kind(value)}, not a list")
    items = cast("list[Any]", value)
    return [_raw_call(item, i, streaming) for i, item in enumerate(items)]


def _raw_call(item: Any, i: int, streaming: bool) -> dict[str, Any]:
    call = dict(object_of(item, f"tool_calls[{i}]", required=True))
    call_id = call.get("id")
    if isinstance(call_id, (int, float)) and not isinstance(call_id, bool):
        call["id"] = str(call_id)
    elif call_id is not None and not isinstance(call_id, str):
        raise OddShape(f"tool_calls[{i}].id is a {_kind(call_id)}, not a string")
    index = call.get("index")
    if streaming and index is not None and (not isinstance(index, int) or isinstance(index, bool)):
        raise OddShape(f"tool_calls[{i}].index is a {_kind(index)}, not an integer")
    if "function" in call and call["function"] is not None:
        call["function"] = _function(call["function"], f"tool_calls[{i}].function")
    return call


def _function(value: Any, what: str) -> dict[str, Any]:
    function = dict(object_of(value, what))
    name = function.get("name")
    if name is not None and not isinstance(name, str):
        raise OddShape(f"{what}.name is a {_kind(name)}, not a string")
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, str):
        function["arguments"] = _encode(arguments)
    return function


def parse_calls(raw_calls: list[dict[str, Any]]) -> tuple[list[ToolCall], list[InvalidToolCall]]:
    """Valid and invalid tool calls of repaired raw calls (calls without `function` are skipped)."""
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for raw in raw_calls:
        function: dict[str, Any] | None = raw.get("function")
        if function is None:
            continue
        name: str | None = function.get("name")
        arguments: str | None = function.get("arguments")
        args, error = _arguments(name, arguments) if arguments else ({}, None)
        if error is None:
            calls.append(tool_call(name or "", args, raw.get("id")))
        else:
            invalid.append(invalid_tool_call(name, arguments, raw.get("id"), error))
    return calls, invalid


def _arguments(name: str | None, text: str) -> tuple[dict[str, Any], str | None]:
    """The arguments object, or {} and the invalid call's error (LangChain's words for bad JSON)."""
    try:
        args: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, (
            f"Function {name} arguments:\n\n{text}\n\nare not valid JSON. "
            f"Received JSONDecodeError {exc}"
        )
    except ValueError as exc:  # an integer longer than int() accepts
        return {}, f"Function {name} arguments could not be decoded: {exc}"
    except RecursionError:
        return {}, f"Function {name} arguments are nested too deeply to decode"
    if args and not isinstance(args, dict):
        return {}, f"Function {name} arguments are a JSON {_kind(args)}, not an object"
    return cast("dict[str, Any]", args or {}), None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_of(value: Any) -> dict[str, Any] | None:
    """Usage with every count an integer or None (others read as None); None when usage is not
    an object."""
    if not isinstance(value, dict) or not value:
        return None
    usage = dict(cast("dict[str, Any]", value))
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        if key in usage:
            usage[key] = _count(usage[key])
    for key in ("prompt_tokens_details", "completion_tokens_details"):
        if key in usage:
            details = usage[key]
            usage[key] = (
                {k: _count(v) for k, v in cast("dict[str, Any]", details).items()}
                if isinstance(details, dict)
                else None
            )
    return usage
