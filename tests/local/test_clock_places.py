"""The embedded agent names the clock's zone by place (issue 19): grammar choices, mapping, runs."""

from __future__ import annotations

from datetime import datetime

from actloop.agents import AgentAction
from actloop.models._local_prompt import iana_zones, reply_schema, zone_places
from actloop.models.local import LocalChatModel, local_json_agent
from actloop.testing import ScriptedChatModel
from actloop.tools.builtin import calculator, clock

from ._run import run_json


def test_zone_places_spell_each_zone_three_ways() -> None:
    places = zone_places()
    assert places["Sydney"] == "Australia/Sydney"
    assert places["New York"] == "America/New_York"
    assert places["Japan/Tokyo"] == "Asia/Tokyo"
    assert places["United States/Chicago"] == "America/Chicago"
    assert places["Britain/London"] == "Europe/London"
    assert places["Asia/Kolkata"] == "Asia/Kolkata"
    assert places["UTC"] == "UTC"
    assert places["Istanbul"] == "Asia/Istanbul"  # in two areas: the first of the two names
    assert places["Buenos Aires"] == "America/Buenos_Aires"  # the shorter of two names
    assert set(places.values()) == set(iana_zones())


def test_the_clock_schema_offers_the_places() -> None:
    clock_reply = reply_schema([calculator, clock])["oneOf"][1]["properties"]
    assert clock_reply["action"] == {"const": "clock"}
    assert list(clock_reply) == ["action_input", "action"]
    fields = clock_reply["action_input"]["properties"]
    assert fields["timezone"] == {"enum": list(zone_places())}
    assert clock_reply["action_input"]["required"] == ["timezone"]


def test_a_place_written_by_the_model_reaches_the_tool_as_its_iana_name() -> None:
    reply = '{"action_input": {"timezone": "Japan/Tokyo"}, "action": "clock"}'
    agent = local_json_agent(ScriptedChatModel([reply]), [calculator, clock])
    # a question that names no place the worded rules read (`_local_words`): the model decides
    step = agent.invoke({"input": "What time is it over there?", "intermediate_steps": []})
    assert isinstance(step, AgentAction)
    assert (step.tool, step.tool_input, step.log) == ("clock", {"timezone": "Asia/Tokyo"}, reply)


def test_the_agent_picks_sydneys_zone() -> None:
    agent = local_json_agent(LocalChatModel(seed=0), [calculator, clock])
    step = agent.invoke({"input": "What time is it in Sydney?", "intermediate_steps": []})
    assert isinstance(step, AgentAction)
    assert (step.tool, step.tool_input) == ("clock", {"timezone": "Australia/Sydney"})


def test_time_in_a_city_through_actloop_run_json() -> None:
    result = run_json("What time is it in Madrid?")
    (action, observation), *_ = result["intermediate_steps"]
    assert action["kwargs"]["tool"] == "clock"
    assert action["kwargs"]["tool_input"] == {"timezone": "Europe/Madrid"}
    assert observation.endswith(")") and "(Europe/Madrid, " in observation
    stamp = observation.split(" ", 1)[0]  # 2026-12-03T09:45:33+01:00
    assert datetime.fromisoformat(stamp).utcoffset() is not None
    assert stamp[11:16] in result["output"]  # the answer reports the tool's time and date
    assert stamp[:10] in result["output"]
