"""The embedded agent's self-check of its final answers (`models/_local_check`): a number no tool
returned is never stated, and a clause said again right after itself is said once."""

from __future__ import annotations

from actloop.models._local_check import UNSURE, check_answer, numbers_in, without_repeats


def test_numbers_are_read_as_people_write_them() -> None:
    assert numbers_in("2026-12-04T04:10:00+09:00, 1,234 and 8.5") == {
        2026.0, 12.0, 4.0, 10.0, 0.0, 9.0, 1234.0, 8.5,
    }  # fmt: skip


def test_an_answer_whose_numbers_the_tool_returned_passes() -> None:
    question = "A shirt costs 40 dollars and is 25% off. How much do I save?"
    assert check_answer("You save 10 dollars.", question, ["10.0"]) == "You save 10 dollars."
    assert (
        check_answer("It is about 1.41.", "sqrt 2", ["1.4142135623730951"]) == "It is about 1.41."
    )


def test_a_number_no_tool_returned_gives_the_observation_instead() -> None:
    question = "A shirt costs 40 dollars and is 25% off. How much do I save?"
    assert check_answer("You save 625 dollars.", question, ["10.0"]) == "The tool returned: 10.0"
    clock = "2026-12-04T04:10:00+09:00 (Asia/Tokyo, Friday)"
    assert check_answer("It is 3:10 in Tokyo.", "time in Tokyo?", [clock]) == (
        f"The tool returned: {clock}"
    )


def test_without_a_tool_an_invented_number_is_not_stated() -> None:
    assert check_answer("-3 and 70", "Calculate 7 squared minus 10.", []) == UNSURE
    assert check_answer("Hello! How can I help?", "Hi!", []) == "Hello! How can I help?"


def test_a_looping_answer_is_said_once() -> None:
    assert without_repeats("I'm sorry, I'm sorry, I'm sorry, I'm sorry,") == "I'm sorry"
    assert check_answer("The answer is 60. I am 60. I am 60.", "5 km for 12 days", [60]) == (
        "The answer is 60. I am 60."
    )
    assert without_repeats("eggs, flour, butter.") == "eggs, flour, butter."


def test_the_calculators_result_is_the_last_number_stated() -> None:
    question = "How many minutes are there in 3.5 hours?"
    assert check_answer("There are 210 minutes in 3.5 hours.", question, ["210"]) == (
        "The answer is 210."
    )
    assert check_answer("3.5 hours are 210 minutes.", question, ["210"]) == (
        "3.5 hours are 210 minutes."
    )


def test_an_answer_that_ignores_the_tools_numbers_gives_the_observation() -> None:
    clock = "2026-12-03T14:04:25-06:00 (America/Mexico_City, Thursday)"
    answer = "I can do arithmetic and tell the time in any city."
    assert check_answer(answer, "the time in Mexico City?", [clock]) == (
        f"The tool returned: {clock}"
    )
    assert check_answer("The host is garden.local.", "host?", ["host = garden.local\n"]) == (
        "The host is garden.local."
    )
