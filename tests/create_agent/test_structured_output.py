"""`create_agent(response_format=...)` against LangChain 1.5: the same scripted replies give
field-equal final states, equal `structured_response`s, the same errors, and the same tools and
options bound to the model on each call (tool strategy, validation retries, each
`handle_errors`, several structured calls at once, provider strategy, auto strategy)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import langchain.agents.structured_output as lc_so
import pytest
from _both import LcScripted, al_tools_of, fields, human, lc_tools_of, reply, state_fields
from langchain.agents import create_agent as lc_create_agent
from langchain.agents.middleware import AgentMiddleware as LcMiddleware
from langchain.agents.middleware import HumanInTheLoopMiddleware as LcHITL
from langchain_core.messages import AIMessage as LcAIMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command as LcCommand
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

import actloop.agents.structured_output as al_so
from actloop.agents import Command
from actloop.agents import create_agent as al_create_agent
from actloop.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
from actloop.checkpoint import SqliteCheckpointer
from actloop.messages import AIMessage
from actloop.testing import ScriptedChatModel

LC = SimpleNamespace(so=lc_so, side=0)
AL = SimpleNamespace(so=al_so, side=1)


class Weather(BaseModel):
    """Weather response."""

    temperature: float = Field(description="The temperature in fahrenheit")
    condition: str


class Location(BaseModel):
    """Where the user is."""

    city: str
    country: str


@dataclass
class WeatherData:
    """Weather response."""

    temperature: float
    condition: str


class WeatherDict(TypedDict):
    """Weather response."""

    temperature: float
    condition: str


WEATHER_SCHEMA = {
    "type": "object",
    "title": "weather_schema",
    "description": "The weather.",
    "properties": {"temperature": {"type": "number"}, "condition": {"type": "string"}},
    "required": ["temperature", "condition"],
}

GOOD = {"temperature": 75.0, "condition": "sunny"}
BAD = {"temperature": "hot", "condition": "sunny"}


def get_weather(city: str) -> str:
    """Get the weather of a city."""
    return f"sunny in {city}"


class LcRecording(LcScripted):
    """LangChain's scripted model, recording what each binding asked for (tools as OpenAI
    schemas, and the options)."""

    bindings: list[dict[str, Any]] = Field(default_factory=list)
    model_name: str | None = None

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.bindings.append({"tools": [convert_to_openai_tool(t) for t in tools], **kwargs})
        return self


def _models(replies: list[dict[str, Any]], profile: dict[str, Any] | None) -> tuple[Any, Any]:
    lc = LcRecording(messages=iter([LcAIMessage(**r) for r in replies]), profile=profile)
    al = ScriptedChatModel([AIMessage(**r) for r in replies], profile=profile)
    return lc, al


def _bound(al_model: ScriptedChatModel) -> list[dict[str, Any]]:
    """What actloop's model was asked on each call, as LcRecording records LangChain's."""
    out: list[dict[str, Any]] = []
    for call in al_model.calls:
        kwargs = dict(call.kwargs)
        out.append({"tools": kwargs.pop("tools", []), **kwargs})
    return out


def pair(
    replies: list[dict[str, Any]],
    response_format: Any,
    tools: list[Any] | None = None,
    profile: dict[str, Any] | None = None,
    **kwargs: Any,
) -> tuple[Any, Any, Any, Any]:
    """Both agents of a scenario (`response_format(lib)` gives each library's), and models."""
    fns = [get_weather] if tools is None else tools
    lc_model, al_model = _models(replies, profile)
    lc = lc_create_agent(lc_model, lc_tools_of(fns), response_format=response_format(LC), **kwargs)
    al = al_create_agent(al_model, al_tools_of(fns), response_format=response_format(AL), **kwargs)
    return lc, al, lc_model, al_model


def run_both(
    replies: list[dict[str, Any]], response_format: Any, **kwargs: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both final states as fields, after checking the bindings were the same."""
    lc, al, lc_model, al_model = pair(replies, response_format, **kwargs)
    lc_h, al_h = human("what is the weather?")
    lc_state = state_fields(lc.invoke({"messages": [lc_h]}))
    al_state = state_fields(al.invoke({"messages": [al_h]}))
    assert _bound(al_model) == lc_model.bindings
    al_model.assert_complete()
    return lc_state, al_state


def errors_of(replies: list[dict[str, Any]], response_format: Any, **kwargs: Any) -> Any:
    """Both runs' errors (type name, message), after checking they are the same."""
    lc, al, _, _ = pair(replies, response_format, **kwargs)
    lc_h, al_h = human("what is the weather?")
    with pytest.raises(Exception) as lc_err:
        lc.invoke({"messages": [lc_h]})
    with pytest.raises(Exception) as al_err:
        al.invoke({"messages": [al_h]})
    assert type(al_err.value).__name__ == type(lc_err.value).__name__
    assert str(al_err.value) == str(lc_err.value)
    return al_err.value


def weather_call(args: dict[str, Any], call_id: str, name: str = "Weather") -> dict[str, Any]:
    return reply("", (name, args, call_id), id=f"r-{call_id}")


def tool_strategy(schema: Any, **options: Any) -> Any:
    return lambda lib: lib.so.ToolStrategy(schema, **options)


# -- tool strategy ---------------------------------------------------------------------------


def test_tool_strategy_after_a_tool_call() -> None:
    replies = [
        reply("", ("get_weather", {"city": "Paris"}, "c1"), id="r1"),
        weather_call(GOOD, "c2"),
    ]
    lc, al = run_both(replies, tool_strategy(Weather))
    assert al == lc
    assert al["structured_response"] == Weather(temperature=75.0, condition="sunny")
    assert [(m["type"], m["content"]) for m in al["messages"][2:]] == [
        ("tool", "sunny in Paris"),
        ("ai", ""),
        ("tool", "Returning structured response: temperature=75.0 condition='sunny'"),
    ]
    assert al["messages"][-1]["name"] == "Weather"
    assert al["messages"][-1]["status"] == "success"


@pytest.mark.parametrize(
    ("schema", "name", "expected"),
    [
        (WeatherData, "WeatherData", WeatherData(75.0, "sunny")),
        (WeatherDict, "WeatherDict", GOOD),
        (WEATHER_SCHEMA, "weather_schema", GOOD),
    ],
)
def test_tool_strategy_schema_kinds(schema: Any, name: str, expected: Any) -> None:
    lc, al = run_both([weather_call(GOOD, "c1", name)], tool_strategy(schema))
    assert al == lc
    assert al["structured_response"] == expected


def test_a_bare_schema_without_native_support_uses_the_tool_strategy() -> None:
    lc, al = run_both([weather_call(GOOD, "c1")], lambda lib: Weather)
    assert al == lc
    assert al["structured_response"] == Weather(temperature=75.0, condition="sunny")


def test_validation_error_is_answered_and_the_model_asked_again() -> None:
    replies = [weather_call(BAD, "c1"), weather_call(GOOD, "c2")]
    lc, al = run_both(replies, tool_strategy(Weather))
    assert al == lc
    error = al["messages"][2]
    assert error["content"] == (
        "Error: Failed to parse structured output for tool 'Weather': Failed to parse data to "
        "Weather: 1 validation error for Weather\ntemperature\n  Input should be a valid "
        "number, unable to parse string as a number [type=float_parsing, input_value='hot', "
        "input_type=str]\n    For further information visit "
        "https://errors.pydantic.dev/2.14/v/float_parsing.\n Please fix your mistakes."
    )
    assert (error["name"], error["tool_call_id"], error["status"]) == ("Weather", "c1", "success")
    assert al["structured_response"] == Weather(temperature=75.0, condition="sunny")


@pytest.mark.parametrize(
    "handle_errors",
    [
        pytest.param(lambda lib: "Try again, with a number.", id="str"),
        pytest.param(lambda lib: lambda exc: f"custom: {type(exc).__name__}", id="callable"),
        pytest.param(lambda lib: lib.so.StructuredOutputValidationError, id="type"),
        pytest.param(lambda lib: (KeyError, lib.so.StructuredOutputError), id="tuple"),
    ],
)
def test_handle_errors_that_retry(handle_errors: Any) -> None:
    replies = [weather_call(BAD, "c1"), weather_call(GOOD, "c2")]
    strategy = lambda lib: lib.so.ToolStrategy(Weather, handle_errors=handle_errors(lib))  # noqa: E731
    lc, al = run_both(replies, strategy)
    assert al == lc
    assert al["structured_response"] == Weather(temperature=75.0, condition="sunny")


def test_handle_errors_answer_texts() -> None:
    replies = [weather_call(BAD, "c1"), weather_call(GOOD, "c2")]
    texts = []
    for option in ["Try again.", lambda exc: f"custom: {type(exc).__name__}"]:
        _, al = run_both(replies, tool_strategy(Weather, handle_errors=option))
        texts.append(al["messages"][2]["content"])
    assert texts == ["Try again.", "custom: StructuredOutputValidationError"]


@pytest.mark.parametrize(
    "handle_errors",
    [
        pytest.param(lambda lib: False, id="false"),
        pytest.param(lambda lib: lib.so.MultipleStructuredOutputsError, id="other-type"),
        pytest.param(lambda lib: (KeyError,), id="other-tuple"),
    ],
)
def test_handle_errors_that_raise(handle_errors: Any) -> None:
    strategy = lambda lib: lib.so.ToolStrategy(Weather, handle_errors=handle_errors(lib))  # noqa: E731
    error = errors_of([weather_call(BAD, "c1")], strategy)
    assert isinstance(error, al_so.StructuredOutputValidationError)
    assert error.tool_name == "Weather"
    assert error.ai_message.tool_calls[0]["id"] == "c1"
    assert str(error).startswith(
        "Failed to parse structured output for tool 'Weather': Failed to parse data to Weather: "
    )


def test_custom_tool_message_content() -> None:
    lc, al = run_both(
        [weather_call(GOOD, "c1")], tool_strategy(Weather, tool_message_content="Got it.")
    )
    assert al == lc
    assert al["messages"][-1]["content"] == "Got it."


def test_a_plain_answer_with_tools_ends_without_a_structured_response() -> None:
    lc, al = run_both([reply("It is sunny.", id="r1")], tool_strategy(Weather))
    assert al == lc
    assert al["structured_response"] is None


def test_without_tools_the_model_is_asked_until_it_gives_the_output() -> None:
    replies = [reply("It is sunny.", id="r1"), weather_call(GOOD, "c1")]
    lc, al = run_both(replies, tool_strategy(Weather), tools=[])
    assert al == lc
    assert [m["type"] for m in al["messages"]] == ["human", "ai", "ai", "tool"]


def test_a_tool_call_beside_the_structured_call_runs_then_the_run_ends() -> None:
    replies = [
        reply("", ("get_weather", {"city": "Rome"}, "c1"), ("Weather", GOOD, "c2"), id="r1"),
    ]
    lc, al = run_both(replies, tool_strategy(Weather))
    assert al == lc
    assert [(m["type"], m.get("tool_call_id")) for m in al["messages"]] == [
        ("human", None),
        ("ai", None),
        ("tool", "c2"),
        ("tool", "c1"),
    ]


# -- several structured outputs ----------------------------------------------------------------


def test_union_schema_each_variant_is_a_tool() -> None:
    replies = [reply("", ("Location", {"city": "Paris", "country": "France"}, "c1"), id="r1")]
    lc, al = run_both(replies, tool_strategy(Weather | Location))
    assert al == lc
    assert al["structured_response"] == Location(city="Paris", country="France")


def test_multiple_structured_outputs_are_answered_and_retried() -> None:
    replies = [
        reply(
            "", ("Weather", GOOD, "c1"), ("Location", {"city": "a", "country": "b"}, "c2"), id="r1"
        ),
        weather_call(GOOD, "c3"),
    ]
    lc, al = run_both(replies, tool_strategy(Weather | Location))
    assert al == lc
    text = (
        "Error: Model incorrectly returned multiple structured responses (Weather, Location) "
        "when only one is expected.\n Please fix your mistakes."
    )
    assert [m["content"] for m in al["messages"][2:4]] == [text, text]
    assert al["structured_response"] == Weather(temperature=75.0, condition="sunny")


def test_multiple_structured_outputs_without_retry_raise() -> None:
    replies = [
        reply(
            "", ("Weather", GOOD, "c1"), ("Location", {"city": "a", "country": "b"}, "c2"), id="r1"
        ),
    ]
    error = errors_of(replies, tool_strategy(Weather | Location, handle_errors=False))
    assert isinstance(error, al_so.MultipleStructuredOutputsError)
    assert error.tool_names == ["Weather", "Location"]


# -- provider and auto strategies --------------------------------------------------------------


def test_provider_strategy() -> None:
    replies = [
        reply("", ("get_weather", {"city": "Oslo"}, "c1"), id="r1"),
        reply(json.dumps(GOOD), id="r2"),
    ]
    lc, al = run_both(replies, lambda lib: lib.so.ProviderStrategy(Weather))
    assert al == lc
    assert al["structured_response"] == Weather(temperature=75.0, condition="sunny")
    assert [m["type"] for m in al["messages"]] == ["human", "ai", "tool", "ai"]


def test_provider_strategy_strict_and_schema_kinds() -> None:
    replies = [reply(json.dumps(GOOD), id="r1")]
    lc, al = run_both(replies, lambda lib: lib.so.ProviderStrategy(WeatherDict, strict=True))
    assert al == lc
    assert al["structured_response"] == GOOD


def test_provider_strategy_invalid_json_raises() -> None:
    error = errors_of([reply("not json", id="r1")], lambda lib: lib.so.ProviderStrategy(Weather))
    assert str(error) == (
        "Failed to parse structured output for tool 'Weather': Native structured output "
        "expected valid JSON for Weather, but parsing failed: Expecting value: line 1 column 1 "
        "(char 0).."
    )


def test_auto_strategy_uses_the_provider_when_the_profile_says_so() -> None:
    replies = [reply(json.dumps(GOOD), id="r1")]
    lc, al = run_both(replies, lambda lib: Weather, profile={"structured_output": True})
    assert al == lc
    assert al["structured_response"] == Weather(temperature=75.0, condition="sunny")


def test_auto_strategy_without_tools_and_with_the_provider() -> None:
    replies = [reply(json.dumps(GOOD), id="r1")]
    lc, al = run_both(
        replies,
        lambda lib: lib.so.AutoStrategy(Weather),
        tools=[],
        profile={"structured_output": True},
    )
    assert al == lc
    assert al["structured_response"] == Weather(temperature=75.0, condition="sunny")


def test_auto_strategy_falls_back_to_tools_for_gemini_2_with_tools() -> None:
    model_profile = {"structured_output": True}
    replies = [weather_call(GOOD, "c1")]
    lc, al, lc_model, al_model = pair(replies, lambda lib: Weather, profile=model_profile)
    al_model.model_name = lc_model.model_name = "gemini-2.5-pro"  # type: ignore[attr-defined]
    lc_h, al_h = human("hi")
    assert state_fields(al.invoke({"messages": [al_h]})) == state_fields(
        lc.invoke({"messages": [lc_h]})
    )
    assert _bound(al_model) == lc_model.bindings
    assert al_model.calls[0].kwargs["tool_choice"] == "any"


# -- async, streams and threads ----------------------------------------------------------------


def test_ainvoke_equals_langchains() -> None:
    replies = [weather_call(BAD, "c1"), weather_call(GOOD, "c2")]
    lc, al, _, _ = pair(replies, tool_strategy(Weather))
    lc_h, al_h = human("hi")
    lc_state = asyncio.run(lc.ainvoke({"messages": [lc_h]}))
    al_state = asyncio.run(al.ainvoke({"messages": [al_h]}))
    assert state_fields(al_state) == state_fields(lc_state)


def _plain(chunk: Any) -> Any:
    return {
        node: {k: fields(v) if k == "messages" else v for k, v in update.items()}
        for node, update in chunk.items()
    }


def test_updates_stream_equals_langchains() -> None:
    replies = [
        reply("", ("get_weather", {"city": "Paris"}, "c1"), id="r1"),
        weather_call(BAD, "c2"),
        weather_call(GOOD, "c3"),
    ]
    lc, al, _, _ = pair(replies, tool_strategy(Weather))
    lc_h, al_h = human("hi")
    lc_chunks = [_plain(c) for c in lc.stream({"messages": [lc_h]}, stream_mode="updates")]
    al_chunks = [_plain(c) for c in al.stream({"messages": [al_h]}, stream_mode="updates")]
    assert al_chunks == lc_chunks
    assert [next(iter(c)) for c in al_chunks] == ["model", "tools", "model", "model"]


def test_structured_response_is_not_kept_across_turns(tmp_path: Path) -> None:
    replies = [weather_call(GOOD, "c1"), reply("anything else?", id="r2")]
    lc_model, al_model = _models(replies, None)
    lc = lc_create_agent(
        lc_model,
        lc_tools_of([get_weather]),
        response_format=lc_so.ToolStrategy(Weather),
        checkpointer=InMemorySaver(),
    )
    al = al_create_agent(
        al_model,
        al_tools_of([get_weather]),
        response_format=al_so.ToolStrategy(Weather),
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
    )
    config = {"configurable": {"thread_id": "t1"}}
    for text, id in [("weather?", "h1"), ("thanks", "h2")]:
        lc_h, al_h = human(text, id)
        lc_state = state_fields(lc.invoke({"messages": [lc_h]}, config))
        al_state = state_fields(al.invoke({"messages": [al_h]}, config))
        assert al_state == lc_state
    assert al_state["structured_response"] is None
    assert len(al_state["messages"]) == 5


def test_values_stream_equals_langchains() -> None:
    replies = [weather_call(BAD, "c1"), weather_call(GOOD, "c2")]
    lc, al, _, _ = pair(replies, tool_strategy(Weather))
    lc_h, al_h = human("hi")
    lc_chunks = [state_fields(c) for c in lc.stream({"messages": [lc_h]}, stream_mode="values")]
    al_chunks = [state_fields(c) for c in al.stream({"messages": [al_h]}, stream_mode="values")]
    assert al_chunks == lc_chunks
    assert [c.get("structured_response") for c in al_chunks][-1] == Weather(
        temperature=75.0, condition="sunny"
    )


def test_get_state_of_a_structured_turn(tmp_path: Path) -> None:
    replies = [weather_call(GOOD, "c1")]
    lc_model, al_model = _models(replies, None)
    lc = lc_create_agent(
        lc_model, [], response_format=lc_so.ToolStrategy(Weather), checkpointer=InMemorySaver()
    )
    al = al_create_agent(
        al_model,
        [],
        response_format=al_so.ToolStrategy(Weather),
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
    )
    config = {"configurable": {"thread_id": "t1"}}
    lc_h, al_h = human("weather?")
    lc.invoke({"messages": [lc_h]}, config)
    al.invoke({"messages": [al_h]}, config)
    lc_values, al_values = lc.get_state(config).values, al.get_state(config).values
    assert state_fields(al_values) == state_fields(lc_values)
    assert isinstance(al_values["structured_response"], Weather)


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_a_paused_turn_resumes_to_its_structured_response(tmp_path: Path, decision: str) -> None:
    replies = [
        reply("", ("get_weather", {"city": "Rome"}, "c1"), id="r1"),
        weather_call(BAD, "c2"),
        weather_call(GOOD, "c3"),
    ]
    lc_model, al_model = _models(replies, None)
    lc = lc_create_agent(
        lc_model,
        lc_tools_of([get_weather]),
        response_format=lc_so.ToolStrategy(Weather),
        middleware=[LcHITL({"get_weather": True})],
        checkpointer=InMemorySaver(),
    )
    al = al_create_agent(
        al_model,
        al_tools_of([get_weather]),
        response_format=al_so.ToolStrategy(Weather),
        middleware=[HumanInTheLoopMiddleware({"get_weather": True})],
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
    )
    config = {"configurable": {"thread_id": "t1"}}
    lc_h, al_h = human("weather?")
    lc.invoke({"messages": [lc_h]}, config)
    al.invoke({"messages": [al_h]}, config)
    resume = {"decisions": [{"type": decision}]}
    lc_out = lc.invoke(LcCommand(resume=resume), config)
    al_out = al.invoke(Command(resume=resume), config)
    assert state_fields(al_out) == state_fields(lc_out)
    assert al_out["structured_response"] == Weather(temperature=75.0, condition="sunny")


def _narrowing(base: Any) -> Any:
    class NarrowToWeather(base):
        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            module = lc_so if base is LcMiddleware else al_so
            return handler(request.override(response_format=module.ToolStrategy(Weather)))

    return NarrowToWeather()


def test_wrap_model_call_narrows_a_union_to_one_tool() -> None:
    replies = [weather_call(GOOD, "c1")]
    lc_model, al_model = _models(replies, None)
    lc = lc_create_agent(
        lc_model,
        [],
        response_format=lc_so.ToolStrategy(Weather | Location),
        middleware=[_narrowing(LcMiddleware)],
    )
    al = al_create_agent(
        al_model,
        [],
        response_format=al_so.ToolStrategy(Weather | Location),
        middleware=[_narrowing(AgentMiddleware)],
    )
    lc_h, al_h = human("hi")
    assert state_fields(al.invoke({"messages": [al_h]})) == state_fields(
        lc.invoke({"messages": [lc_h]})
    )
    assert _bound(al_model) == lc_model.bindings
    assert [t["function"]["name"] for t in al_model.calls[0].kwargs["tools"]] == ["Weather"]


# -- on the wire: actloop's ChatOpenAI and langchain-openai's against one loopback server ----


@pytest.fixture
def openai_server() -> Iterator[Any]:
    from support.openai_server import running

    yield from running()


def _completion(n: int, content: str | None, calls: list[dict[str, Any]]) -> Any:
    """A scripted completion with its own id (actloop's ChatOpenAI takes the completion id as
    the message id; the loopback server's own replies all share one)."""
    from support.openai_server import Reply, completion_json, message

    msg = message(content, calls).message
    body = completion_json(msg, "tool_calls" if calls else "stop")
    return Reply("http", body=json.dumps({**body, "id": f"chatcmpl-{n}"}).encode())


def _wire_fields(state: dict[str, Any]) -> dict[str, Any]:
    """A state's fields but the AI messages' ids and provider extras, where actloop's
    ChatOpenAI and langchain-openai 1.x differ (completion id vs run id)."""
    out = state_fields(state)
    for row in out["messages"]:
        if row["type"] == "ai":
            row.pop("id")
            row.pop("additional_kwargs")
    return out


@pytest.mark.parametrize(
    "case",
    ["auto-provider", "strict-provider", "typeddict-provider", "tool"],
)
def test_openai_requests_and_states_equal_langchain_openais(openai_server: Any, case: str) -> None:
    from langchain_openai import ChatOpenAI as LcChatOpenAI

    from actloop.models import ChatOpenAI

    answer = json.dumps({"temperature": 70, "condition": "sunny"})
    formats: dict[str, Callable[[Any], Any]] = {
        "auto-provider": lambda lib: Weather,
        "strict-provider": lambda lib: lib.so.ProviderStrategy(Weather, strict=True),
        "typeddict-provider": lambda lib: lib.so.ProviderStrategy(WeatherDict),
        "tool": tool_strategy(Weather),
    }
    weather = [{"id": "c1", "name": "get_weather", "arguments": json.dumps({"city": "Rome"})}]
    final = [{"id": "c2", "name": "Weather", "arguments": answer}] if case == "tool" else []
    states, bodies = [], []
    for lib, chat, tools_of in [(LC, LcChatOpenAI, lc_tools_of), (AL, ChatOpenAI, al_tools_of)]:
        openai_server.script(
            _completion(1, None, weather), _completion(2, None if final else answer, final)
        )
        model = chat(model="gpt-4o", base_url=openai_server.url, api_key="k")
        create = lc_create_agent if lib is LC else al_create_agent
        agent = create(model, tools_of([get_weather]), response_format=formats[case](lib))
        states.append(_wire_fields(agent.invoke({"messages": [human("hi")[lib.side]]})))
        bodies.append(openai_server.bodies)
        openai_server.requests.clear()
    assert states[1] == states[0]
    assert bodies[1] == bodies[0]
    expected = {"temperature": 70, "condition": "sunny"}
    if case != "typeddict-provider":
        expected = Weather(temperature=70, condition="sunny")
    assert states[1]["structured_response"] == expected
    if case != "tool":
        assert bodies[1][0]["response_format"]["type"] == "json_schema"


AUTO_MODELS = [
    "o1",
    "o3",
    "o3-mini",
    "o4-mini",
    "gpt-5",
    "gpt-5.2",
    "gpt-5.4-mini",
    "gpt-4.1-nano",
    "gpt-4o-2024-08-06",
    "gpt-4-turbo",
    "gpt-3.5-turbo",
    "gpt-realtime-2.1",
    "my-own-model",
]
"""Names langchain-openai's profiles say have native structured output (o-series, gpt-5.x and
4.x, some of them beyond LangChain's name patterns), names they say lack it, and an unknown
name (no profile: the name patterns decide)."""


@pytest.mark.parametrize("name", AUTO_MODELS)
def test_auto_strategy_picks_as_langchain_openai_by_profile(openai_server: Any, name: str) -> None:
    from langchain.agents.factory import _supports_provider_strategy
    from langchain_openai import ChatOpenAI as LcChatOpenAI

    from actloop.agents.factory import _supports_provider_strategy as al_supports
    from actloop.models import ChatOpenAI

    answer = json.dumps({"temperature": 70, "condition": "sunny"})
    lc_model = LcChatOpenAI(model=name, base_url=openai_server.url, api_key="k")
    al_model = ChatOpenAI(name, base_url=openai_server.url, api_key="k")
    provider = _supports_provider_strategy(lc_model, tools=[])
    assert al_supports(al_model, tools=[]) is provider
    assert al_model.profile == (
        None
        if lc_model.profile is None
        else {**lc_model.profile, "mid_conversation_tools": False}
        if "mid_conversation_tools" in lc_model.profile
        else lc_model.profile
    )
    final = [] if provider else [{"id": "c1", "name": "Weather", "arguments": answer}]
    states, bodies = [], []
    for lib, model in [(LC, lc_model), (AL, al_model)]:
        openai_server.script(_completion(1, answer if provider else None, final))
        create = lc_create_agent if lib is LC else al_create_agent
        agent = create(model, response_format=Weather)
        states.append(_wire_fields(agent.invoke({"messages": [human("hi")[lib.side]]})))
        bodies.append(openai_server.bodies)
        openai_server.requests.clear()
    if name.startswith("o1"):  # langchain-openai sends o1's only temperature, 1; actloop none
        assert bodies[0][0].pop("temperature") == 1.0
    assert states[1] == states[0]
    assert bodies[1] == bodies[0]
    assert ("response_format" in bodies[1][0]) is provider
    assert states[1]["structured_response"] == Weather(temperature=70, condition="sunny")


def test_model_retry_middleware_retries_a_validation_error() -> None:
    import langchain.agents.middleware as lc_mw

    import actloop.agents.middleware as al_mw

    def retry(mw: Any) -> Any:
        return mw.ModelRetryMiddleware(max_retries=1, initial_delay=0, jitter=False)

    replies = [weather_call(BAD, "c1"), weather_call(GOOD, "c2")]
    lc_model, al_model = _models(replies, None)
    lc_agent = lc_create_agent(
        lc_model,
        [],
        response_format=lc_so.ToolStrategy(Weather, handle_errors=False),
        middleware=[retry(lc_mw)],
    )
    al_agent = al_create_agent(
        al_model,
        [],
        response_format=al_so.ToolStrategy(Weather, handle_errors=False),
        middleware=[retry(al_mw)],
    )
    lc_h, al_h = human("hi")
    lc_state = state_fields(lc_agent.invoke({"messages": [lc_h]}))
    al_state = state_fields(al_agent.invoke({"messages": [al_h]}))
    assert al_state == lc_state
    assert [m["type"] for m in al_state["messages"]] == ["human", "ai", "tool"]
    assert al_state["messages"][1]["id"] == "r-c2"
