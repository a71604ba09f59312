"""Merging streamed message pieces the way langchain-core does (content, dicts, lists, usage)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from typing_extensions import NotRequired, TypedDict

__all__ = [
    "Content",
    "UsageMetadata",
    "add_usage",
    "merge_content",
    "merge_dicts",
    "merge_lists",
    "normalize_usage",
]

Content = str | list[str | dict[str, Any]]


class UsageMetadata(TypedDict):
    """Token counts for one model reply."""

    input_tokens: int
    output_tokens: int
    total_tokens: int
    input_token_details: NotRequired[dict[str, int]]
    output_token_details: NotRequired[dict[str, int]]


_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "input_token_details",
    "output_token_details",
)
_DETAIL_KEYS = (
    ("input_token_details", ("audio", "cache_creation", "cache_read")),
    ("output_token_details", ("audio", "reasoning")),
)


def merge_content(first: Content, *others: Content) -> Content:
    """Concatenate string content; merge list content by block `index`."""
    merged: Any = "" if first is None else first  # pyright: ignore[reportUnnecessaryComparison]
    if isinstance(first, list):
        merged = first.copy()
    for content in others:
        if isinstance(merged, str):
            merged = merged + content if isinstance(content, str) else [merged, *content]
        elif isinstance(content, list):
            merged = merge_lists(merged, content)
        elif merged and isinstance(merged[-1], str):
            merged[-1] += content
        elif content == "":
            pass
        elif merged:
            merged.append(content)
    return merged


def merge_dicts(left: dict[str, Any], *others: dict[str, Any]) -> dict[str, Any]:
    """Merge dicts: strings concatenate, dicts and lists merge, None yields to a value."""
    merged = left.copy()
    for right in others:
        for key, value in right.items():
            if key not in merged or (value is not None and merged[key] is None):
                merged[key] = value
            elif value is not None:
                merged[key] = _merge_value(key, merged[key], value)
    return merged


def _merge_value(key: str, left: Any, right: Any) -> Any:
    if type(left) is not type(right):
        msg = (
            f'additional_kwargs["{key}"] already exists in this message, but with a different type.'
        )
        raise TypeError(msg)
    if isinstance(left, str):
        if (key == "index" and left.startswith("lc_")) or (
            key in {"id", "output_version", "model_provider"} and left == right
        ):
            return left
        return left + right
    if isinstance(left, dict):
        return merge_dicts(left, right)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(left, list):
        return merge_lists(left, right)  # pyright: ignore[reportUnknownArgumentType]
    if left == right:
        return left
    if isinstance(left, int) and not isinstance(left, bool):
        return right if key in {"index", "created", "timestamp"} else left + right
    msg = (
        f"Additional kwargs key {key} already exists in left dict and value has unsupported "
        f"type {type(left)}."
    )
    raise TypeError(msg)


def merge_lists(left: list[Any] | None, *others: list[Any] | None) -> list[Any] | None:
    """Concatenate lists, merging dict elements that share an `index`."""
    merged = left.copy() if left is not None else None
    for other in others:
        if other is None:
            continue
        if merged is None:
            merged = other.copy()
            continue
        for element in other:
            position = _merge_position(merged, element)
            if position is None:
                merged.append(element)
            else:
                merged[position] = merge_dicts(
                    merged[position], _strip_type(merged[position], element)
                )
    return merged


def _merge_position(merged: list[Any], element: Any) -> int | None:
    if not isinstance(element, dict) or "index" not in element:
        return None
    item: dict[str, Any] = element  # pyright: ignore[reportUnknownVariableType]
    index: Any = item["index"]
    if not (isinstance(index, int) or (isinstance(index, str) and index.startswith("lc_"))):
        return None
    new_id: Any = item.get("id")
    for i, old in enumerate(merged):
        if isinstance(old, dict) and "index" in old and old["index"] == index:
            old_item: dict[str, Any] = old  # pyright: ignore[reportUnknownVariableType]
            old_id: Any = old_item.get("id")
            if old_id in {None, ""} or new_id in {None, ""} or old_id == new_id:
                return i
    return None


def _strip_type(left: dict[str, Any], element: dict[str, Any]) -> dict[str, Any]:
    if left.get("type") and element.get("type") == "non_standard" and "value" in element:
        value = {k: v for k, v in element["value"].items() if k != "type"}
        if left["type"] != "non_standard":
            return {"extras": value}
        return {"value": value, "index": element["index"]}
    return {k: v for k, v in element.items() if k != "type"} if "type" in element else element


def add_usage(left: UsageMetadata | None, right: UsageMetadata | None) -> UsageMetadata:
    """Sum two usage-metadata dicts, nested token details included."""
    if left and right:
        # the key-wise sum of two usage dicts has the same keys, so it is one too
        return normalize_usage(cast("UsageMetadata", _sum_ints(left, right, 0)))
    if left:
        return normalize_usage(left)
    if right:
        return normalize_usage(right)
    return {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}


def _sum_ints(left: Mapping[str, Any], right: Mapping[str, Any], depth: int) -> dict[str, Any]:
    if depth >= 100:
        msg = "max_depth=100 exceeded, unable to combine dicts."
        raise ValueError(msg)
    combined: dict[str, Any] = {}
    for key in [*left, *(k for k in right if k not in left)]:
        a, b = left.get(key, 0), right.get(key, 0)
        if isinstance(a, int) and isinstance(b, int):
            combined[key] = a + b
        elif isinstance(left.get(key, {}), dict) and isinstance(right.get(key, {}), dict):
            combined[key] = _sum_ints(left.get(key, {}), right.get(key, {}), depth + 1)
        else:
            types: list[Any] = [type(d[key]) for d in (left, right) if key in d]
            msg = f"Unknown value types: {types}. Only dict and int values are supported."
            raise ValueError(msg)
    return combined


def normalize_usage(usage: UsageMetadata) -> UsageMetadata:
    """Order usage keys as langchain-core's typed dict does (known keys first, extras after)."""
    result = _ordered(usage, _USAGE_KEYS)
    for key, known in _DETAIL_KEYS:
        if key in result and isinstance(details := result[key], dict):
            result[key] = _ordered(details, known)  # pyright: ignore[reportUnknownArgumentType]
    # the same keys and values, reordered
    return cast("UsageMetadata", result)


def _ordered(data: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    result = {k: data[k] for k in keys if k in data}
    if len(result) != len(data):
        result.update((k, v) for k, v in data.items() if k not in result)
    return result
