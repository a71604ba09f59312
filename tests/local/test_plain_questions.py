"""Plainly worded questions (issue 30, second pass): rates and spans of time in word problems,
places whose name is no zone's (countries, cities by any of their names), files a question only
implies, and the answer to a calculator or clock result written without the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from actloop.agents import AgentAction, AgentFinish
from actloop.models._local_places import city_zone, country_zones
from actloop.models._local_prompt import root_paths, zone_places
from actloop.models._local_words import expression_for, file_call, place_for
from actloop.models.local import LocalChatModel, local_json_agent
from actloop.tools.builtin import get_builtin_tools
from actloop.tools.builtin._calculator import calculate


@pytest.mark.parametrize(
    ("question", "expression", "value"),
    [
        ("Four of us share a 52 euro taxi. What does each pay?", "52 / 4", "13"),
        ("If 4 cousins split 90 marbles, how many does each one get?", "90 / 4", "22.5"),
        ("What is twenty-one times three?", "21 * 3", "63"),
        ("What is a hundred minus one?", "100 - 1", "99"),
        ("Mugs are $7. If I buy 5, what do I pay?", "7 * 5", "35"),
        ("I bought 3 bags of 20 apples. How many apples?", "3 * 20", "60"),
        ("Split 7 pizzas between 2 people.", "7 / 2", "3.5"),
        ("A printer uses 3 cartridges per 1000 pages. How many for 4000 pages?",
         "3 * 4000 / 1000", "12"),
        ("I drink 2 liters of water a day. How much in a week?", "2 * 7", "14"),
        ("A fan spins 90 times a minute. How many spins in an hour?", "90 * 60", "5400"),
        ("I save 12 dollars a week. How much after 10 weeks?", "12 * 10", "120"),
        ("We walk 4 km an hour. How far do we get in 3 hours?", "4 * 3", "12"),
    ],
)  # fmt: skip
def test_shares_rates_and_spans_of_time(
    question: str, expression: str | None, value: str | None
) -> None:
    assert expression_for(question) == expression
    if expression is not None:
        assert calculate(expression) == value


@pytest.mark.parametrize(
    ("question", "zone"),
    [
        ("What's the time in Shanghai?", "Asia/Shanghai"),
        ("what time is it in south korea", "Asia/Seoul"),
        ("What time is it in the UK right now?", "Europe/London"),
        ("Time in Iceland?", "Atlantic/Reykjavik"),
        ("What time is it in Bangalore?", "Asia/Kolkata"),
        ("Could you check the time in Köln for me?", "Europe/Berlin"),
        ("What time is it in Seattle?", "America/Los_Angeles"),
        ("Tell me the time in Barcelona, please.", "Europe/Madrid"),
        ("Is it night in Texas right now?", "America/Chicago"),
        ("What time is it in LA?", "America/Los_Angeles"),
        ("What's the time in Pékin?", "Asia/Shanghai"),
    ],
)
def test_countries_and_cities_whose_name_is_no_zone_get_their_zone(
    question: str, zone: str
) -> None:
    assert place_for(question, zone_places()) == (zone, None)


def test_a_made_up_place_is_still_named_unknown() -> None:
    assert place_for("What time is it in Gondor?", zone_places()) == (None, "Gondor")
    assert city_zone("Gondor") is None
    assert country_zones()["japan"] == "Asia/Tokyo"
    assert "korea" not in country_zones()  # two countries: the question must say which


MY_FILES = {
    "shopping list.txt": "bread\ncheese\n",
    "trip/itinerary.md": "Day 1: Lisbon\nDay 2: Porto\n",
    "phonebook.csv": "name,phone\nAunt May,555-0100\nthe landlord,555-0123\n",
    "notes.txt": "The car goes to the garage on Friday.\n",
    "ideas.md": "- a treehouse\n",
    "wedding/seating.txt": "Table 1: Ana, Bo\n",
}


def _my_folder(tmp_path: Path) -> Path:
    for name, text in MY_FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("question", "path"),
    [
        ("What should I pick up at the supermarket?", "shopping list.txt"),
        ("Where am I going on holiday?", "trip/itinerary.md"),
        ("How do I reach the landlord?", "phonebook.csv"),
        ("When does the car go to the garage?", "notes.txt"),
        ("What was that treehouse thing?", "ideas.md"),
        ("Where does everyone sit at the wedding?", "wedding/seating.txt"),
    ],
)
def test_a_file_the_question_only_implies_is_read(tmp_path: Path, question: str, path: str) -> None:
    root = _my_folder(tmp_path)
    paths = root_paths(root)
    assert paths is not None
    assert file_call(question, *paths, root=root) == ("read_file", path)


@pytest.mark.parametrize("question", ["Hello there!", "How are you doing?", "Thanks a lot."])
def test_chat_points_to_no_file(tmp_path: Path, question: str) -> None:
    root = _my_folder(tmp_path)
    paths = root_paths(root)
    assert paths is not None
    assert file_call(question, *paths, root=root) is None


def _step(tool: str, arguments: dict[str, str]) -> AgentAction:
    return AgentAction(tool, arguments, "")


def test_a_calculator_or_clock_result_is_answered_without_the_model() -> None:
    agent = local_json_agent(LocalChatModel(seed=0), get_builtin_tools(["calculator", "clock"]))
    sum_step = (_step("calculator", {"expression": "52 / 4"}), "13.0")
    done = agent.invoke(
        {"input": "Four of us share a 52 euro taxi.", "intermediate_steps": [sum_step]}
    )
    assert isinstance(done, AgentFinish)
    assert done.return_values == {"output": "The answer is 13."}
    clock = (
        _step("clock", {"timezone": "Asia/Shanghai"}),
        "2026-03-01T07:05:09+08:00 (Asia/Shanghai, Sunday)",
    )
    done = agent.invoke({"input": "What's the time in Beijing?", "intermediate_steps": [clock]})
    assert isinstance(done, AgentFinish)
    assert done.return_values == {
        "output": "In Beijing (Asia/Shanghai) it is 07:05 on Sunday, 2026-03-01."
    }
    own = (
        _step("clock", {"timezone": "Asia/Tokyo"}),
        "2026-03-01T08:05:09+09:00 (Asia/Tokyo, Sunday)",
    )
    done = agent.invoke({"input": "And in Tokyo, what time?", "intermediate_steps": [own]})
    assert isinstance(done, AgentFinish)
    assert done.return_values == {"output": "In Tokyo it is 08:05 on Sunday, 2026-03-01."}


@pytest.mark.parametrize(
    ("question", "found"),
    [
        ("What time is it right now?", ("UTC", None)),
        ("What's the date today?", ("UTC", None)),
        ("what time is it in lothlorien", (None, "lothlorien")),
        ("Thanks for your time!", (None, None)),
        ("Take your time, no rush.", (None, None)),
        ("And what time is it over there?", (None, None)),
    ],
)
def test_a_time_question_naming_no_place_reads_utc(
    question: str, found: tuple[str | None, str | None]
) -> None:
    assert place_for(question, zone_places()) == found
