"""Arithmetic and places in words become the embedded agent's first tool call
(`models/_local_words`); what the rules cannot read is left to the model."""

from __future__ import annotations

import pytest

from actloop.agents import AgentAction, AgentFinish
from actloop.models._local_prompt import zone_places
from actloop.models._local_words import expression_for, place_for
from actloop.models.local import LocalChatModel, local_json_agent
from actloop.tools.builtin import get_builtin_tools
from actloop.tools.builtin._calculator import calculate


@pytest.mark.parametrize(
    ("question", "expression", "value"),
    [
        ("If I split 96 cookies evenly among 8 kids, how many does each get?", "96 / 8", "12"),
        ("What is 20% of 85?", "20 / 100 * 85", "17"),
        ("Calculate 7 squared minus 10.", "7 ** 2 - 10", "39"),
        ("What is one quarter of 200?", "1 / 4 * 200", "50"),
        ("How many minutes are there in 3.5 hours?", "3.5 * 60", "210"),
        ("What is the cube of 4?", "4 ** 3", "64"),
        ("I ran 5 km a day for 12 days. How far did I run in total?", "5 * 12", "60"),
        ("A shirt costs 40 dollars and is 25% off. How much do I save?", "40 * 25 / 100", "10"),
        (
            "A jacket is 80 euros with 10% off. What is the new price?",
            "80 * (100 - 10) / 100",
            "72",
        ),
        ("What is the square root of 169?", "sqrt(169)", "13"),
        ("What is 3 to the fifth power?", "3 ** 5", "243"),
        ("How many grams are in 2.5 kilograms?", "2.5 * 1000", "2500"),
        ("I had 120 dollars and spent 45. How much is left?", "120 - 45", "75"),
        ("What is (7 + 8) * 4?", "(7 + 8) * 4", "60"),
    ],
)
def test_arithmetic_in_words_becomes_an_expression(
    question: str, expression: str, value: str
) -> None:
    assert expression_for(question) == expression
    assert calculate(expression) == value


@pytest.mark.parametrize(
    "question",
    ["Hello!", "What time is it in Tokyo?", "Is 7 a prime number?", "Set a timer for 10 minutes",
     "Which port is set in config.ini?", "What is in notes/todo.md?"],
)  # fmt: skip
def test_what_the_rules_cannot_read_is_left_to_the_model(question: str) -> None:
    assert expression_for(question) is None


def test_a_place_becomes_its_zone_and_an_unknown_place_is_named() -> None:
    places = zone_places()
    assert place_for("Could you tell me the time in Mexico City?", places) == (
        "America/Mexico_City", None,
    )  # fmt: skip
    assert place_for("What time is it in Zürich?", places) == ("Europe/Zurich", None)
    assert place_for("What's the time in São Paulo?", places) == ("America/Sao_Paulo", None)
    assert place_for("What time is it in Atlantis?", places) == (None, "Atlantis")
    assert place_for("What is 12 * 7?", places) == (None, None)


def test_the_agent_takes_the_worded_call_without_asking_the_model() -> None:
    tools = get_builtin_tools(["calculator", "clock"])
    agent = local_json_agent(LocalChatModel(seed=0), tools)
    step = agent.invoke({"input": "What is 20% of 85?", "intermediate_steps": []})
    assert step == AgentAction(
        "calculator",
        {"expression": "20 / 100 * 85"},
        '{"action_input": {"expression": "20 / 100 * 85"}, "action": "calculator"}',
    )
    unknown = agent.invoke({"input": "What time is it in Atlantis?", "intermediate_steps": []})
    assert isinstance(unknown, AgentFinish)
    assert unknown.return_values == {
        "output": "I do not know the time zone of Atlantis; "
        "name a city or an IANA zone such as Europe/Paris."
    }
