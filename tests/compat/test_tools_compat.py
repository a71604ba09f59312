"""The same tools in langchain-core and actloop: same names, descriptions, schemas and callbacks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional

import langchain_core.callbacks as lc_callbacks
import langchain_core.messages as lc_messages
import langchain_core.tools as lc_tools
import pytest
from langchain_classic.agents.agent import ExceptionTool as LcExceptionTool
from langchain_classic.agents.tools import InvalidTool as LcInvalidTool
from langchain_core.runnables import RunnableConfig as LcRunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool as lc_convert
from pydantic import BaseModel, Field

from actloop import callbacks, messages, tools

# -- functions with a dozen kinds of signature ---------------------------------------------------


def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


def scale(x: float, factor: float = 2.0) -> float:
    """Scale a number.

    Longer text that stays in the description.
    """
    return x * factor


def greet(name: str, shout: bool = False) -> str:
    """Greet someone."""
    return name.upper() if shout else name


def find(query: str, limit: Optional[int] = None) -> str:  # noqa: UP045 - the old spelling on purpose
    """Find things."""
    return f"{query}:{limit}"


def total(values: list[int], weights: dict[str, float] | None = None) -> int:
    """Add numbers up."""
    return sum(values)


def convert(unit: Literal["c", "f"], value: float) -> str:
    """Convert a temperature."""
    return f"{value}{unit}"


class Item(BaseModel):
    """One line of an order."""

    sku: str
    quantity: int = 1


class Order(BaseModel):
    """An order."""

    items: list[Item]
    note: str | None = Field(default=None, description="A note for the shop")


def place(order: Order, express: bool = False) -> str:
    """Place an order."""
    return f"{len(order.items)} items"


def search(query: str, max_results: int = 5) -> str:
    """Search the web.

    Use it for recent events.

    Args:
        query: What to look for.
        max_results: How many results
            to return at most.

    Returns:
        The results.
    """
    return query


def ping() -> str:
    """Check the service is up."""
    return "pong"


def count(
    n: Annotated[int, "How many"], label: Annotated[str, Field(description="A label")]
) -> str:
    """Count things."""
    return f"{n} {label}"


def with_field_default(x: int = Field(default=3, description="The x", ge=0)) -> int:
    """Use a pydantic Field as a default."""
    return x


def with_config(query: str, config: LcRunnableConfig) -> str:
    """Uses its config."""
    return query


async def fetch(url: str, timeout: float = 1.5) -> str:
    """Fetch a page."""
    return url


FUNCTIONS: list[tuple[Callable[..., Any], dict[str, Any]]] = [
    (multiply, {}),
    (scale, {}),
    (greet, {}),
    (find, {}),
    (total, {}),
    (convert, {}),
    (place, {}),
    (search, {}),
    (search, {"parse_docstring": True}),
    (ping, {}),
    (count, {}),
    (with_field_default, {}),
    (with_config, {}),
    (fetch, {}),
    (multiply, {"return_direct": True, "description": "Given description."}),
]


def _both(func: Callable[..., Any], options: dict[str, Any]) -> tuple[Any, Any]:
    return tools.tool(**options)(func), lc_tools.tool(**options)(func)


@pytest.mark.parametrize(("func", "options"), FUNCTIONS)
def test_tool_decorator_builds_the_same_tool(
    func: Callable[..., Any], options: dict[str, Any]
) -> None:
    ours, ref = _both(func, options)
    assert type(ours).__name__ == type(ref).__name__
    assert (ours.name, ours.description, ours.return_direct) == (
        ref.name,
        ref.description,
        ref.return_direct,
    )
    assert ours.args == ref.args
    assert ours.args_schema.model_json_schema() == ref.args_schema.model_json_schema()
    assert ours.tool_call_schema.model_json_schema() == ref.tool_call_schema.model_json_schema()
    assert tools.convert_to_openai_tool(ours) == lc_convert(ref)
    assert ours.is_single_input == ref.is_single_input


def test_named_tool_decorator_matches() -> None:
    ours = tools.tool("calc", return_direct=True)(multiply)
    ref = lc_tools.tool("calc", return_direct=True)(multiply)
    assert tools.convert_to_openai_tool(ours) == lc_convert(ref)
    assert (ours.name, ours.return_direct) == ("calc", True)


def test_explicit_pydantic_args_schema_matches() -> None:
    class SearchArgs(BaseModel):
        """Arguments of a search."""

        query: str = Field(description="The query")
        page: int = 1

    def run_search(query: str, page: int = 1) -> str:
        return query

    ours = tools.StructuredTool.from_function(run_search, args_schema=SearchArgs)
    ref = lc_tools.StructuredTool.from_function(run_search, args_schema=SearchArgs)
    assert ours.description == ref.description == "Arguments of a search."
    assert ours.args == ref.args
    assert tools.convert_to_openai_tool(ours) == lc_convert(ref)


def test_json_schema_args_schema_matches() -> None:
    schema = {
        "type": "object",
        "description": "Look a word up.",
        "properties": {"word": {"type": "string", "title": "Word"}},
        "required": ["word"],
    }

    def lookup(word: str) -> str:
        return word

    ours = tools.StructuredTool.from_function(lookup, args_schema=schema)
    ref = lc_tools.StructuredTool.from_function(lookup, args_schema=schema)
    assert ours.description == ref.description == "Look a word up."
    assert ours.args == ref.args
    assert ours.tool_call_schema == ref.tool_call_schema
    assert tools.convert_to_openai_tool(ours) == lc_convert(ref)


def test_simple_tool_schema_matches() -> None:
    ours = tools.Tool(name="echo", func=str.upper, description="Echo it")
    ref = lc_tools.Tool(name="echo", func=str.upper, description="Echo it")
    assert ours.args == ref.args == {"tool_input": {"type": "string"}}
    assert tools.convert_to_openai_tool(ours) == lc_convert(ref)
    assert ours.is_single_input == ref.is_single_input


def test_agent_tools_match() -> None:
    for ours, ref in (
        (tools.InvalidTool(), LcInvalidTool()),
        (tools.ExceptionTool(), LcExceptionTool()),
    ):
        assert (ours.name, ours.description) == (ref.name, ref.description)
        assert ours.args == ref.args
        assert tools.convert_to_openai_tool(ours) == lc_convert(ref)


@pytest.mark.parametrize(
    "thing",
    [
        multiply,
        search,
        place,
        ping,
        Order,
        Item,
        {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {}}},
        {"type": "function", "function": {"name": "f", "parameters": {}}},
        {"title": "Thing", "description": "A thing", "type": "object", "properties": {"a": {}}},
        {"name": "claude", "description": "d", "input_schema": {"type": "object"}},
    ],
)
def test_convert_to_openai_tool_matches(thing: Any) -> None:
    assert tools.convert_to_openai_tool(thing) == lc_convert(thing)


def test_convert_to_openai_tool_strict_matches() -> None:
    ours, ref = _both(place, {})
    assert tools.convert_to_openai_tool(ours, strict=True) == lc_convert(ref, strict=True)


# -- callbacks ---------------------------------------------------------------------------------


class _Recording:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_tool_start(self, serialized: Any, input_str: str, **kw: Any) -> None:
        self.events.append(("start", serialized, input_str, _plain(kw)))

    def on_tool_end(self, output: Any, **kw: Any) -> None:
        self.events.append(("end", _plain(output), _plain(kw)))

    def on_tool_error(self, error: BaseException, **kw: Any) -> None:
        self.events.append(("error", str(error), _plain(kw)))


class OurRecorder(_Recording, callbacks.BaseCallbackHandler):
    pass


class RefRecorder(_Recording, lc_callbacks.BaseCallbackHandler):
    pass


def _plain(value: Any) -> Any:
    """Run ids dropped and messages of either library as comparable tuples."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k not in ("run_id", "parent_run_id")}
    if isinstance(value, (messages.ToolMessage, lc_messages.ToolMessage)):
        return ("ToolMessage", value.content, value.tool_call_id, value.name, value.status)
    return value


def _events(tool: Any, recorder: _Recording, call: Callable[[Any, list[Any]], Any]) -> list[Any]:
    try:
        call(tool, [recorder])
    except Exception as exc:
        recorder.events.append(("raised", str(exc)))
    return recorder.events


def _boom(x: str) -> str:
    """Always fails."""
    raise ValueError("boom")


def _failing(lib: Any, **kw: Any) -> Any:
    """A tool raising the library's own ToolException."""

    def tool_error(x: str) -> str:
        """Reports an error."""
        raise lib.ToolException(f"bad {x}")

    return lib.StructuredTool.from_function(tool_error, **kw)


def _structured(lib: Any, func: Callable[..., Any], **kw: Any) -> Any:
    return lib.StructuredTool.from_function(func, **kw)


CALLBACK_CASES: list[tuple[str, Callable[[Any], Any], Callable[[Any, list[Any]], Any]]] = [
    (
        "simple tool, string input",
        lambda lib: lib.Tool(name="echo", func=str.upper, description="Echo"),
        lambda t, cb: t.run("hi", callbacks=cb),
    ),
    (
        "structured tool, dict input, executor kwargs",
        lambda lib: _structured(lib, multiply),
        lambda t, cb: t.run(
            {"a": 2, "b": 3},
            callbacks=cb,
            color="blue",
            llm_prefix="Thought:",
            observation_prefix="Obs: ",
        ),
    ),
    (
        "tags, metadata and run name",
        lambda lib: _structured(lib, multiply, tags=["own"], metadata={"m": 1}),
        lambda t, cb: t.run(
            {"a": 1, "b": 1}, callbacks=cb, tags=["t"], metadata={"k": "v"}, run_name="rn"
        ),
    ),
    (
        "tool call invoke",
        lambda lib: _structured(lib, multiply),
        lambda t, cb: t.invoke(
            {"name": "multiply", "args": {"a": 2, "b": 4}, "id": "call_1", "type": "tool_call"},
            {"callbacks": cb},
        ),
    ),
    (
        "handled tool exception",
        lambda lib: _failing(lib, handle_tool_error=True),
        lambda t, cb: t.run("x", callbacks=cb),
    ),
    (
        "handled tool exception with a string",
        lambda lib: _failing(lib, handle_tool_error="try again"),
        lambda t, cb: t.run("x", callbacks=cb),
    ),
    (
        "unhandled tool exception",
        lambda lib: _failing(lib),
        lambda t, cb: t.run("x", callbacks=cb),
    ),
    (
        "unhandled error",
        lambda lib: _structured(lib, _boom),
        lambda t, cb: t.run("x", callbacks=cb),
    ),
]


@pytest.mark.parametrize(
    ("label", "make", "call"), CALLBACK_CASES, ids=[c[0] for c in CALLBACK_CASES]
)
def test_callback_sequence_matches(
    label: str, make: Callable[[Any], Any], call: Callable[[Any, list[Any]], Any]
) -> None:
    ours = _events(make(tools), OurRecorder(), call)
    ref = _events(make(lc_tools), RefRecorder(), call)
    assert ours == ref


def test_agent_tool_callbacks_match() -> None:
    args = {"requested_tool_name": "nope", "available_tool_names": ["a", "b"]}
    for ours_tool, ref_tool, tool_input in (
        (tools.InvalidTool(), LcInvalidTool(), args),
        (tools.ExceptionTool(), LcExceptionTool(), "Invalid Format"),
    ):

        def call(t: Any, cb: list[Any], tool_input: Any = tool_input) -> Any:
            return t.run(tool_input, verbose=False, color=None, callbacks=cb, llm_prefix="Thought:")

        assert _events(ours_tool, OurRecorder(), call) == _events(ref_tool, RefRecorder(), call)


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [({"a": 2, "b": "3"}, 6), ({"a": 2, "b": 3, "extra": 1}, 6), ("7", None)],
)
def test_valid_arguments_give_the_same_result(tool_input: Any, expected: Any) -> None:
    ours, ref = _both(multiply, {})
    if expected is None:  # a string to a two-argument tool: both refuse it
        assert ours.run(tool_input).startswith("Invalid arguments for tool 'multiply': field 'b'")
        with pytest.raises(Exception, match="validation error"):
            ref.run(tool_input)
        return
    assert ours.run(tool_input) == ref.run(tool_input) == expected
