"""The embedded agent's self-check of a final answer: no number the tools did not return, no loop.

A 135M model copies a tool's result well but now and then writes a number of its own ("20% of 85"
-> `5`, a time an hour off) or repeats a clause until the length limit (`I'm sorry, I'm sorry,
...`). Before a final answer leaves the agent it is checked against what the run saw:
- every number it states must be in the tool's observation or the question (`30` and `30.0`
  are one number; a clock time's hours and minutes are numbers of the observation's timestamp),
  and when the last observation holds numbers the answer must state one of them (an answer that
  ignores the clock's time is no answer); else the answer is the observation itself, quoted, so
  nothing unchecked is stated;
- without a tool, an answer that states a number the question does not hold is replaced by one
  that says the model could not work it out (chat needs no numbers; a sum needs the calculator);
- a clause said again right after itself is said once;
- after read_file, every word of the answer must be the file's, the question's or one of the few
  words an answer is framed with (`says`, `contains`), a word may not come back more often than
  the file has it, and the answer must say something of the file beyond the question's words;
  after list_dir, every name it states must be one the listing has, each once, and a question
  whether a file exists is answered yes or no by the listing; else the answer is the file quoted
  (or the listing), since a 135M model reading `# Todo` looped on `#Todo lists`, and listing a
  folder named files that are not there.
The model still picks the tool, its arguments and the words of every answer that passes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["check_answer", "check_file_answer", "numbers_in", "without_repeats"]

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_REPEAT = re.compile(r"(\b[^.!?,;]{2,80}?[.!?,;])(?:\s*\1)+", re.IGNORECASE)
UNSURE = "I could not work that out reliably; please ask with the numbers written out."
"""The no-tool answer that stated a number of its own."""
_QUOTE_LIMIT = 200


def numbers_in(text: str) -> set[float]:
    """The numbers written in `text` (thousands separators read as such, `09` as 9)."""
    found: set[float] = set()
    for match in _NUMBER.findall(text):
        plain = match.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", match) else match
        for part in plain.split(","):  # "8,9" is two numbers
            try:
                found.add(float(part))
            except ValueError:
                continue
    return found


def without_repeats(answer: str) -> str:
    """`answer` with each clause that repeats right after itself said once, and a sentence
    said before (`I can help. I am here. I can help.`) left out."""
    answer = _REPEAT.sub(r"\1", answer).strip().rstrip(",;").strip()
    kept: list[str] = []
    seen: set[str] = set()
    for sentence in re.split(r"(?<=[.!?])\s+", answer):
        key = " ".join(_WORD.findall(sentence.lower()))
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(sentence)
    return " ".join(kept)


def _rounded(values: set[float]) -> set[float]:
    """The values and their roundings to 0-2 decimals (an answer may round `1.41421356`)."""
    return values | {round(v, d) for v in values for d in (0, 1, 2)}


def _result_last(answer: str, observations: Sequence[Any]) -> str:
    """A result that is one number (the calculator's) is the last number the answer states:
    `There are 210 minutes in 3.5 hours.` reads as 3.5 to whoever takes the last number, so it
    becomes `The answer is 210.`"""
    result = str(observations[-1]).strip() if observations else ""
    if not _NUMBER.fullmatch(result.lstrip("-")):
        return answer
    last = _NUMBER.findall(answer)
    if last and float(last[-1].replace(",", "")) in _rounded({abs(float(result))}):
        return answer
    shown = result.removesuffix(".0")
    return f"The answer is {shown}."


def check_answer(
    answer: str, question: str, observations: Sequence[Any], *, use_result: bool = True
) -> str:
    """The answer to give: `answer` without repeats if every number in it was seen, else an
    answer made of what the tools returned (or, with no tool, `UNSURE`). With `use_result`
    the answer must also state one of the last result's numbers (a file's need not be)."""
    answer = without_repeats(answer)
    seen = numbers_in(question)
    for observation in observations:
        seen |= numbers_in(str(observation))
    stated = numbers_in(answer)
    result: set[float] = numbers_in(str(observations[-1])) if observations else set()
    ignored = use_result and bool(result) and not stated & _rounded(result)  # numbers left out
    if stated <= _rounded(seen) and not ignored:
        return _result_last(answer, observations)
    if not observations:
        return UNSURE
    last = " ".join(str(observations[-1]).split())
    if len(last) > _QUOTE_LIMIT:
        last = last[: _QUOTE_LIMIT - 3] + "..."
    return f"The tool returned: {last}"


_WORD = re.compile(r"[a-z0-9]+")
_FRAME_WORDS = (
    "a an the is are it its this that these here there of in on at to for from with by as and "
    "or but file files folder directory says say said reads read contains contain holds hold "
    "has have lists list listed named called written text content contents line lines item "
    "items entry entries set sets value yes no not your you my me i which what whose about "
    "only one both also".split()
)
_FRAME = frozenset(_FRAME_WORDS) | {w.removesuffix("s") for w in _FRAME_WORDS}
"""Words an answer about a file may use that the file and the question need not hold (also as
`_words` reads them: `has` -> `ha`)."""
_REPEATS = 3
"""A word the answer says this many times more than the file does is a loop."""
_ENTRY = re.compile(r"[\w-]+(?:\.[\w-]+)+/?|[\w-]+/")
"""A file or folder name as an answer writes it: `todo.md`, `notes/`."""
_EXISTS = re.compile(r"\bis there\b|\bare there\b|\bdo i have\b|\bdo we have\b|\bexists?\b")


def _words(text: str) -> list[str]:
    return [w.removesuffix("s") for w in _WORD.findall(text.lower())]


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _QUOTE_LIMIT else flat[: _QUOTE_LIMIT - 3] + "..."


def _read_ok(answer: str, question: str, path: str, content: str) -> bool:
    """The answer's words are the file's, the question's or framing, none loops, and at least
    one of them is the file's own."""
    said, file_words = _words(answer), _words(content)
    known = set(file_words) | set(_words(question)) | set(_words(path)) | _FRAME
    if not set(said) <= known:
        return False
    if any(said.count(w) >= file_words.count(w) + _REPEATS for w in set(said)):
        return False
    asked = set(_words(question))
    own = set(file_words) - asked - _FRAME
    lines = _asked_lines(question, path, content)
    if lines and not numbers_in(answer) <= numbers_in("\n".join(lines)) | numbers_in(question):
        return False  # a number of another line: the plumber's phone for the electrician's
    return bool(own & set(said)) and _answers_the_lines(set(said), asked, lines)


def _asked_lines(question: str, path: str, content: str) -> list[str]:
    """The file's lines that hold a word of the question (`port = 8042` for "Which port ...?")
    other than the file's name."""
    asked = set(_words(question)) - _FRAME - set(_words(path))
    return [line for line in content.splitlines() if set(_words(line)) & asked]


def _answers_the_lines(said: set[str], asked: set[str], lines: list[str]) -> bool:
    """The lines the question asks about are answered: the answer states one of their other
    words, when they have any."""
    wanted: set[str] = set()
    for line in lines:
        wanted |= set(_words(line)) - asked - _FRAME
    return not wanted or bool(wanted & said)


def _quoted(question: str, path: str, content: str) -> str:
    """What a file answer quotes: the lines the question asks about (after a table's header),
    when they are some of the file's lines, else the whole file."""
    lines = [line for line in content.splitlines() if line.strip()]
    asked = _asked_lines(question, path, content)
    if not asked or len(asked) >= len(lines):
        return _quote(content)
    if "," in lines[0] and lines[0] not in asked:
        asked = [lines[0], *asked]  # a CSV's header says what the columns are
    return _quote(" / ".join(line.strip() for line in asked))


def _listing(answer: str, question: str, path: str, listing: str) -> str:
    """The listing's answer: the model's if every name it states is listed, each once."""
    entries = [e.strip() for e in listing.splitlines() if e.strip() and not e.startswith("[")]
    names = {e.rstrip("/") for e in entries}
    asked = [n for n in _ENTRY.findall(question) if _EXISTS.search(question.lower())]
    if asked:
        name = asked[-1].rstrip("/").rsplit("/", 1)[-1]
        where = "here" if path in (".", "") else f"in {path}"
        return f"Yes, {name} is {where}." if name in names else f"No, there is no {name} {where}."
    stated = [n.rstrip("/").rsplit("/", 1)[-1] for n in _ENTRY.findall(answer)]
    if stated and set(stated) <= names and len(stated) == len(set(stated)):
        return answer
    where = "this folder" if path in (".", "") else path
    if not entries:
        return f"{where} is empty." if path not in (".", "") else "This folder is empty."
    shown = ", ".join(entries[:-1]) + " and " + entries[-1] if len(entries) > 1 else entries[0]
    return f"The files in {where} are: {_quote(shown)}"


def check_file_answer(answer: str, question: str, tool: str, path: str, observation: str) -> str:
    """The answer to give after read_file or list_dir of `path`: the model's `answer` if it
    states only what the file (or listing) holds, else the file quoted (or the listing)."""
    answer = without_repeats(answer)
    if tool == "list_dir":
        return _listing(answer, question, path, observation)
    if _read_ok(answer, question, path, observation):
        return answer
    if not observation.strip():
        return f"{path} is empty."
    return f"{path} says: {_quoted(question, path, observation)}"
