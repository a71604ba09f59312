"""Message content only with the capture opt-in; instrument() and uninstrument() switch spans on
and off for the whole process, and off leaves the callback fast path untouched."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from actloop import AgentExecutor
from actloop.callbacks import BaseCallbackHandler
from actloop.callbacks._manager import configure
from actloop.react import REACT_PROMPT, create_react_agent
from actloop.testing import FunctionChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import tool
from actloop.tracing import CAPTURE_ENV, instrument, is_instrumented, uninstrument
from support.tracing import PROMPT, NamedModel, Spans, call, reply


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def one_step() -> AgentExecutor:
    model = NamedModel(
        [
            reply([call("add", {"a": 1, "b": 2}, "call-1")], (10, 3), "tool_calls"),
            reply([], (20, 1), "stop", text="3"),
        ]
    )
    return AgentExecutor(agent=create_tool_calling_agent(model, [add], PROMPT), tools=[add])


CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}


def _content(spans: Spans) -> list[dict[str, Any]]:
    """The content attributes of each span, in end order."""
    return [
        {k: v for k, v in (s.attributes or {}).items() if k in CONTENT_KEYS}
        for s in spans.finished()
    ]


@pytest.fixture
def fresh() -> Iterator[Spans]:
    """A provider to instrument by hand in the test; uninstrumented after."""
    caught = Spans()
    yield caught
    uninstrument()
    caught.provider.shutdown()


def test_content_is_recorded_only_with_the_opt_in(fresh: Spans) -> None:
    instrument(tracer_provider=fresh.provider, capture_content=True)
    one_step().invoke({"input": "1+2?"})
    first_call = [{"role": "user", "parts": [{"type": "text", "content": "1+2?"}]}]
    tool_call = {"type": "tool_call", "id": "call-1", "name": "add", "arguments": {"a": 1, "b": 2}}
    assistant = {"role": "assistant", "parts": [tool_call]}
    assert _content(fresh) == [
        {
            "gen_ai.input.messages": json.dumps(first_call),
            "gen_ai.output.messages": json.dumps([{**assistant, "finish_reason": "tool_calls"}]),
        },
        {"gen_ai.tool.call.arguments": '{"a": 1, "b": 2}', "gen_ai.tool.call.result": "3"},
        {
            "gen_ai.input.messages": json.dumps(
                [
                    *first_call,
                    assistant,
                    {
                        "role": "tool",
                        "parts": [{"type": "tool_call_response", "id": "call-1", "result": "3"}],
                    },
                ]
            ),
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": "3"}],
                        "finish_reason": "stop",
                    }
                ]
            ),
        },
        {},  # the agent span
    ]


@pytest.mark.parametrize(
    ("env", "flag", "recorded"),
    [
        ("true", None, True),
        ("SPAN_ONLY", None, True),
        ("false", None, False),
        ("true", False, False),
    ],
)
def test_the_conventions_environment_variable_opts_in_unless_overridden(
    fresh: Spans, monkeypatch: pytest.MonkeyPatch, env: str, flag: bool | None, recorded: bool
) -> None:
    monkeypatch.setenv(CAPTURE_ENV, env)
    instrument(tracer_provider=fresh.provider, capture_content=flag)
    one_step().invoke({"input": "1+2?"})
    assert [bool(c) for c in _content(fresh)] == [recorded, recorded, recorded, False]


def test_uninstrument_turns_spans_off_and_instrument_again_switches_provider(
    fresh: Spans,
) -> None:
    assert not is_instrumented()
    assert configure(None) is None  # off: the callback fast path stays one `is None` check
    earlier = Spans()
    instrument(tracer_provider=earlier.provider)
    assert configure(None) is not None
    instrument(tracer_provider=fresh.provider)  # again: replaces the first, never adds a second
    one_step().invoke({"input": "1+2?"})
    assert (len(earlier.finished()), len(fresh.finished())) == (0, 4)  # chat, tool, chat, agent
    uninstrument()
    assert not is_instrumented()
    assert configure(None) is None
    one_step().invoke({"input": "1+2?"})
    assert len(fresh.finished()) == 4


def test_importing_actloop_and_its_tracing_package_does_not_import_opentelemetry() -> None:
    code = (
        "import sys, actloop, actloop.tracing; "
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"


def test_the_package_exports_report_its_public_path() -> None:
    import actloop.tracing

    functions = [getattr(actloop.tracing, n) for n in actloop.tracing.__all__ if n != "CAPTURE_ENV"]
    assert {f.__module__ for f in functions} == {"actloop.tracing"}
    assert actloop.tracing.__all__ == sorted(actloop.tracing.__all__)


class Recorder(BaseCallbackHandler):
    """Records the name of every hook it gets, with the run's parent (as a depth)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []
        self.depth: dict[Any, int] = {}

    def _seen(self, hook: str, kwargs: dict[str, Any]) -> None:
        run, parent = kwargs["run_id"], kwargs.get("parent_run_id")
        self.depth.setdefault(run, self.depth[parent] + 1 if parent in self.depth else 0)
        self.events.append((hook, self.depth[run]))

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self._seen("chain_start", kwargs)

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self._seen("chat_model_start", kwargs)

    def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        self._seen("tool_start", kwargs)

    def on_agent_finish(self, finish: Any, **kwargs: Any) -> None:
        self._seen("agent_finish", kwargs)


def test_a_users_handler_gets_the_same_events_with_tracing_on(fresh: Spans) -> None:
    off = Recorder()
    one_step().invoke({"input": "1+2?"}, {"callbacks": [off]})
    instrument(tracer_provider=fresh.provider)
    on = Recorder()
    one_step().invoke({"input": "1+2?"}, {"callbacks": [on]})
    assert on.events == off.events
    hooks = [hook for hook, _ in off.events]
    assert [hooks.count(h) for h in ("chain_start", "chat_model_start", "tool_start")] == [13, 2, 1]
    assert len(fresh.finished()) == 4


REPLY = "I will not follow the format. The secret plan is 42."


@pytest.mark.parametrize("capture", [False, True])
def test_a_parse_error_that_ends_the_run_keeps_the_reply_out_unless_captured(
    fresh: Spans, capture: bool
) -> None:
    """Issue 29 (weak item): with content capture off, the model's reply (which a parse error's
    message quotes) is in neither the `invoke_agent` span's status nor its exception event."""
    instrument(tracer_provider=fresh.provider, capture_content=capture)
    agent = create_react_agent(FunctionChatModel(lambda m: REPLY), [add], REACT_PROMPT)
    with pytest.raises(ValueError, match="An output parsing error occurred"):
        AgentExecutor(agent=agent, tools=[add]).invoke({"input": "q"})
    (run,) = [s for s in fresh.finished() if s.name.startswith("invoke_agent")]
    (event,) = run.events
    recorded = [run.status.description, *[str(v) for v in (event.attributes or {}).values()]]
    assert run.status.status_code.name == "ERROR"
    assert dict(run.attributes or {})["error.type"] == "ValueError"
    assert any(REPLY in text for text in recorded) is capture
    if not capture:
        assert run.status.description == (
            "ValueError: the agent's output could not be parsed (its text is kept out without "
            "content capture)"
        )
