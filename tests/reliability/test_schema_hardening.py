"""JSON-schema tools under hostile arguments: bounds are enforced before the call, and arguments
nested deeper than the checker goes become an observation, never a RecursionError (issue 13,
item 16 and the JSON-schema bounds)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from actloop.tools import StructuredTool

TREE_SCHEMA = {
    "type": "object",
    "properties": {"node": {"$ref": "#/$defs/Node"}},
    "required": ["node"],
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {"child": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}},
        }
    },
}


def nested(levels: int) -> dict[str, Any]:
    """`{"child": {"child": ... None}}`, `levels` objects deep."""
    value: dict[str, Any] | None = None
    for _ in range(levels):
        value = {"child": value}
    assert value is not None
    return value


def tree_tool(calls: list[Any]) -> StructuredTool:
    def tree(node: dict[str, Any]) -> str:
        calls.append(node)
        return "ran"

    return StructuredTool.from_function(
        tree, name="tree", description="Walk a tree", args_schema=TREE_SCHEMA
    )


def too_deep(levels_shown: int) -> str:
    where = ".".join(["node", *["child"] * levels_shown])
    return (
        f"Invalid arguments for tool 'tree': field '{where}': Input is nested too deeply to "
        "check (more than 100 levels). Fix the arguments and try again."
    )


def test_recursive_schema_with_arguments_400_deep_is_an_observation() -> None:
    calls: list[Any] = []
    tool = tree_tool(calls)
    # `node` is check 1; each child costs two (its property, then the anyOf option), so check 100
    # is the 50th child
    assert tool.run({"node": nested(400)}) == too_deep(50)
    assert calls == []


def test_recursive_schema_from_a_deep_stack_is_still_an_observation() -> None:
    calls: list[Any] = []
    tool = tree_tool(calls)
    depth = 0

    def descend() -> str:
        nonlocal depth
        depth += 1
        if depth < sys.getrecursionlimit() - 150:
            return descend()
        return tool.run({"node": nested(60)})

    result = descend()
    assert result == (
        "Invalid arguments for tool 'tree': Input is nested too deeply to check (more than 100 "
        "levels). Fix the arguments and try again."
    )
    assert calls == []


def test_shallow_trees_still_pass() -> None:
    calls: list[Any] = []
    tool = tree_tool(calls)
    assert tool.run({"node": nested(40)}) == "ran"
    assert calls == [nested(40)]


def test_a_schema_whose_refs_loop_is_an_observation() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}]}},
    }
    tool = StructuredTool.from_function(
        lambda **kwargs: "ran", name="loop", description="d", args_schema=schema
    )
    assert tool.run({"a": 1}) == (
        "Invalid arguments for tool 'loop': field 'a': Input is nested too deeply to check (more "
        "than 100 levels). Fix the arguments and try again."
    )


# -- bounds ---------------------------------------------------------------------------------------

BOUNDED = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "minimum": 1, "maximum": 1000},
        "rate": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5},
        "code": {"type": "string", "minLength": 3, "maxLength": 5, "pattern": "^[A-Z]+$"},
        "note": {"type": "string", "minLength": 1},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        "unit": {"enum": ["EUR", "USD"]},
    },
    "required": ["amount"],
}


@pytest.mark.parametrize(
    ("arguments", "reasons"),
    [
        ({"amount": 10**9}, ["field 'amount': Input should be less than or equal to 1000"]),
        ({"amount": 0}, ["field 'amount': Input should be greater than or equal to 1"]),
        ({"amount": 5, "rate": 0}, ["field 'rate': Input should be greater than 0"]),
        ({"amount": 5, "rate": 1.5}, ["field 'rate': Input should be less than 1.5"]),
        ({"amount": 5, "code": "AB"}, ["field 'code': String should have at least 3 characters"]),
        (
            {"amount": 5, "code": "abcdef"},
            [
                "field 'code': String should have at most 5 characters",
                "field 'code': String should match pattern '^[A-Z]+$'",
            ],
        ),
        ({"amount": 5, "code": "abc"}, ["field 'code': String should match pattern '^[A-Z]+$'"]),
        ({"amount": 5, "note": ""}, ["field 'note': String should have at least 1 character"]),
        (
            {"amount": 5, "tags": []},
            ["field 'tags': List should have at least 1 item after validation, not 0"],
        ),
        (
            {"amount": 5, "tags": ["a", "b", "c"]},
            ["field 'tags': List should have at most 2 items after validation, not 3"],
        ),
        ({"amount": 5, "unit": "GBP"}, ["field 'unit': Input should be 'EUR' or 'USD'"]),
    ],
)
def test_bounds_are_checked_before_the_call(arguments: dict[str, Any], reasons: list[str]) -> None:
    calls: list[Any] = []

    def transfer(**kwargs: Any) -> str:
        calls.append(kwargs)
        return "sent"

    tool = StructuredTool.from_function(
        transfer, name="transfer", description="Send money", args_schema=BOUNDED
    )
    assert tool.run(arguments) == (
        f"Invalid arguments for tool 'transfer': {'; '.join(reasons)}. "
        "Fix the arguments and try again."
    )
    assert calls == []


def test_arguments_within_bounds_reach_the_tool() -> None:
    calls: list[Any] = []

    def transfer(**kwargs: Any) -> str:
        calls.append(kwargs)
        return "sent"

    tool = StructuredTool.from_function(
        transfer, name="transfer", description="Send money", args_schema=BOUNDED
    )
    arguments = {"amount": 1000, "rate": 0.5, "code": "ABC", "tags": ["x"], "unit": "EUR"}
    assert tool.run(arguments) == "sent"
    assert calls == [arguments]


def test_draft4_exclusive_flags_and_broken_bounds() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "number", "maximum": 10, "exclusiveMaximum": True},
            "s": {"type": "string", "pattern": "(unclosed"},
            "m": {"type": "integer", "minimum": "1"},
        },
    }
    tool = StructuredTool.from_function(
        lambda **kwargs: "ran", name="t", description="d", args_schema=schema
    )
    assert tool.run({"n": 10}) == (
        "Invalid arguments for tool 't': field 'n': Input should be less than 10. "
        "Fix the arguments and try again."
    )
    assert tool.run({"n": 9.5}) == "ran"
    assert tool.run({"s": "x", "m": 3}) == (
        "Invalid arguments for tool 't': field 's': the tool's schema has an invalid 'pattern': "
        "'(unclosed'; field 'm': the tool's schema has an invalid 'minimum': '1'. "
        "Fix the arguments and try again."
    )
