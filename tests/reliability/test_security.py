"""Security: hostile JSON for `load`/`loads`, secrets kept out of repr/logs/dumps/checkpoints,
the built-in tools' limits against hostile inputs, and tool arguments checked before tools run.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from actloop import AgentAction, AgentExecutor, AgentFinish
from actloop.exceptions import SerializationError
from actloop.messages import AIMessage, HumanMessage
from actloop.serialization import dumpd, dumps, load, loads
from actloop.testing import ScriptedAgent
from actloop.tools import StructuredTool, Tool
from actloop.tools.builtin import calculator, clock, file_tools
from support.openai_server import LoopbackServer, message, running

from ._support import SEED

SECRET = "sk-test-9f8e7d6c5b4a-DO-NOT-LEAK"
LIVENESS = 30.0
"""Seconds a hostile expression may take before we call the calculator hung (a liveness guard:
computed, these would take hours; their speed is measured in `bench/hostile.py`)."""

# -- load / loads on hostile JSON ----------------------------------------------------------


def _ctor(id_: Any, kwargs: Any = None) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": id_, "kwargs": kwargs or {}}


HOSTILE: list[Any] = [
    _ctor(["os", "system"], {"command": "touch /tmp/pwned"}),
    _ctor(["subprocess", "Popen"]),
    _ctor(["langchain", "llms", "openai", "OpenAI"], {"openai_api_key": "x"}),
    _ctor(["langchain_core", "prompts", "PromptTemplate"], {"template": "{x}"}),
    _ctor(["langchain", "schema", "messages", "AIMessage", "extra"]),
    _ctor(["langchain", "schema", "messages", "__class__"]),
    _ctor([]),
    _ctor("langchain.schema.messages.AIMessage"),
    _ctor([1, 2]),
    _ctor(None),
    _ctor(["langchain", "schema", "messages", "AIMessage"], ["not", "a", "dict"]),
    _ctor(["langchain", "schema", "messages", "AIMessage"], {"content": 42}),
    _ctor(["langchain", "schema", "messages", "AIMessage"], {"content": "x", "type": "human"}),
    _ctor(["langchain", "schema", "messages", "AIMessage"], {"content": "x", "tool_calls": "no"}),
    _ctor(
        ["langchain", "schema", "agent", "AgentAction"],
        {"tool": ["x"], "tool_input": "", "log": ""},
    ),
    _ctor(
        ["langchain", "schema", "agent", "AgentActionMessageLog"],
        {"tool": "t", "tool_input": "", "log": "", "message_log": [{"not": "a message"}]},
    ),
    {"lc": 1, "type": "not_implemented", "id": ["builtins", "eval"], "repr": "eval"},
    {"lc": 1, "type": "secret", "id": ["A", "B"]},
]


@pytest.mark.parametrize("payload", HOSTILE, ids=range(len(HOSTILE)))
def test_load_refuses_hostile_entries_cleanly(payload: Any) -> None:
    with pytest.raises(SerializationError):
        load(payload)
    with pytest.raises(SerializationError):
        loads(json.dumps(payload))
    with pytest.raises(SerializationError):  # also when nested inside allowed data
        load({"messages": [dumpd(HumanMessage("hi")), payload]})


def test_escaped_user_dicts_are_never_built() -> None:
    inner = _ctor(["os", "system"], {"command": "x"})
    assert load({"__lc_escaped__": inner}) == inner
    assert loads(dumps({"data": inner})) == {"data": inner}  # dumps escapes it on the way out


@pytest.mark.parametrize("depth", [250, 1_000, 100_000])
def test_deep_nesting_is_refused_without_recursion_errors(depth: int) -> None:
    with pytest.raises(SerializationError, match="nested"):
        loads("[" * depth + "]" * depth)
    nested: Any = "leaf"
    for _ in range(min(depth, 5_000)):
        nested = {"a": nested}
    with pytest.raises(SerializationError, match="nested"):
        load(nested)


def _round_trip_time(size: int) -> float:
    """Best of 3: seconds to dump and load a message of `size` characters (checked equal)."""
    big = "x" * size
    times: list[float] = []
    for _ in range(3):
        start = time.perf_counter()
        assert loads(dumps(AIMessage(big))) == AIMessage(big)
        times.append(time.perf_counter() - start)
    return min(times)


def test_huge_values_load_in_linear_time_or_are_refused() -> None:
    ratio = _round_trip_time(20_000_000) / max(_round_trip_time(2_000_000), 1e-4)
    assert ratio < 30, f"10x the size took {ratio:.0f}x as long"  # linear: ~10; quadratic: ~100
    with pytest.raises(SerializationError):  # past Python's int-string limit
        loads("1" * 100_000)
    assert loads("1e999999") == float("inf")  # valid JSON number, harmless
    with pytest.raises(SerializationError):
        loads(b"\xff\xfe not json")
    with pytest.raises(SerializationError):
        load(object())  # not parsed JSON


def test_secrets_are_read_only_from_the_map_or_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    marker = {"lc": 1, "type": "secret", "id": ["OPENAI_API_KEY"]}
    assert load(marker) is None
    assert load({"key": marker}) == {"key": None}
    assert load(marker, secrets_map={"OPENAI_API_KEY": "from-map"}) == "from-map"
    assert load(marker, secrets_from_env=True) == SECRET


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["lc", "type", "id", "kwargs", "content", "repr", "__lc_escaped__", "x"]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=30,
)
lc_like = st.fixed_dictionaries(
    {
        "lc": st.sampled_from([1, 1, 2, "1"]),
        "type": st.sampled_from(["constructor", "secret", "not_implemented", "other"]),
        "id": st.one_of(
            st.lists(
                st.sampled_from(
                    [
                        "langchain",
                        "schema",
                        "messages",
                        "agent",
                        "AIMessage",
                        "AgentAction",
                        "os",
                        "system",
                        "HumanMessage",
                    ]
                ),
                max_size=5,
            ),
            json_values,
        ),
        "kwargs": json_values,
    }
)


@seed(SEED)
@settings(
    max_examples=300,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.one_of(json_values, lc_like, st.lists(lc_like, max_size=3)))
def test_load_of_random_json_returns_or_raises_serialization_error(value: Any) -> None:
    try:
        loaded = loads(json.dumps(value))
    except SerializationError:
        return
    assert (
        loaded is None
        or isinstance(loaded, (bool, int, float, str, list, dict, tuple))
        or (type(loaded).__module__ in ("actloop.messages", "actloop.agents"))
    )


# -- secrets -------------------------------------------------------------------------------


@pytest.fixture
def openai_server() -> Iterator[LoopbackServer]:
    """The shared loopback OpenAI-compatible server, scripted with one ReAct final answer."""
    for server in running():
        server.script(message("Thought: done\nFinal Answer: all good"))
        yield server


def _chat_openai(base_url: str) -> Any:
    models = pytest.importorskip("actloop.models")
    return models.ChatOpenAI(model="m", api_key=SECRET, base_url=base_url, max_retries=0)


def test_api_key_stays_out_of_repr_str_and_dumps() -> None:
    model = _chat_openai("http://127.0.0.1:9/v1")
    for text in (repr(model), str(model), dumps(model), json.dumps(dumpd({"model": model}))):
        assert SECRET not in text


@pytest.mark.parametrize("reachable", [True, False])
def test_api_key_stays_out_of_logs_errors_and_checkpoints(
    reachable: bool,
    openai_server: LoopbackServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from actloop.checkpoint import SqliteCheckpointer
    from actloop.react import REACT_PROMPT, create_react_agent

    model = _chat_openai(openai_server.url if reachable else "http://127.0.0.1:9/v1")
    echo = Tool(name="echo", func=lambda q: q, description="echo")
    store = SqliteCheckpointer(tmp_path / "runs.db")
    executor = AgentExecutor(
        agent=create_react_agent(model, [echo], REACT_PROMPT),
        tools=[echo],
        checkpointer=store,
        verbose=True,
    )
    config: Any = {"configurable": {"thread_id": "t1"}}
    with caplog.at_level(logging.DEBUG):
        if reachable:
            assert executor.invoke({"input": "hi"}, config)["output"] == "all good"
            sent = openai_server.requests[-1]["headers"]["authorization"]
            assert sent == f"Bearer {SECRET}"  # it was really sent
        else:
            with pytest.raises(Exception) as info:
                executor.invoke({"input": "hi"}, config)
            assert SECRET not in repr(info.value) and SECRET not in str(info.value)
    store.close()
    assert SECRET not in caplog.text
    for record in caplog.records:
        assert SECRET not in repr(record.args)
    for file in tmp_path.iterdir():
        assert SECRET.encode() not in file.read_bytes(), file.name


# -- built-in tools against hostile input --------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        "9**9**9**9",
        "10**1000000",
        "2**(2**64)",
        "factorial(100000)",
        "factorial(factorial(20))",
        "1" * 5_000,
        "(" * 10_000 + "1" + ")" * 10_000,
        "(" * 300 + "1" + ")" * 300,
        "-" * 999 + "1",
        "1e308 * 10",
        "exp(1000)",
        "__import__('os').system('echo pwned')",
        "().__class__.__bases__[0].__subclasses__()",
        "open('/etc/passwd').read()",
        "lambda: 1",
        "[1] * 10**9",
        "'a' * 10**9",
        "round(1, 10**9)",
        "max(*[1, 2])",
        "sqrt(-1)",
        "(-8) ** 0.5",
        "1 / 0",
        "10 ** -10**6",
        "x",
        "",
        "\x00",
    ],
)
def test_calculator_refuses_hostile_expressions_quickly(expression: str) -> None:
    start = time.monotonic()
    result = calculator.invoke({"expression": expression})
    assert time.monotonic() - start < LIVENESS
    assert isinstance(result, str)
    assert result.startswith("Error:") or len(result) <= 25, result  # refused, or a small number


@seed(SEED)
@settings(max_examples=300, deadline=None, database=None, print_blob=True)
@given(st.text(alphabet="0123456789+-*/%().e ,sqrtfacilogpw*", max_size=60) | st.text(max_size=40))
def test_calculator_never_raises_and_stays_fast(expression: str) -> None:
    start = time.monotonic()
    result = calculator.invoke({"expression": expression})
    assert isinstance(result, str) and len(result) < 2_000
    assert time.monotonic() - start < LIVENESS


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "ok.txt").write_text("inside")
    (tmp_path / "secret.txt").write_text("outside secret")
    os.symlink(tmp_path / "secret.txt", root / "link_out.txt")
    os.symlink(tmp_path, root / "dir_out")
    os.symlink(root / "ok.txt", root / "link_in.txt")
    os.symlink(root / "loop_a", root / "loop_b")
    os.symlink(root / "loop_b", root / "loop_a")
    return root


@pytest.mark.parametrize(
    "path",
    [
        "../secret.txt",
        "sub/../../secret.txt",
        "link_out.txt",
        "dir_out/secret.txt",
        "dir_out",
        "/etc/passwd",
        "//etc/passwd",
        "~/.bashrc",
        "loop_a",
        "ok.txt\x00.png",
        "a" * 10_000,
        "sub/" * 2_000 + "x",
        "",
        "/proc/self/environ",
    ],
)
def test_file_tools_never_leave_their_root(sandbox: Path, path: str) -> None:
    read, listing = file_tools(sandbox)
    for tool_ in (read, listing):
        result = tool_.invoke({"path": path})
        assert isinstance(result, str)
        assert "outside secret" not in result
        assert "secret.txt" not in result or result.startswith("Error:")
    assert read.invoke({"path": "link_in.txt"}) == "inside"  # a symlink inside is fine


def test_clock_refuses_hostile_zones() -> None:
    for zone in ("../../../etc/passwd", "/etc/localtime", "A" * 10_000, "\x00", "Europe/../UTC"):
        result = clock.invoke({"timezone": zone})
        assert result.startswith("Error: unknown time zone"), result
        assert len(result) < 300


# -- tool arguments are validated before the tool runs --------------------------------------


def test_invalid_arguments_never_reach_the_tool_function() -> None:
    calls: list[tuple[Any, ...]] = []

    def transfer(account: int, amount: float, note: str = "") -> str:
        """Move money."""
        calls.append((account, amount, note))
        return "moved"

    tool_ = StructuredTool.from_function(transfer)
    bad_inputs: list[Any] = [
        {"account": "12; DROP TABLE", "amount": 1.0},
        {"account": 1},
        {"account": 1, "amount": "lots"},
        {"account": [1], "amount": 1.0},
        {"account": {"$gt": 0}, "amount": 1.0},
        {},
        "account=1",
    ]
    actions = [AgentAction("transfer", value, "") for value in bad_inputs]
    agent = ScriptedAgent([*actions, AgentFinish({"output": "done"}, "")])
    executor = AgentExecutor(agent=agent, tools=[tool_], return_intermediate_steps=True)
    result = executor.invoke({"input": "q"})
    assert calls == []
    for _, observation in result["intermediate_steps"]:
        assert observation.startswith("Invalid arguments for tool 'transfer': ")
        assert observation.endswith(". Fix the arguments and try again.")


def test_json_schema_tools_reject_undeclared_and_mistyped_arguments() -> None:
    calls: list[dict[str, Any]] = []
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "mode": {"enum": ["r", "w"]}},
        "required": ["path"],
        "additionalProperties": False,
    }
    tool_ = StructuredTool(
        name="open_file",
        description="Open a file.",
        args_schema=schema,
        func=lambda **kw: calls.append(kw) or "opened",
    )
    for bad in ({"path": 1}, {"path": "a", "mode": "x"}, {"path": "a", "shell": "rm -rf /"}, {}):
        result = tool_.invoke(bad)
        assert result.startswith("Invalid arguments for tool 'open_file'"), result
    assert calls == []
    assert tool_.invoke({"path": "a", "mode": "r"}) == "opened"
    assert calls == [{"path": "a", "mode": "r"}]
