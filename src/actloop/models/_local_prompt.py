"""The embedded model's agent prompt and reply schema: worked examples for every built-in tool.

A 135M-270M model copies patterns far better than it follows rules, so the prompt is mostly
worked runs (few-shot): one per built-in tool that is present, arithmetic in several shapes
(parentheses, powers, percentages, roots, a word problem), and greetings answered without a tool
and without numbers. The reply schema narrows what the model may write: the tool names, each
tool's arguments, for the clock one of the IANA time zones, written as its IANA name, its place
or country/place (`zone_places`: "Asia/Tokyo", "Tokyo", "Japan/Tokyo"; never a made-up zone), for
the file tools a path that exists under their root; a tool call is written arguments first (see
`_arguments_first`). The model still decides everything: which tool, which arguments, what to
answer.
"""

from __future__ import annotations

import json
import os
import zoneinfo
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from actloop.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

if TYPE_CHECKING:
    from actloop.prompts import ChatPromptTemplate
    from actloop.tools import BaseTool

__all__ = [
    "ANSWER_PATTERN",
    "CACHE_PREFIX",
    "agent_prompt",
    "final_schema",
    "iana_zones",
    "reply_schema",
    "root_paths",
    "tz_table",
    "zone_places",
]

CACHE_PREFIX = "cache_prefix"
"""`additional_kwargs` key marking the last message of a prompt's fixed prefix: the KV state up
to the end of that message's text is computed once and saved on disk (`_local_cache`)."""


Shot = tuple[str, str, dict[str, Any], str, str]
"""(question, tool, arguments, the tool's result, the final answer)."""

_SHOTS: list[Shot] = [
    (
        "What is (6 + 2) * 5?",
        "calculator",
        {"expression": "(6 + 2) * 5"},
        "40",
        "The answer is 40.",
    ),
    (
        "What is 20% of 150?",
        "calculator",
        {"expression": "20 / 100 * 150"},
        "30.0",
        "20% of 150 is 30.",
    ),
    (
        "What is 5 to the power of 3?",
        "calculator",
        {"expression": "5 ** 3"},
        "125",
        "The answer is 125.",
    ),
    (
        "What is the square root of 81?",
        "calculator",
        {"expression": "sqrt(81)"},
        "9.0",
        "The answer is 9.",
    ),
    (
        "Anna has 12 pens and gives away 5. How many pens does she have left?",
        "calculator",
        {"expression": "12 - 5"},
        "7",
        "Anna has 7 pens left.",
    ),
    (
        "What time is it in Berlin?",
        "clock",
        {"timezone": "Berlin"},
        "2026-01-15T09:30:12+01:00 (Europe/Berlin, Thursday)",
        "In Berlin it is 2026-01-15T09:30:12+01:00 (Thursday).",
    ),
    (
        "What time is it in Chicago?",
        "clock",
        {"timezone": "Chicago"},
        "2026-01-14T21:05:40-06:00 (America/Chicago, Wednesday)",
        "In Chicago it is 2026-01-14T21:05:40-06:00 (Wednesday).",
    ),
    (
        "What does the file notes.txt say?",
        "read_file",
        {"path": "notes.txt"},
        "Buy milk and bread.\n",
        "The file notes.txt says: 'Buy milk and bread.'",
    ),
    (
        "What is in docs/plan.md?",
        "read_file",
        {"path": "docs/plan.md"},
        "# Plan\n- paint the fence\n",
        "docs/plan.md says: '# Plan - paint the fence'.",
    ),
    (
        "Show me the file data.csv.",
        "read_file",
        {"path": "data.csv"},
        "name,age\nAda,36\n",
        "data.csv holds: 'name,age Ada,36'.",
    ),
    (
        "Which city is named in docs/guide.md?",
        "read_file",
        {"path": "docs/guide.md"},
        "Start in Lisbon.\n",
        "docs/guide.md names Lisbon: 'Start in Lisbon.'",
    ),
    (
        "Which color is set in style.cfg?",
        "read_file",
        {"path": "style.cfg"},
        "[theme]\ncolor = blue\nsize = 12\n",
        "style.cfg sets the color to blue: 'color = blue'.",
    ),
    (
        "Which files are here?",
        "list_dir",
        {"path": "."},
        "data.csv\ndocs/\nnotes.txt",
        "The files here are: data.csv, docs/ and notes.txt.",
    ),
    (
        "Which files are in the docs folder?",
        "list_dir",
        {"path": "docs"},
        "guide.md\nplan.md",
        "The docs folder has: guide.md and plan.md.",
    ),
]

_GREETINGS = [
    ("Hello!", "Hello! How can I help you today?"),
    ("How can you help me?", "I can {skills}."),
    ("Thanks, bye!", "You are welcome. Goodbye!"),
]

_SKILLS = {
    "calculator": "do arithmetic",
    "clock": "tell the time in any city",
    "read_file": "read files",
    "list_dir": "list folders",
}


_NARROW: dict[str, dict[str, dict[str, Any]]] = {
    "calculator": {"expression": {"type": "string", "pattern": "^[0-9a-z(-][0-9a-z+*/(). ,-]*$"}},
    "read_file": {"path": {"type": "string", "pattern": "^[A-Za-z0-9_./-]+$"}},
    "list_dir": {"path": {"type": "string", "pattern": "^[A-Za-z0-9_./-]+$"}},
}
"""Argument shapes of the built-in tools: an expression of numbers, operators and function
names (no `=`, no `%`, never empty), a path without spaces or quotes."""


def iana_zones() -> list[str]:
    """The IANA names the clock may be given: "UTC" and the `Area/Location` names of this
    system (`zone_places` adds the ways the model may write them)."""
    from actloop.tools.builtin._clock import IANA_AREAS

    names = {z for z in zoneinfo.available_timezones() if z.split("/", 1)[0] in IANA_AREAS}
    return ["UTC", *sorted(names)]


@cache
def zone_places() -> dict[str, str]:
    """The clock's choices as the model may write them, each -> its IANA name: the IANA name
    itself ("Asia/Tokyo"), the place ("Tokyo", "New York") and country/place ("Japan/Tokyo").

    A 135M model picks the IANA area badly: with only IANA names, asked for Sydney, Madrid or
    Cairo it wrote `America/` and then the closest American place (Sao_Paulo, Mazatlan,
    Cambridge_Bay). Asked for a city, its own first choice is the country ("Japan" for Tokyo,
    "Australia" for Sydney) or the place, which the question names and it copies well. The
    grammar keeps every spelling to the zones of `iana_zones` (countries from the tz database's
    `zone.tab`); the agent passes the tool the IANA name. A place in two zones (Istanbul) keeps
    the shorter name: such names are links to one zone.
    """
    zones = iana_zones()
    places: dict[str, str] = {}
    for name in sorted(zones, key=lambda z: (z.count("/"), z)):
        places.setdefault(_place(name), name)
    return places | _country_places(set(zones)) | {name: name for name in zones}


def _place(zone: str) -> str:
    return zone.rsplit("/", 1)[-1].replace("_", " ")


def _country_places(zones: set[str]) -> dict[str, str]:
    """ "Country/Place" -> IANA name, from the tz database's tables (empty if they are missing)."""
    countries: dict[str, str] = {}
    for code, name, *_ in tz_table("iso3166.tab"):
        countries[code] = name.split(" (", 1)[0]  # "Britain (UK)" -> "Britain"
    found: dict[str, str] = {}
    for code, _, zone, *_ in (row for row in tz_table("zone.tab") if len(row) >= 3):
        if code in countries and zone in zones:
            found.setdefault(f"{countries[code]}/{_place(zone)}", zone)
    return found


def tz_table(name: str) -> list[list[str]]:
    """Rows of a tz database table (`zone.tab`, `iso3166.tab`): the system's, else `tzdata`'s."""
    for folder in zoneinfo.TZPATH:
        path = Path(folder) / name
        if path.is_file():
            return _rows(path.read_text(encoding="utf-8"))
    try:
        from importlib.resources import files

        return _rows(files("tzdata.zoneinfo").joinpath(name).read_text(encoding="utf-8"))
    except (ImportError, OSError):
        return []


def _rows(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


_MAX_PATHS = 500
"""More entries than this under the file tools' root: paths are not listed in the grammar."""


def root_paths(root: str | os.PathLike[str] | None) -> tuple[list[str], list[str]] | None:
    """(files, folders) under `root`, relative, folders with "." first; None if too many.

    Like the clock's IANA names, they are the file tools' valid arguments: the grammar then
    lets the model name an existing file (the one the question names, typically) instead of
    copying `docs/plan.md` from a worked example. Hidden entries are left out.
    """
    if root is None or not Path(root).is_dir():
        return None
    base = Path(root)
    files: list[str] = []
    folders = ["."]
    for here, dirs, names in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel = Path(here).relative_to(base)
        folders += [(rel / d).as_posix() for d in dirs]
        files += [(rel / n).as_posix() for n in sorted(names) if not n.startswith(".")]
        if len(files) + len(folders) > _MAX_PATHS:
            return None
    return files, folders


def reply_schema(
    tools: Sequence[BaseTool], root: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """The JSON agent's reply schema: the clock's `timezone` limited to `zone_places`, and with
    `root` (the file tools' folder) `read_file` to its files and `list_dir` to its folders."""
    from actloop.json_agent import json_agent_schema

    schema = json_agent_schema(tools)
    zones = list(zone_places())
    paths = root_paths(root) if {"read_file", "list_dir"} & {t.name for t in tools} else None
    for reply in schema["oneOf"]:
        properties: dict[str, Any] = reply["properties"]
        reply["properties"] = properties = _arguments_first(properties)
        fields: dict[str, Any] = properties["action_input"].get("properties", {})
        for name, narrowed in _NARROW.get(properties["action"].get("const"), {}).items():
            if name in fields:
                fields[name] = narrowed
                properties["action_input"]["required"] = [name]
        if "timezone" in fields and properties["action"].get("const") == "clock" and zones:
            fields["timezone"] = {"enum": zones}
            properties["action_input"]["required"] = ["timezone"]
        tool = properties["action"].get("const")
        if paths and "path" in fields and tool in ("read_file", "list_dir"):
            choices = paths[0] if tool == "read_file" else paths[1]
            if choices:
                fields["path"] = {"enum": choices}
    return schema


def _arguments_first(properties: dict[str, Any]) -> dict[str, Any]:
    """A reply's properties with `action_input` before `action`.

    The model then writes the argument (a file name, an expression) or the answer before the
    tool's name, and picks the tool knowing its argument: measured on the file questions, SmolLM2
    chose `list_dir` for every "What does the file motto.txt say?" when the name came first.
    JSON key order does not matter to the parser; the grammar keeps the schema's order. The
    final answer after a tool's result keeps `action` first (`final_schema`): with every reply
    starting `{"action_input": "` in the worked runs, the model answered file questions itself
    instead of calling a tool; this way a question is followed by `{"action_input": {` in most
    of them and a direct answer only for chat.
    """
    first = {"action_input": properties["action_input"]}
    return first | {k: v for k, v in properties.items() if k != "action_input"}


ANSWER_PATTERN = r'^[^"\\\x00-\x1F]{0,150}[^"\\\x00-\x1F :]$'
"""A final answer: one line of up to 151 characters that does not stop at a colon or a space.
Quoting a file, SmolLM2 wrote "The recipe is: " and then the `"` that opens its quote, which
closes the JSON string: an empty answer. Here that `"` is refused and it goes on with the words."""


def final_schema() -> dict[str, Any]:
    """The reply schema once a tool has answered: the final answer only, `action` first."""
    return {
        "type": "object",
        "properties": {
            "action": {"const": "Final Answer"},
            "action_input": {"type": "string", "pattern": ANSWER_PATTERN},
        },
        "required": ["action", "action_input"],
    }


_USES = {
    "calculator": "the calculator for every calculation",
    "clock": "the clock for the time",
    "read_file": "read_file for what a file says",
    "list_dir": "list_dir for which files there are",
}


def _uses(tools: Sequence[BaseTool]) -> str:
    """ "Use X for Y, ..." naming the built-in tools that are present, then every other tool (an
    MCP server's, your own) by its name and what its description says it is for, so a question
    worded like that description reaches it as a built-in's does."""
    names = {t.name for t in tools}
    uses = [use for name, use in _USES.items() if name in names]
    uses += [f"{t.name} for {_purpose(t)}" for t in tools if t.name not in _USES]
    return f"Use {', '.join(uses)}. " if uses else ""


def _purpose(tool: BaseTool) -> str:
    """What a tool is for, from its description's first line: "Today's weather in a city." ->
    "today's weather in a city"."""
    line = (tool.description or tool.name).strip().splitlines()[0].rstrip(". ")
    return line[:1].lower() + line[1:] if line[:2] != line[:2].upper() else line


def _tool_lines(tools: Sequence[BaseTool]) -> str:
    lines: list[str] = []
    for tool in tools:
        args = {name: f"<{name}>" for name in tool.args}
        lines.append(f"- {tool.name}: {tool.description.splitlines()[0]} Input: {json.dumps(args)}")
    return "\n".join(lines)


def _turns(
    question: str, tool: str, args: dict[str, Any], result: str, answer: str
) -> list[BaseMessage]:
    call = {"action_input": args, "action": tool}  # arguments first: see `reply_schema`
    return [
        HumanMessage(f"Question: {question}"),
        AIMessage(json.dumps(call)),
        HumanMessage(f"Observation: {result}"),
        AIMessage(json.dumps({"action": "Final Answer", "action_input": answer})),
    ]


def _shots(tools: Sequence[BaseTool]) -> list[BaseMessage]:
    names = {t.name for t in tools}
    skills = [s for name, s in _SKILLS.items() if name in names]
    skills += [_purpose(t) for t in tools if t.name not in _SKILLS][:3]
    skills = skills or ["answer questions"]
    greeting, reply = _GREETINGS[0]
    who, about = _GREETINGS[1]
    about = about.format(
        skills=", ".join(skills[:-1]) + " and " + skills[-1] if len(skills) > 1 else skills[0]
    )
    chats = [HumanMessage(f"Question: {greeting}"), _final(reply)]
    last_chat = [HumanMessage(f"Question: {who}"), _final(about)]
    runs: list[BaseMessage] = []
    for shot in _SHOTS:
        if shot[1] in names:
            runs += _turns(*shot)
    if {"read_file", "list_dir"} & names:
        # file questions read like chat ("What does README.md say the project is?") and the
        # model follows the nearest worked runs most: with a chat run last it answered them
        # itself; with the file runs last it reads the file (files 6/18 -> 8/18 on the eval
        # and 5/12 -> 8/12 on held-out questions, seeds 0 and 1)
        return [*chats, *last_chat, *runs]
    return [*chats, *runs, *last_chat]  # a chat run last keeps greetings without a tool


def _final(answer: str) -> AIMessage:
    return AIMessage(json.dumps({"action_input": answer, "action": "Final Answer"}))


def agent_prompt(tools: Sequence[BaseTool]) -> ChatPromptTemplate:
    """A JSON-agent prompt tuned for tiny models: short rules plus worked runs (few-shot)."""
    from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder

    system = (
        "You are an assistant that answers questions by calling tools. "
        "Reply with exactly one JSON object and nothing else.\nTools:\n"
        f"{_tool_lines(tools)}\n"
        'To use a tool reply: {"action_input": {<its input>}, "action": "<tool>"}\n'
        'When you know the answer reply: {"action_input": "<answer>", "action": "Final Answer"}\n'
        'After the Observation reply: {"action": "Final Answer", "action_input": "<answer>"} '
        f"with the tool's result.\n{_uses(tools)}"
        "For a greeting or chat, answer directly without a tool and without numbers."
    )
    fixed: list[BaseMessage] = [SystemMessage(system), *_shots(tools)]
    fixed[-1].additional_kwargs[CACHE_PREFIX] = True  # its KV state is computed once, on disk
    return ChatPromptTemplate.from_messages(
        [*fixed, ("human", "Question: {input}"), MessagesPlaceholder("agent_scratchpad")]
    )
