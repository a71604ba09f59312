"""`arun` carries out the call itself, with or without callbacks: the same observations, messages,
errors and callback events as `run` gives for the same tool (the sync path is the reference)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from actloop.callbacks import BaseCallbackHandler
from actloop.messages import ToolMessage
from actloop.runnables import RunnableConfig
from actloop.tools import BaseTool, StructuredTool, ToolException


class Recorder(BaseCallbackHandler):
    """Records tool events with their keyword arguments (an exception as its type and text)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any, dict[str, Any]]] = []

    def on_tool_start(self, serialized: Any, input_str: str, **kw: Any) -> None:  # type: ignore[override]
        kw.pop("run_id"), kw.pop("parent_run_id")
        self.events.append(("on_tool_start", input_str, kw))

    def on_tool_end(self, output: Any, **kw: Any) -> None:  # type: ignore[override]
        kw.pop("run_id"), kw.pop("parent_run_id")
        self.events.append(("on_tool_end", output, kw))

    def on_tool_error(self, error: BaseException, **kw: Any) -> None:  # type: ignore[override]
        kw.pop("run_id"), kw.pop("parent_run_id")
        self.events.append(("on_tool_error", (type(error).__name__, str(error)), kw))


def upper(text: str) -> str:
    return text.upper()


async def aupper(text: str) -> str:
    return text.upper()


def fail(text: str) -> str:
    raise ToolException(f"cannot do {text}")


async def afail(text: str) -> str:
    raise ToolException(f"cannot do {text}")


def crash(text: str) -> str:
    raise KeyError(text)


async def acrash(text: str) -> str:
    raise KeyError(text)


def pair(text: str) -> tuple[str, list[str]]:
    return text, [text, text]


async def apair(text: str) -> tuple[str, list[str]]:
    return text, [text, text]


def sees_config(text: str, config: RunnableConfig) -> str:
    return f"{text}:{sorted(config.get('tags', []))}"


async def asees_config(text: str, config: RunnableConfig) -> str:
    return f"{text}:{sorted(config.get('tags', []))}"


def _twins(
    func: Callable[..., Any], coroutine: Callable[..., Awaitable[Any]], **options: Any
) -> tuple[BaseTool, BaseTool]:
    """The same work as a sync tool and as an async tool (`coroutine=`)."""
    sync = StructuredTool.from_function(func, name="t", description="d", **options)
    both = StructuredTool.from_function(
        func, coroutine=coroutine, name="t", description="d", **options
    )
    return sync, both


CASES: list[tuple[str, Any, Any, dict[str, Any], Any]] = [
    ("plain", upper, aupper, {}, "ab"),
    ("handled error", fail, afail, {"handle_tool_error": True}, "ab"),
    ("handled error, text", fail, afail, {"handle_tool_error": "no luck"}, "ab"),
    ("invalid arguments", upper, aupper, {}, {"text": 3}),
    ("invalid arguments, flagged", upper, aupper, {"handle_validation_error": "bad"}, {"text": 3}),
    ("content and artifact", pair, apair, {"response_format": "content_and_artifact"}, "ab"),
    ("config injected", sees_config, asees_config, {}, "ab"),
]


@pytest.mark.parametrize(("case", "func", "coroutine", "options", "tool_input"), CASES)
@pytest.mark.parametrize("reported", [False, True])
@pytest.mark.parametrize("tool_call_id", [None, "c1"])
async def test_arun_gives_what_run_gives(
    case: str,
    func: Callable[..., Any],
    coroutine: Callable[..., Awaitable[Any]],
    options: dict[str, Any],
    tool_input: Any,
    reported: bool,
    tool_call_id: str | None,
) -> None:
    sync, tool = _twins(func, coroutine, **options)
    recorders = Recorder(), Recorder()
    config: RunnableConfig = {"tags": ["x"]}

    def kwargs(recorder: Recorder) -> dict[str, Any]:
        given: dict[str, Any] = {"config": config, "tool_call_id": tool_call_id}
        return {**given, "callbacks": [recorder]} if reported else given

    expected = sync.run(tool_input, **kwargs(recorders[0]))
    got = await tool.arun(tool_input, **kwargs(recorders[1]))
    assert got == expected
    assert type(got) is type(expected)
    if tool_call_id is not None:
        assert isinstance(got, ToolMessage)
    assert recorders[1].events == recorders[0].events
    assert len(recorders[1].events) == (2 if reported else 0)


@pytest.mark.parametrize("reported", [False, True])
async def test_an_unhandled_error_escapes_arun_as_it_escapes_run(reported: bool) -> None:
    sync, tool = _twins(crash, acrash)
    recorders = Recorder(), Recorder()
    with pytest.raises(KeyError) as first:
        sync.run("k", callbacks=[recorders[0]] if reported else None)
    with pytest.raises(KeyError) as second:
        await tool.arun("k", callbacks=[recorders[1]] if reported else None)
    assert repr(second.value) == repr(first.value) == "KeyError('k')"
    assert recorders[1].events == recorders[0].events
    if reported:
        assert recorders[1].events[1] == (
            "on_tool_error",
            ("KeyError", "'k'"),
            {"tags": [], "tool_call_id": None},
        )
    else:
        assert recorders[1].events == []


async def test_an_unhandled_tool_exception_reports_and_escapes() -> None:
    _, tool = _twins(fail, afail)
    recorder = Recorder()
    with pytest.raises(ToolException, match="cannot do ab"):
        await tool.arun("ab", callbacks=[recorder], tool_call_id="c2")
    assert recorder.events[1:] == [
        ("on_tool_error", ("ToolException", "cannot do ab"), {"tags": [], "tool_call_id": "c2"})
    ]


async def test_the_tool_call_message_of_a_quiet_and_a_reported_call() -> None:
    _, tool = _twins(upper, aupper)
    quiet = await tool.arun("ab", tool_call_id="c3")
    reported = await tool.arun("ab", tool_call_id="c3", callbacks=[Recorder()])
    assert quiet == reported == ToolMessage("AB", tool_call_id="c3", name="t")
