"""Tool schemas: inferred from signatures and docstrings, and rendered as OpenAI tools."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from actloop.runnables import RunnableConfig
from actloop.tools import (
    BaseTool,
    StructuredTool,
    Tool,
    convert_to_openai_function,
    convert_to_openai_tool,
    tool,
)


def test_schema_from_type_hints_and_defaults() -> None:
    @tool
    def book(
        city: str, nights: int = 1, budget: float | None = None, kind: Literal["a", "b"] = "a"
    ) -> str:
        """Book a room."""
        return city

    assert book.args == {
        "city": {"title": "City", "type": "string"},
        "nights": {"default": 1, "title": "Nights", "type": "integer"},
        "budget": {
            "anyOf": [{"type": "number"}, {"type": "null"}],
            "default": None,
            "title": "Budget",
        },
        "kind": {"default": "a", "enum": ["a", "b"], "title": "Kind", "type": "string"},
    }
    assert convert_to_openai_tool(book) == {
        "type": "function",
        "function": {
            "name": "book",
            "description": "Book a room.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "nights": {"default": 1, "type": "integer"},
                    "budget": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
                    "kind": {"default": "a", "enum": ["a", "b"], "type": "string"},
                },
                "required": ["city"],
            },
        },
    }


def test_docstring_arguments_and_summary() -> None:
    @tool(parse_docstring=True)
    def search(query: str, limit: int = 3) -> str:
        """Search the docs.

        Args:
            query: Words to look for.
            limit: At most this many
                results.
        """
        return query

    assert search.description == "Search the docs."
    assert search.args["query"]["description"] == "Words to look for."
    assert search.args["limit"]["description"] == "At most this many results."


def test_invalid_docstring_raises_with_the_decorator() -> None:
    def flat(query: str) -> str:
        """No args section."""
        return query

    with pytest.raises(ValueError, match=r"Found invalid Google-Style docstring\."):
        tool(parse_docstring=True)(flat)
    assert (
        StructuredTool.from_function(flat, parse_docstring=True).description == "No args section."
    )


def test_docstring_argument_missing_from_signature_raises() -> None:
    def wrong(query: str) -> str:
        """Search.

        Args:
            banana: Not a parameter.
        """
        return query

    with pytest.raises(
        ValueError, match=r"Arg banana in docstring not found in function signature\."
    ):
        tool(parse_docstring=True)(wrong)


def test_injected_parameters_are_not_in_the_schema() -> None:
    def fetch(
        url: str, config: RunnableConfig, run_manager: Any = None, callbacks: Any = None
    ) -> str:
        """Fetch a page."""
        return url

    fetch_tool = tool(fetch)
    assert list(fetch_tool.args) == ["url"]
    assert fetch_tool.is_single_input


def test_config_is_found_by_type_not_by_name() -> None:
    def use(query: str, config: str = "plain") -> str:
        """A parameter named config that is not a RunnableConfig."""
        return config

    use_tool = tool(use)
    assert list(use_tool.args) == ["query", "config"]
    assert use_tool.run({"query": "q", "config": "given"}) == "given"


def test_no_argument_tool() -> None:
    @tool
    def now() -> str:
        """The time."""
        return "noon"

    assert (now.args, now.run(""), now.run({})) == ({}, "noon", "noon")
    assert convert_to_openai_tool(now)["function"]["parameters"] == {
        "properties": {},
        "type": "object",
    }


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str = Field(description="City name")


def test_nested_models_are_inlined_for_openai() -> None:
    @tool
    def ship(to: Address, express: bool = False) -> str:
        """Ship a parcel."""
        return to.city

    assert ship.args["to"] == {"$ref": "#/$defs/Address"}
    assert convert_to_openai_tool(ship)["function"]["parameters"]["properties"]["to"] == {
        "description": "A postal address.",
        "properties": {
            "street": {"type": "string"},
            "city": {"description": "City name", "type": "string"},
        },
        "required": ["street", "city"],
        "type": "object",
    }
    assert ship.run({"to": {"street": "Main", "city": "Oslo"}}) == "Oslo"


def test_convert_models_functions_and_dicts() -> None:
    assert convert_to_openai_function(Address) == {
        "name": "Address",
        "description": "A postal address.",
        "parameters": {
            "properties": {
                "street": {"type": "string"},
                "city": {"description": "City name", "type": "string"},
            },
            "required": ["street", "city"],
            "type": "object",
        },
    }

    def add(a: int, b: int = 2) -> int:
        """Add.

        Args:
            a: First.
        """
        return a + b

    assert convert_to_openai_function(add)["parameters"]["properties"]["a"] == {
        "description": "First.",
        "type": "integer",
    }
    openai_tool = {"type": "function", "function": {"name": "f", "parameters": {}}}
    assert convert_to_openai_tool(openai_tool) is openai_tool
    with pytest.raises(ValueError, match="top-level 'title' key"):
        convert_to_openai_function({"type": "object", "properties": {}})


def test_strict_mode_closes_objects() -> None:
    @tool
    def ship(to: Address) -> str:
        """Ship."""
        return ""

    function = convert_to_openai_tool(ship, strict=True)["function"]
    assert function["strict"] is True
    assert function["parameters"]["additionalProperties"] is False
    assert function["parameters"]["properties"]["to"]["required"] == ["street", "city"]
    with pytest.raises(ValueError, match="already has a 'strict' key"):
        convert_to_openai_function({"name": "f", "strict": False}, strict=True)


def test_simple_tool_is_one_string_argument() -> None:
    echo = Tool(name="echo", func=str.upper, description="Echo")
    assert convert_to_openai_tool(echo)["function"]["parameters"] == {
        "properties": {"__arg1": {"title": "__arg1", "type": "string"}},
        "required": ["__arg1"],
        "type": "object",
    }


def test_schema_is_rebuilt_when_the_tool_changes() -> None:
    @tool
    def one(a: int) -> int:
        """One."""
        return a

    assert list(one.args) == ["a"]
    one.args_schema = {"type": "object", "properties": {"b": {"type": "string"}}}
    assert one.args == {"b": {"type": "string"}}


def test_base_tool_schema_from_run_signature() -> None:
    class Lookup(BaseTool):
        name: str = "lookup"
        description: str = "Look up"

        def _run(self, key: str, default: int = 0) -> str:
            return key

    assert Lookup().args == {
        "key": {"title": "Key", "type": "string"},
        "default": {"default": 0, "title": "Default", "type": "integer"},
    }
    assert not Lookup().is_single_input
