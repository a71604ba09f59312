"""Arithmetic and places in words become the embedded agent's first tool call
(`models/_local_words`); what the rules cannot read is left to the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from actloop.agents import AgentAction, AgentFinish
from actloop.models._local_prompt import zone_places
from actloop.models._local_words import expression_for, file_call, place_for
from actloop.models.local import LocalChatModel, local_json_agent
from actloop.tools.builtin import get_builtin_tools
from actloop.tools.builtin._calculator import calculate

FILES = ["README.md", "budget-2026.csv", "docs/guide.md", "notes/to_do.md", "recipe.txt"]
FOLDERS = [".", "docs", "notes"]


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


@pytest.mark.parametrize(
    ("question", "call"),
    [
        ("Summarise README.md", ("read_file", "README.md")),
        ("what does readme.md say?", ("read_file", "README.md")),
        ("What is in docs/guide.md?", ("read_file", "docs/guide.md")),
        ("Open guide.md for me.", ("read_file", "docs/guide.md")),
        ("What's left on my to-do list?", ("read_file", "notes/to_do.md")),
        ("Which ingredients does the recipe need?", ("read_file", "recipe.txt")),
        ("How much did the budget plan for food?", ("read_file", "budget-2026.csv")),
        ("What's in the notes folder?", ("list_dir", "notes")),
        ("Show me the docs directory.", ("list_dir", "docs")),
        ("Which files are here?", ("list_dir", ".")),
        ("List all files in this folder.", ("list_dir", ".")),
        ("Is there a file called recipe.txt here?", ("list_dir", ".")),
        ("Do I have a guide.md?", ("list_dir", "docs")),
        ("Is there a file named taxes.pdf?", ("list_dir", ".")),
    ],
)
def test_a_file_or_folder_in_words_becomes_the_file_tools_call(
    question: str, call: tuple[str, str]
) -> None:
    assert file_call(question, FILES, FOLDERS) == call


@pytest.mark.parametrize(
    "question",
    ["Hello, who are you?", "What do I need to buy?", "Read me something nice.",
     "Is the guide older than the recipe?"],
)  # fmt: skip
def test_a_question_naming_no_file_or_folder_is_left_to_the_model(question: str) -> None:
    assert file_call(question, FILES, FOLDERS) is None


def test_the_agent_reads_the_file_a_question_names_without_asking_the_model(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "to_do.md").write_text("- water the plants\n")
    tools = get_builtin_tools(["read_file", "list_dir"], root=tmp_path)
    agent = local_json_agent(LocalChatModel(seed=0), tools, tmp_path)
    step = agent.invoke({"input": "What's on my to-do list?", "intermediate_steps": []})
    assert step == AgentAction(
        "read_file",
        {"path": "notes/to_do.md"},
        '{"action_input": {"path": "notes/to_do.md"}, "action": "read_file"}',
    )
    listing = agent.invoke({"input": "What's in the notes folder?", "intermediate_steps": []})
    assert listing == AgentAction(
        "list_dir", {"path": "notes"}, '{"action_input": {"path": "notes"}, "action": "list_dir"}'
    )
