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
- a clause said again right after itself is said once.
The model still picks the tool, its arguments and the words of every answer that passes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["check_answer", "numbers_in", "without_repeats"]

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
    """`answer` with each clause that repeats right after itself said once."""
    return _REPEAT.sub(r"\1", answer).strip().rstrip(",;").strip()


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


def check_answer(answer: str, question: str, observations: Sequence[Any]) -> str:
    """The answer to give: `answer` without repeats if every number in it was seen, else an
    answer made of what the tools returned (or, with no tool, `UNSURE`)."""
    answer = without_repeats(answer)
    seen = numbers_in(question)
    for observation in observations:
        seen |= numbers_in(str(observation))
    stated = numbers_in(answer)
    result: set[float] = numbers_in(str(observations[-1])) if observations else set()
    ignored = bool(result) and not stated & _rounded(result)  # the tool's numbers left out
    if stated <= _rounded(seen) and not ignored:
        return _result_last(answer, observations)
    if not observations:
        return UNSURE
    last = " ".join(str(observations[-1]).split())
    if len(last) > _QUOTE_LIMIT:
        last = last[: _QUOTE_LIMIT - 3] + "..."
    return f"The tool returned: {last}"
