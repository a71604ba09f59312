"""The embedded agent on clock questions (issue 19): the zone is a city copied from the question."""

from __future__ import annotations

from actloop.models._local_prompt import reply_schema
from actloop.models.local import LocalChatModel, local_json_agent
from actloop.tools.builtin import calculator, clock


def _zones() -> list[str]:
    replies = reply_schema([calculator, clock])["oneOf"]
    (clock_reply,) = [r for r in replies if r["properties"]["action"] == {"const": "clock"}]
    return clock_reply["properties"]["action_input"]["properties"]["timezone"]["enum"]


def test_the_clock_takes_a_city_as_the_question_writes_it_or_an_iana_name() -> None:
    zones = _zones()
    assert zones[0] == "UTC"
    assert {" Tokyo", " New York", " Sao Paulo", "Asia/Tokyo", "America/New_York"} <= set(zones)
    assert not {"Japan", " Japan", "Tokyo", "Mars/Olympus"} & set(zones)
    assert len(zones) == len(set(zones))


def test_the_agent_asks_the_clock_for_the_city_the_question_names() -> None:
    agent = local_json_agent(LocalChatModel(seed=0), [calculator, clock])
    step = agent.invoke({"input": "What time is it in Moscow?", "intermediate_steps": []})
    assert getattr(step, "tool", None) == "clock"
    assert getattr(step, "tool_input", None) == {"timezone": " Moscow"}
    assert "(Europe/Moscow, " in clock.invoke({"timezone": " Moscow"})
