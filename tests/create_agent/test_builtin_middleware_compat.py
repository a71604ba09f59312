"""The built-in middleware against LangChain 1.5's: same options, same final states and errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import langchain.agents.middleware as lc_mw
import pytest
from _both import agents, al_model, al_tools_of, lc_model, lc_tools_of, reply, state_fields
from langchain.agents import create_agent as lc_create_agent
from langgraph.checkpoint.memory import InMemorySaver

import actloop.agents.middleware as al_mw
from actloop.agents import create_agent
from actloop.checkpoint import SqliteCheckpointer


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


TOOLS = [add, shout]


def looping(n: int, *names: str) -> list[dict[str, Any]]:
    """`n` replies each calling the named tools (add by default), then a final answer."""
    names = names or ("add",)
    args = {"add": {"a": 1, "b": 2}, "shout": {"text": "x"}}
    out = [
        reply("", *((name, args[name], f"c{i}-{j}") for j, name in enumerate(names)), id=f"r{i}")
        for i in range(n)
    ]
    return [*out, reply("final", id="rf")]


def run_both(replies: list[dict[str, Any]], make: Any) -> tuple[Any, Any]:
    """Final states (or raised errors as (type name, text)) of both libraries."""
    lc, al = agents(replies, TOOLS, lc_middleware=[make(lc_mw)], al_middleware=[make(al_mw)])
    results: list[Any] = []
    for agent in (lc, al):
        try:
            results.append(state_fields(agent.invoke({"messages": [("user", "go")]})))
        except Exception as exc:
            results.append((type(exc).__name__, str(exc)))
    return results[0], results[1]


@pytest.mark.parametrize("exit_behavior", ["end", "error"])
@pytest.mark.parametrize("run_limit", [1, 2, 3])
def test_model_call_limit(run_limit: int, exit_behavior: str) -> None:
    lc, al = run_both(
        looping(5),
        lambda m: m.ModelCallLimitMiddleware(run_limit=run_limit, exit_behavior=exit_behavior),
    )
    assert al == lc
    if exit_behavior == "end":
        assert al["messages"][-1]["content"] == (
            f"Model call limits exceeded: run limit ({run_limit}/{run_limit})"
        )
    else:
        assert al == (
            "ModelCallLimitExceededError",
            f"Model call limits exceeded: run limit ({run_limit}/{run_limit})",
        )


def test_model_call_limit_counts_the_thread_across_runs(tmp_path: Path) -> None:
    replies = [reply("one", id="r1"), reply("two", id="r2"), reply("three", id="r3")]
    lc = lc_create_agent(
        lc_model(replies),
        lc_tools_of(TOOLS),
        checkpointer=InMemorySaver(),
        middleware=[lc_mw.ModelCallLimitMiddleware(thread_limit=2)],
    )
    al = create_agent(
        al_model(replies),
        al_tools_of(TOOLS),
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
        middleware=[al_mw.ModelCallLimitMiddleware(thread_limit=2)],
    )
    config = {"configurable": {"thread_id": "t"}}
    for text in ("a", "b", "c"):
        lc_out = lc.invoke({"messages": [("user", text)]}, config)
        al_out = al.invoke({"messages": [("user", text)]}, config)
        assert state_fields(al_out) == state_fields(lc_out)
    assert "thread_model_call_count" not in al_out
    assert al_out["messages"][-1].content == "Model call limits exceeded: thread limit (2/2)"
    assert al.get_state(config).values["thread_model_call_count"] == 2
    assert lc.get_state(config).values["thread_model_call_count"] == 2


@pytest.mark.parametrize("exit_behavior", ["continue", "end", "error"])
@pytest.mark.parametrize("tool_name", [None, "add", "shout"])
def test_tool_call_limit(exit_behavior: str, tool_name: str | None) -> None:
    lc, al = run_both(
        looping(3, "add", "shout"),
        lambda m: m.ToolCallLimitMiddleware(
            tool_name=tool_name, run_limit=3, exit_behavior=exit_behavior
        ),
    )
    assert al == lc


def _flaky_pair(failures: int, replies: list[dict[str, Any]]) -> tuple[Any, Any]:
    """Scripted models on both sides that raise `ValueError("flaky <n>")` on their first
    `failures` calls, then play `replies`."""
    import langchain_core.messages as lc_messages
    from _both import LcScripted

    import actloop.messages as al_messages
    from actloop.testing import FunctionChatModel

    class LcFlaky(LcScripted):
        calls: int = 0

        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls <= failures:
                raise ValueError(f"flaky {self.calls}")
            return super()._generate(*args, **kwargs)

    lc = LcFlaky(messages=iter([lc_messages.AIMessage(**r) for r in replies]))
    al_replies = iter([al_messages.AIMessage(**r) for r in replies])
    calls = [0]

    def al_reply(messages: Any) -> Any:
        calls[0] += 1
        if calls[0] <= failures:
            raise ValueError(f"flaky {calls[0]}")
        return next(al_replies)

    return lc, FunctionChatModel(al_reply)


def _agents_with(lc_model_: Any, al_model_: Any, lc_m: list[Any], al_m: list[Any]) -> Any:
    lc = lc_create_agent(lc_model_, lc_tools_of(TOOLS), middleware=lc_m)
    al = create_agent(al_model_, al_tools_of(TOOLS), middleware=al_m)
    return lc, al


def _outcome(agent: Any) -> Any:
    try:
        return state_fields(agent.invoke({"messages": [("user", "go")]}))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("failures", [0, 1, 2, 3])
@pytest.mark.parametrize("on_failure", ["continue", "error"])
def test_model_retry(failures: int, on_failure: str) -> None:
    lc_m, al_m = _flaky_pair(failures, [reply("ok", id="r1")])
    lc, al = _agents_with(
        lc_m,
        al_m,
        [lc_mw.ModelRetryMiddleware(max_retries=2, initial_delay=0, on_failure=on_failure)],
        [al_mw.ModelRetryMiddleware(max_retries=2, initial_delay=0, on_failure=on_failure)],
    )
    lc_out, al_out = _outcome(lc), _outcome(al)
    assert al_out == lc_out
    if failures == 3 and on_failure == "continue":
        assert al_out["messages"][-1]["content"] == (
            "Model call failed after 3 attempts with ValueError: flaky 3"
        )


@pytest.mark.parametrize("failures", [0, 1, 3])
@pytest.mark.parametrize("on_failure", ["continue", "error"])
def test_tool_retry(failures: int, on_failure: str) -> None:
    counts = {"lc": 0, "al": 0}

    def make_flaky(side: str) -> Any:
        def flaky(x: str) -> str:
            """Fails its first calls."""
            counts[side] += 1
            if counts[side] <= failures:
                raise ValueError(f"tool flaky {counts[side]}")
            return x.upper()

        return flaky

    replies = [reply("", ("flaky", {"x": "a"}, "c1"), id="r1"), reply("done", id="r2")]
    lc = lc_create_agent(
        lc_model(replies),
        lc_tools_of([make_flaky("lc")]),
        middleware=[
            lc_mw.ToolRetryMiddleware(max_retries=2, initial_delay=0, on_failure=on_failure)
        ],
    )
    al = create_agent(
        al_model(replies),
        al_tools_of([make_flaky("al")]),
        middleware=[
            al_mw.ToolRetryMiddleware(max_retries=2, initial_delay=0, on_failure=on_failure)
        ],
    )
    assert _outcome(al) == _outcome(lc)
    assert counts["al"] == counts["lc"] == min(failures + 1, 3)


def _say_custom(exc: Exception) -> str:
    return f"custom: {type(exc).__name__}: {exc}"


async def _aoutcome(agent: Any) -> Any:
    try:
        return state_fields(await agent.ainvoke({"messages": [("user", "go")]}))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("on_failure", ["continue", "error", _say_custom])
@pytest.mark.parametrize("retry_on", [(ValueError,), (KeyError,), lambda e: "2" not in str(e)])
@pytest.mark.parametrize("max_retries", [0, 2])
async def test_model_retry_options_async(on_failure: Any, retry_on: Any, max_retries: int) -> None:
    """The async path with every kind of `on_failure` and `retry_on`: a non-matching error
    propagates at once; spent retries give `on_failure`'s message or raise."""
    lc_m, al_m = _flaky_pair(5, [])
    options = {"max_retries": max_retries, "initial_delay": 0, "on_failure": on_failure}
    lc, al = _agents_with(
        lc_m,
        al_m,
        [lc_mw.ModelRetryMiddleware(retry_on=retry_on, **options)],
        [al_mw.ModelRetryMiddleware(retry_on=retry_on, **options)],
    )
    lc_out, al_out = await _aoutcome(lc), await _aoutcome(al)
    assert al_out == lc_out
    if on_failure is _say_custom and retry_on == (ValueError,):
        attempts = max_retries + 1
        assert al_out["messages"][-1]["content"] == f"custom: ValueError: flaky {attempts}"


@pytest.mark.parametrize("deprecated", ["raise", "return_message"])
async def test_tool_retry_deprecated_on_failure_async(deprecated: str) -> None:
    """LangChain 1.x's deprecated `on_failure` spellings warn as LangChain's and act as their
    new names, on the async path."""

    def broken(x: str) -> str:
        """Always fails."""
        raise ValueError(f"broken {x}")

    replies = [reply("", ("broken", {"x": "a"}, "c1"), id="r1"), reply("done", id="r2")]
    with pytest.warns(DeprecationWarning) as lc_warned:
        lc_retry = lc_mw.ToolRetryMiddleware(max_retries=1, initial_delay=0, on_failure=deprecated)
    with pytest.warns(DeprecationWarning) as al_warned:
        al_retry = al_mw.ToolRetryMiddleware(max_retries=1, initial_delay=0, on_failure=deprecated)
    assert [str(w.message) for w in al_warned] == [str(w.message) for w in lc_warned]
    lc = lc_create_agent(lc_model(replies), lc_tools_of([broken]), middleware=[lc_retry])
    al = create_agent(al_model(replies), al_tools_of([broken]), middleware=[al_retry])
    assert await _aoutcome(al) == await _aoutcome(lc)


def test_model_fallback_tries_each_model_in_order() -> None:
    lc_primary, al_primary = _flaky_pair(5, [])
    lc_second, al_second = _flaky_pair(5, [])
    lc_third, al_third = _flaky_pair(0, [reply("from the third", id="r3")])
    lc, al = _agents_with(
        lc_primary,
        al_primary,
        [lc_mw.ModelFallbackMiddleware(lc_second, lc_third)],
        [al_mw.ModelFallbackMiddleware(al_second, al_third)],
    )
    lc_out, al_out = _outcome(lc), _outcome(al)
    assert al_out == lc_out
    assert al_out["messages"][-1]["content"] == "from the third"
    lc_a, al_a = _flaky_pair(5, [])
    lc_b, al_b = _flaky_pair(5, [])
    lc, al = _agents_with(
        lc_a, al_a, [lc_mw.ModelFallbackMiddleware(lc_b)], [al_mw.ModelFallbackMiddleware(al_b)]
    )
    assert _outcome(al) == _outcome(lc) == ("ValueError", "flaky 1")
