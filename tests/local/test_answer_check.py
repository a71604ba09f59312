"""The embedded agent's self-check of its final answers (`models/_local_check`): a number no tool
returned is never stated, and a clause said again right after itself is said once."""

from __future__ import annotations

from actloop.models._local_check import (
    UNSURE,
    check_answer,
    check_file_answer,
    numbers_in,
    without_repeats,
)


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
    assert without_repeats("Glad to help. See you soon! Glad to help. See you soon!") == (
        "Glad to help. See you soon!"
    )


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


TODO = "# Todo\n- water the plants\n- call the plumber\n"
CONFIG = "[server]\nport = 8042\nhost = garden.local\n"
LISTING = "README.md\nconfig.ini\nnotes/\nshopping.txt"


def test_a_file_answer_in_the_files_own_words_passes() -> None:
    question = "What is on the list in notes/todo.md?"
    answer = "The list says: water the plants and call the plumber."
    assert check_file_answer(answer, question, "read_file", "notes/todo.md", TODO) == answer
    port = "Which port is set in config.ini?"
    assert check_file_answer("The port is 8042.", port, "read_file", "config.ini", CONFIG) == (
        "The port is 8042."
    )


def test_a_file_answer_with_words_the_file_lacks_quotes_the_file() -> None:
    quoted = "notes/todo.md says: # Todo - water the plants - call the plumber"
    for answer in [
        "The todo list says: buy milk and water the plants.",  # `buy milk`: not in the file
        "The files here are: #Todo, #Todo lists: #Todo, #Todo lists: #Todo, #Todo lists: #Todo",
        "The notes/todo.md file is a list.",  # nothing of the file's own
    ]:
        assert check_file_answer(answer, "What is in notes/todo.md?", "read_file",
                                 "notes/todo.md", TODO) == quoted  # fmt: skip
    port = "Which port is set in config.ini?"
    answer = "The server is: [server] and the host is: garden.local."  # the port's line unsaid
    assert check_file_answer(answer, port, "read_file", "config.ini", CONFIG) == (
        "config.ini says: port = 8042"  # the line asked about, not the whole file
    )
    assert check_file_answer("It is empty.", "What is in a.txt?", "read_file", "a.txt", "") == (
        "a.txt is empty."
    )


def test_a_listing_answer_names_only_listed_entries_once() -> None:
    question = "Which files are here?"
    answer = "The files here are: README.md, config.ini and shopping.txt."
    assert check_file_answer(answer, question, "list_dir", ".", LISTING) == answer
    listed = "The files in this folder are: README.md, config.ini, notes/ and shopping.txt"
    invented = "The files here are: README.md, notes.txt and shopping.txt."
    twice = "The files here are: config.ini, config.ini."
    assert check_file_answer(invented, question, "list_dir", ".", LISTING) == listed
    assert check_file_answer(twice, question, "list_dir", ".", LISTING) == listed
    assert check_file_answer("Nothing.", "In notes?", "list_dir", "notes", "") == "notes is empty."


def test_whether_a_file_exists_is_answered_by_the_listing() -> None:
    answer = "The files here are: README.md."
    assert check_file_answer(
        answer, "Is there a file called shopping.txt here?", "list_dir", ".", LISTING
    ) == "Yes, shopping.txt is here."  # fmt: skip
    assert check_file_answer(
        answer, "Do I have a taxes.pdf?", "list_dir", ".", LISTING
    ) == "No, there is no taxes.pdf here."  # fmt: skip
    assert check_file_answer(
        answer, "Is there a todo.md in notes?", "list_dir", "notes", "todo.md"
    ) == "Yes, todo.md is in notes."  # fmt: skip


def test_a_file_answer_states_the_numbers_of_the_line_asked_about() -> None:
    book = "name,phone\nAunt May,555-0100\nthe landlord,555-0123\n"
    question = "How do I reach the landlord?"
    quoted = "phonebook.csv says: name,phone / the landlord,555-0123"
    for answer in ["The landlord's phone is 555-0100.", "Aunt May: 555-0100, the landlord."]:
        assert check_file_answer(answer, question, "read_file", "phonebook.csv", book) == quoted
    right = "The landlord has the phone 555-0123."
    assert check_file_answer(right, question, "read_file", "phonebook.csv", book) == right
