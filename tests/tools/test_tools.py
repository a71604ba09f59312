"""Running tools: callbacks, errors, argument checking (B10), config injection (B5), async."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

import pytest
from pydantic import BaseModel

from actloop.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from actloop.messages import ToolMessage
from actloop.runnables import RunnableConfig
from actloop.tools import (
    BaseTool,
    ExceptionTool,
    InvalidTool,
    StructuredTool,
    Tool,
    ToolException,
    tool,
)


class Recorder(BaseCallbackHandler):
    """Records tool events with all their arguments."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any, dict[str, Any]]] = []

    def on_tool_start(self, serialized: Any, input_str: str, **kw: Any) -> None:  # type: ignore[override]
        self.events.append(("on_tool_start", (serialized, input_str), kw))

    def on_tool_end(self, output: Any, **kw: Any) -> None:  # type: ignore[override]
        self.events.append(("on_tool_end", output, kw))

    def on_tool_error(self, error: BaseException, **kw: Any) -> None:  # type: ignore[override]
        self.events.append(("on_tool_error", error, kw))

    def names(self) -> list[str]:
        return [e[0] for e in self.events]


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


def upper(text: str) -> str:
    return text.upper()


ECHO = Tool(name="echo", func=upper, description="Upper-case the input")


# -- callbacks ---------------------------------------------------------------------------------


def test_run_fires_start_then_end_with_langchain_arguments() -> None:
    rec = Recorder()
    run_id = uuid.uuid4()
    out = multiply.run(
        {"a": 2, "b": 3}, callbacks=[rec], run_id=run_id, color="blue", llm_prefix="Thought: "
    )
    assert out == 6
    assert rec.events == [
        (
            "on_tool_start",
            ({"name": "multiply", "description": "Multiply two numbers."}, "{'a': 2, 'b': 3}"),
            {
                "run_id": run_id,
                "parent_run_id": None,
                "tags": [],
                "metadata": {},
                "inputs": {"a": 2, "b": 3},
                "color": "green",
                "name": None,
                "tool_call_id": None,
                "llm_prefix": "Thought: ",
            },
        ),
        (
            "on_tool_end",
            6,
            {
                "run_id": run_id,
                "parent_run_id": None,
                "tags": [],
                "color": "blue",
                "name": "multiply",
                "llm_prefix": "Thought: ",
            },
        ),
    ]


def test_string_input_has_no_inputs_dict_and_tags_merge() -> None:
    rec = Recorder()
    echo = Tool(name="echo", func=upper, description="d", tags=["own"], metadata={"a": 1})
    assert echo.run("hi", callbacks=[rec], tags=["call"], metadata={"b": 2}, run_name="r") == "HI"
    start = rec.events[0][2]
    assert (start["inputs"], start["tags"], start["metadata"], start["name"]) == (
        None,
        ["call", "own"],
        {"b": 2, "a": 1},
        "r",
    )


def test_tool_level_callbacks_fire_without_call_callbacks() -> None:
    rec = Recorder()
    echo = Tool(name="echo", func=upper, description="d", callbacks=[rec])
    echo.run("x")
    assert rec.names() == ["on_tool_start", "on_tool_end"]


def test_unhandled_error_fires_on_tool_error_then_raises() -> None:
    def boom(x: str) -> str:
        raise KeyError("boom")

    rec = Recorder()
    failing = Tool(name="boom", func=boom, description="d")
    with pytest.raises(KeyError, match="boom"):
        failing.run("x", callbacks=[rec])
    assert rec.names() == ["on_tool_start", "on_tool_error"]
    error_kwargs = rec.events[1][2]
    assert error_kwargs["tool_call_id"] is None
    assert isinstance(rec.events[1][1], KeyError)


async def test_arun_fires_async_hooks_in_order() -> None:
    seen: list[str] = []

    class AsyncRecorder(AsyncCallbackHandler):
        async def on_tool_start(self, *args: Any, **kwargs: Any) -> None:
            seen.append("start")

        async def on_tool_end(self, output: Any, **kwargs: Any) -> None:
            seen.append(f"end:{output}")

    assert await ECHO.arun("ab", callbacks=[AsyncRecorder()]) == "AB"
    assert seen == ["start", "end:AB"]


# -- handle_tool_error -----------------------------------------------------------------------------


def _raiser(*args: Any) -> StructuredTool:
    def fail(x: str) -> str:
        """Fails with a ToolException."""
        raise ToolException(*args)

    return StructuredTool.from_function(fail)


@pytest.mark.parametrize(
    ("args", "flag", "expected"),
    [
        (("quota exceeded",), True, "quota exceeded"),
        ((), True, "Tool execution error"),
        (("quota exceeded",), "Try later.", "Try later."),
        (("quota exceeded",), lambda e: f"handled: {e}", "handled: quota exceeded"),
    ],
)
def test_handle_tool_error_gives_the_observation(
    args: tuple[Any, ...], flag: Any, expected: str
) -> None:
    failing = _raiser(*args)
    failing.handle_tool_error = flag
    rec = Recorder()
    assert failing.run("x", callbacks=[rec]) == expected
    assert rec.names() == ["on_tool_start", "on_tool_end"]


def test_unhandled_tool_exception_raises() -> None:
    rec = Recorder()
    with pytest.raises(ToolException, match="quota"):
        _raiser("quota").run("x", callbacks=[rec])
    assert rec.names() == ["on_tool_start", "on_tool_error"]


def test_handled_error_on_a_tool_call_is_an_error_tool_message() -> None:
    failing = _raiser("no such file")
    failing.handle_tool_error = True
    call = {"name": "fail", "args": {"x": "a"}, "id": "c9", "type": "tool_call"}
    assert failing.invoke(call) == ToolMessage(
        "no such file", tool_call_id="c9", name="fail", status="error"
    )


# -- argument checking (B10) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        (
            {"a": 2, "b": "x"},
            "Invalid arguments for tool 'multiply': field 'b': Input should be a valid integer, "
            "unable to parse string as an integer. Fix the arguments and try again.",
        ),
        (
            {"b": 1.5},
            "Invalid arguments for tool 'multiply': field 'a': Field required; field 'b': Input "
            "should be a valid integer, got a number with a fractional part. Fix the arguments and "
            "try again.",
        ),
        (
            "4",
            "Invalid arguments for tool 'multiply': field 'b': Field required. "
            "Fix the arguments and try again.",
        ),
    ],
)
def test_invalid_arguments_become_an_observation(tool_input: Any, expected: str) -> None:
    rec = Recorder()
    assert multiply.run(tool_input, callbacks=[rec]) == expected
    assert rec.names() == ["on_tool_start", "on_tool_end"]
    assert rec.events[1][1] == expected


class Item(BaseModel):
    sku: str


def test_nested_fields_are_dotted() -> None:
    @tool
    def order(items: list[Item]) -> int:
        """Order items."""
        return len(items)

    assert order.run({"items": [{"sku": "a"}, {"sku": 3}]}) == (
        "Invalid arguments for tool 'order': field 'items.1.sku': Input should be a valid string. "
        "Fix the arguments and try again."
    )
    assert order.run({"items": [{"sku": "a"}]}) == 1


def test_extra_keys_are_ignored_and_values_coerced() -> None:
    assert multiply.run({"a": "2", "b": 3, "unknown": True}) == 6


def test_invalid_tool_call_gives_an_error_tool_message() -> None:
    call = {"name": "multiply", "args": {"a": "two", "b": 1}, "id": "c1", "type": "tool_call"}
    assert multiply.invoke(call) == ToolMessage(
        "Invalid arguments for tool 'multiply': field 'a': Input should be a valid integer, unable "
        "to parse string as an integer. Fix the arguments and try again.",
        tool_call_id="c1",
        name="multiply",
        status="error",
    )


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        (True, "Tool input validation error"),
        ("Bad input.", "Bad input."),
        (lambda e: f"{type(e).__name__}: {e.error_count()}", "ValidationError: 1"),
    ],
)
def test_handle_validation_error_as_langchain(flag: Any, expected: str) -> None:
    strict = StructuredTool.from_function(
        lambda a, b: a * b,
        name="mul",
        description="d",
        args_schema=multiply.args_schema,
        handle_validation_error=flag,
    )
    assert strict.run({"a": 1, "b": "x"}) == expected


JSON_TOOL_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "units": {"enum": ["metric", "imperial"]},
    },
    "required": ["city"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"city": "Oslo", "days": 2}, "Oslo:2"),
        (
            "Oslo",
            "Invalid arguments for tool 'weather': expected a JSON object with the fields "
            "'city', 'days', 'units', got a string. Fix the arguments and try again.",
        ),
        (
            {"days": "2", "units": "kelvin", "x": 1},
            "Invalid arguments for tool 'weather': field 'city': Field required; field 'days': "
            "Input should be a valid integer; field 'units': Input should be 'metric' or "
            "'imperial'; field 'x': Extra inputs are not permitted. "
            "Fix the arguments and try again.",
        ),
    ],
)
def test_json_schema_tools_are_checked(tool_input: Any, expected: str) -> None:
    def weather(city: str, days: int = 1, units: str = "metric") -> str:
        return f"{city}:{days}"

    weather_tool = StructuredTool.from_function(
        weather, description="Weather", args_schema=JSON_TOOL_SCHEMA
    )
    assert weather_tool.run(tool_input) == expected


# -- simple Tool inputs -------------------------------------------------------------------------


@pytest.mark.parametrize("tool_input", ["ab", {"__arg1": "ab"}, {"text": "ab"}])
def test_simple_tool_unpacks_one_argument(tool_input: Any) -> None:
    assert ECHO.run(tool_input) == "AB"


def test_simple_tool_refuses_two_arguments() -> None:
    assert ECHO.run({"a": "x", "b": "y"}) == (
        "Invalid arguments for tool 'echo': a single-input tool takes one argument, got 2: "
        "['x', 'y']. Fix the arguments and try again."
    )


# -- invoke ----------------------------------------------------------------------------------------


def test_invoke_accepts_strings_dicts_and_tool_calls() -> None:
    assert ECHO.invoke("hi") == "HI"
    assert multiply.invoke({"a": 3, "b": 4}) == 12
    call = {"name": "multiply", "args": {"a": 3, "b": 4}, "id": "call_7", "type": "tool_call"}
    assert multiply.invoke(call) == ToolMessage("12", tool_call_id="call_7", name="multiply")
    assert list(multiply.stream({"a": 1, "b": 2})) == [2]


async def test_ainvoke_tool_call_gives_a_tool_message() -> None:
    call = {"name": "echo", "args": {"__arg1": "x"}, "id": "c", "type": "tool_call"}
    assert await ECHO.ainvoke(call) == ToolMessage("X", tool_call_id="c", name="echo")


def test_tool_message_content_is_json_for_structured_output() -> None:
    @tool
    def stats(n: int) -> dict[str, Any]:
        """Stats."""
        return {"n": n, "ok": True, "name": "é"}

    call = {"name": "stats", "args": {"n": 1}, "id": "s", "type": "tool_call"}
    assert stats.invoke(call).content == '{"n": 1, "ok": true, "name": "é"}'


def test_content_and_artifact() -> None:
    @tool(response_format="content_and_artifact")
    def fetch(url: str) -> tuple[str, dict[str, int]]:
        """Fetch."""
        return "2 rows", {"rows": 2}

    call = {"name": "fetch", "args": {"url": "u"}, "id": "f", "type": "tool_call"}
    assert fetch.invoke(call) == ToolMessage(
        "2 rows", tool_call_id="f", name="fetch", artifact={"rows": 2}
    )
    assert fetch.run("u") == "2 rows"


def test_content_and_artifact_needs_a_pair() -> None:
    @tool(response_format="content_and_artifact")
    def fetch(url: str) -> str:
        """Fetch."""
        return "oops"

    with pytest.raises(ValueError, match="two-tuple"):
        fetch.run("u")


# -- config reaches tools (B5) --------------------------------------------------------------------


def test_config_parameter_receives_the_run_config() -> None:
    seen: list[RunnableConfig] = []

    @tool
    def lookup(key: str, cfg: RunnableConfig) -> str:
        """Look a key up."""
        seen.append(cfg)
        return cfg.get("configurable", {}).get(key, "?")

    assert "cfg" not in lookup.args
    rec = Recorder()
    config: RunnableConfig = {
        "callbacks": [rec],
        "tags": ["t"],
        "metadata": {"user": "u1"},
        "configurable": {"color": "red"},
        "run_name": "lookup-run",
    }
    assert lookup.invoke({"key": "color"}, config) == "red"
    received = seen[0]
    assert (received["tags"], received["metadata"], received["configurable"]) == (
        ["t"],
        {"user": "u1"},
        {"color": "red"},
    )
    assert "run_name" not in received
    tool_run_id = rec.events[0][2]["run_id"]
    assert received["callbacks"].parent_run_id == tool_run_id  # child runs nest under the tool run


def test_config_parameter_without_config_gets_an_empty_config() -> None:
    @tool
    def show(x: str, config: RunnableConfig) -> str:
        """Show the config."""
        return repr(config)

    assert show.run("a") == "{}"
    assert show.run("a", tags=["x"]) == "{'tags': ['x']}"


async def test_config_reaches_async_tools() -> None:
    @tool
    async def show(x: str, config: RunnableConfig) -> str:
        """Show the metadata."""
        return str(config.get("metadata"))

    assert await show.ainvoke({"x": "a"}, {"metadata": {"k": 1}}) == "{'k': 1}"


# -- async ---------------------------------------------------------------------------------------


async def test_async_function_is_awaited_on_the_loop() -> None:
    loop_thread = threading.get_ident()

    @tool
    async def where(x: str) -> bool:
        """Where it runs."""
        await asyncio.sleep(0)
        return threading.get_ident() == loop_thread

    assert await where.arun("x") is True
    with pytest.raises(NotImplementedError, match="does not support sync invocation"):
        where.run("x")


async def test_sync_tool_on_the_async_path_does_not_block_the_loop() -> None:
    def slow(x: str) -> str:
        time.sleep(0.2)
        return x

    slow_tool = Tool(name="slow", func=slow, description="d")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        for _ in range(10):
            await asyncio.sleep(0.01)
            ticks += 1

    result, _ = await asyncio.gather(slow_tool.arun("done"), ticker())
    assert (result, ticks) == ("done", 10)


async def test_base_tool_without_arun_runs_in_a_thread() -> None:
    class Now(BaseTool):
        name: str = "thread"
        description: str = "Which thread"

        def _run(self, x: str) -> bool:
            return threading.current_thread() is threading.main_thread()

    assert await Now().arun("x") is False
    assert Now().run("x") is True


# -- BaseTool subclasses and the executor's tools --------------------------------------------


def test_base_tool_subclass_gets_run_manager_and_keywords() -> None:
    class Greeter(BaseTool):
        name: str = "greeter"
        description: str = "Greets"

        def _run(self, who: str, run_manager: Any = None) -> str:
            return f"hi {who} ({run_manager is not None})"

    rec = Recorder()
    assert Greeter().run("bob") == "hi bob (False)"
    assert Greeter(return_direct=True).run({"who": "amy"}, callbacks=[rec]) == "hi amy (True)"
    assert Greeter().args == {"who": {"title": "Who", "type": "string"}}


def test_construction_mistakes_raise() -> None:
    class Nameless(BaseTool):
        def _run(self, x: str) -> str:
            return x

    with pytest.raises(ValueError, match="Nameless needs a name"):
        Nameless()
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        Tool(name="x", func=upper, description="d", colour="red")
    with pytest.raises(TypeError, match="args_schema must be"):
        StructuredTool(name="x", func=upper, args_schema=int)


def test_invalid_tool_and_exception_tool() -> None:
    rec = Recorder()
    args = {"requested_tool_name": "nope", "available_tool_names": ["search", "lookup"]}
    assert InvalidTool().run(args, callbacks=[rec], color=None) == (
        "nope is not a valid tool, try one of [search, lookup]."
    )
    assert ExceptionTool().run("Invalid Format", callbacks=[rec]) == "Invalid Format"
    assert [e[1][0]["name"] for e in rec.events if e[0] == "on_tool_start"] == [
        "invalid_tool",
        "_Exception",
    ]


async def test_agent_tools_async() -> None:
    args = {"requested_tool_name": "x", "available_tool_names": []}
    assert await InvalidTool().arun(args) == "x is not a valid tool, try one of []."
    assert await ExceptionTool().arun("obs") == "obs"


def test_verbose_prints_the_observation(capsys: pytest.CaptureFixture[str]) -> None:
    ECHO.run("hi", verbose=True, color=None, observation_prefix="Observation: ", llm_prefix="T:")
    assert capsys.readouterr().out == "\nObservation: HI\nT:"


# -- decorator forms -------------------------------------------------------------------------------


def test_tool_decorator_forms() -> None:
    @tool("calculator", return_direct=True)
    def calc(expression: str) -> str:
        """Evaluate."""
        return expression

    @tool(parse_docstring=True)
    def search(query: str) -> str:
        """Search.

        Args:
            query: The query.
        """
        return query

    @tool(infer_schema=False)
    def raw(text: str) -> str:
        """Raw text."""
        return text

    assert (calc.name, calc.return_direct, type(calc).__name__) == (
        "calculator",
        True,
        "StructuredTool",
    )
    assert search.args == {
        "query": {"description": "The query.", "title": "Query", "type": "string"}
    }
    assert (type(raw).__name__, raw.run("x"), raw.args) == (
        "Tool",
        "x",
        {"tool_input": {"type": "string"}},
    )


def test_tool_without_docstring_needs_a_description() -> None:
    def nodoc(x: int) -> int:
        return x

    with pytest.raises(ValueError, match="Function must have a docstring"):
        tool(nodoc)
    assert tool(description="Given")(nodoc).description == "Given"


def test_import_does_not_load_pydantic() -> None:
    code = "import sys, actloop.tools; sys.exit('pydantic' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_durable_run_flags_on_tools() -> None:
    from actloop import Tool, tool

    @tool(requires_approval=True)
    def send(to: str) -> str:
        """Send a message."""
        return f"sent to {to}"

    @tool(idempotent=False, infer_schema=False)
    def pay(amount: str) -> str:
        """Pay."""
        return f"paid {amount}"

    plain = Tool(name="x", func=lambda q: q, description="d")
    assert (send.requires_approval, send.idempotent) == (True, True)
    assert (pay.requires_approval, pay.idempotent) == (False, False)
    assert (plain.requires_approval, plain.idempotent) == (False, True)
    assert "requires_approval" not in send.args and "idempotent" not in send.args
