"""Arithmetic and places in words -> the tool call, for the embedded agent's first step.

SmolLM2-135M copies an expression it is shown well but builds one from words badly ("20% of 85"
-> `20 * 85 / 100 * 100`, "7 squared minus 10" -> `7 - 10`, "split 96 among 8" -> `96`). So
before the model is asked, a question whose arithmetic these rules read is turned into the
calculator call itself; the model then writes the answer from the tool's result, and the
self-check (`_local_check`) holds it to that result. The rules read:
- operator words: plus, minus, times, multiplied by, divided by, squared, cubed, to the power of,
  to the Nth power, square/cube root of, the square/cube of, half/a third/a quarter of;
- percentages: `P% of N`, `N ... P% off` (what you save, or the new price);
- unit conversions: `how many minutes in 3.5 hours`, `2.5 kilograms in grams` (time, length,
  mass, volume);
- two-number word problems: split/share/among (divide), per/each/a day (multiply), left/spent/
  gave away (subtract), more/in total/altogether (add).
A question none of them reads (no number, or numbers they cannot place) is left to the model.

Likewise a question about the time that names a place the tz database knows (`Mexico City`,
`Zürich`, `Asia/Seoul`) becomes the clock call for that zone: the model, asked, answered some
of them itself with a made-up time, or picked a zone of another continent. A place it does not
know (`Atlantis`) gets an answer that says so, instead of a wrong zone's time.

And a question about files that names one (`Summarise README.md`, `What's on my to-do list?` with
a `todo.md` there, `Read me the poem.` with a `poem.txt`) or a folder (`What's in the notes
folder?`, `Which files are here?`) becomes the read_file or list_dir call (`file_call`): asked,
the model answered some of them itself with made-up content, or read another file. A file is
named by its path, its name, or its name's stem as a word (`to-do` reads as `todo`); a question
whether a file exists lists its folder. A question that names no file it can place is left to
the model.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Mapping

__all__ = ["expression_for", "file_call", "place_for"]

_N = r"(\d+(?:\.\d+)?)"
_ORDINALS = {"second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
             "eighth": 8, "ninth": 9, "tenth": 10}  # fmt: skip
_FRACTIONS = {"half": "1 / 2", "a third": "1 / 3", "one third": "1 / 3", "a quarter": "1 / 4",
              "one quarter": "1 / 4", "a fifth": "1 / 5", "one fifth": "1 / 5"}  # fmt: skip
_UNITS: dict[str, tuple[str, float]] = {
    "second": ("time", 1), "minute": ("time", 60), "hour": ("time", 3600), "day": ("time", 86400),
    "week": ("time", 604800), "millimeter": ("length", 0.001), "centimeter": ("length", 0.01),
    "meter": ("length", 1), "kilometer": ("length", 1000), "km": ("length", 1000),
    "cm": ("length", 0.01), "mm": ("length", 0.001), "gram": ("mass", 1),
    "kilogram": ("mass", 1000), "kg": ("mass", 1000), "milliliter": ("volume", 0.001),
    "ml": ("volume", 0.001), "liter": ("volume", 1), "litre": ("volume", 1),
}  # fmt: skip
_UNIT = r"([a-z]+)\b"


def _unit(word: str) -> tuple[str, float] | None:
    word = word.replace("metre", "meter")
    return _UNITS.get(word) or _UNITS.get(word.removesuffix("s"))


def _conversion(text: str) -> str | None:
    """`how many minutes are in 3.5 hours`, `2.5 kilograms in grams`: N * factor."""
    asked = re.search(rf"how many {_UNIT} (?:are )?(?:there )?(?:in|is) {_N} {_UNIT}", text)
    if asked:
        to, value, frm = asked.groups()
    else:
        given = re.search(rf"{_N} {_UNIT} (?:in|to|into) {_UNIT}", text)
        if not given:
            return None
        value, frm, to = given.groups()
    a, b = _unit(frm), _unit(to)
    if a is None or b is None or a[0] != b[0] or a == b:
        return None
    factor = a[1] / b[1]
    if factor >= 1:
        return f"{value} * {factor:g}"
    return f"{value} / {1 / factor:g}"


def _rewrite(text: str) -> str:
    """Operator words as operators (`7 squared minus 10` -> `7 ** 2 - 10`)."""
    text = re.sub(rf"(?:the )?square root of {_N}", r"sqrt(\1)", text)
    text = re.sub(rf"(?:the )?cube root of {_N}", r"\1 ** (1 / 3)", text)
    text = re.sub(rf"(?:the )?square of {_N}", r"\1 ** 2", text)
    text = re.sub(rf"(?:the )?cube of {_N}", r"\1 ** 3", text)
    text = re.sub(rf"{_N} (?:to the )?(\w+) power", lambda m: _power(m), text)
    text = re.sub(r"\bto the power of\b|\braised to\b", "**", text)
    for word, fraction in _FRACTIONS.items():
        text = re.sub(rf"\b{word} of {_N}", rf"{fraction} * \1", text)
    text = re.sub(rf"{_N}\s*(?:%|percent|per cent) of {_N}", r"\1 / 100 * \2", text)
    replacements = [(r"\bsquared\b", "** 2"), (r"\bcubed\b", "** 3"), (r"\bplus\b", "+"),
                    (r"\bminus\b", "-"), (r"\btimes\b|\bmultiplied by\b", "*"),
                    (r"\bdivided by\b|\bover\b", "/")]  # fmt: skip
    for pattern, operator in replacements:
        text = re.sub(pattern, operator, text)
    return text


def _power(match: re.Match[str]) -> str:
    base, word = match.groups()
    exponent = _ORDINALS.get(word) or (
        word[:-2] if re.fullmatch(r"\d+(?:st|nd|rd|th)", word) else None
    )
    return f"{base} ** {exponent}" if exponent else match.group(0)


_SPAN = re.compile(r"(?:sqrt)?[\d(][\d\s.+\-*/()a-z]*[\d)]")


def _written(text: str) -> str | None:
    """The arithmetic span of a rewritten question, if it holds an operator and parses."""
    for span in sorted(_SPAN.findall(text), key=len, reverse=True):
        span = re.sub(r"\b(?!sqrt\b)[a-z]+\b", " ", span).strip()
        span = " ".join(span.split())
        if re.search(r"[+\-*/]|sqrt\(", span) and _parses(span):
            return span
    return None


def _parses(expression: str) -> bool:
    try:
        ast.parse(expression, mode="eval")
    except SyntaxError:
        return False
    return True


def _discount(text: str, numbers: list[str]) -> str | None:
    """`costs 40 dollars and is 25% off`: the saving, or the new price."""
    off = re.search(rf"{_N}\s*(?:%|percent) off", text)
    if not off or len(numbers) != 2:
        return None
    percent = off.group(1)
    price = numbers[0] if numbers[1] == percent else numbers[1]
    if re.search(r"\bsave|\bdiscount\b|\bhow much off\b", text):
        return f"{price} * {percent} / 100"
    return f"{price} * (100 - {percent}) / 100"


_DIVIDE = re.compile(r"\bsplit|\bshare|\bamong|\bbetween|\bevenly|\bdivide")
_MULTIPLY = re.compile(r"\bper\b|\beach\b|\ba day\b|\ban hour\b|\ba week\b|\bevery\b|\bcosts?\b")
_SUBTRACT = re.compile(
    r"\bleft\b|\bspent\b|\bspend\b|\bgave away\b|\bgives away\b|\bate\b|\blost\b|\bremain"
)
_ADD = re.compile(r"\bmore\b|\bin total\b|\baltogether\b|\bcombined\b")


def _word_problem(text: str, numbers: list[str]) -> str | None:
    """Two numbers and a word that says what to do with them."""
    if len(numbers) != 2:
        return None
    a, b = numbers
    if _DIVIDE.search(text):
        return f"{a} / {b}"
    if _SUBTRACT.search(text):
        return f"{a} - {b}"
    if _ADD.search(text) and not _MULTIPLY.search(text):
        return f"{a} + {b}"
    if _MULTIPLY.search(text):
        return f"{a} * {b}"
    return None


def expression_for(question: str) -> str | None:
    """The calculator expression the question asks for, or None when the rules cannot tell."""
    text = " ".join(question.lower().replace(",", "").split())
    numbers: list[str] = re.findall(_N, text)
    if not numbers:
        return None
    for rule in (_conversion(text), _discount(text, numbers)):
        if rule:
            return rule
    written = _written(_rewrite(text))
    if written:
        return written
    return _word_problem(text, numbers)


_ASKS_TIME = re.compile(r"\btime\b|\bclock\b|\bwhat hour\b")
_IN_PLACE = re.compile(r"\b(?:in|at|for)\s+((?:the\s+)?[A-Z][\w'.-]*(?:[ /][A-Z][\w'.-]*)*)")


def _plain(text: str) -> str:
    """Lower case without accents (`Zürich` -> `zurich`, `São Paulo` -> `sao paulo`)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def place_for(question: str, places: Mapping[str, str]) -> tuple[str | None, str | None]:
    """For a question about the time: (the IANA zone of the place it names, None), or (None,
    the place it names that no zone has), or (None, None) when it asks no such thing."""
    if not _ASKS_TIME.search(question.lower()):
        return None, None
    text = f" {_plain(question)} "
    best = ""
    for place in places:
        if "/" in place and place != places[place]:
            continue  # Country/Place spellings: the model's, not the question's
        key = _plain(place)
        if len(key) > len(best) and re.search(rf"(?<![\w/]){re.escape(key)}(?![\w/])", text):
            best = place
    if best:
        return places[best], None
    named = _IN_PLACE.search(question)
    return None, (named.group(1).removeprefix("the ").strip(" .?!") if named else None)


_EXISTS = re.compile(r"\bis there\b|\bare there\b|\bdo i have\b|\bdo we have\b|\bexists?\b")
_FOLDER_WORD = r"(?:folder|directory|dir)"
_LISTING = re.compile(
    r"\b(?:which|what|list|show)(?: the| all| my)? files\b|\bfiles (?:are )?(?:here|in this)\b"
    rf"|\bwhat(?:'s| is) in (?:this|the current) {_FOLDER_WORD}\b"
    rf"|\blist (?:this|the) {_FOLDER_WORD}\b"
)
_STEM_STOP = frozenset({"file", "files", "folder", "text", "data", "the", "and", "new", "old"})


def _named(text: str, name: str) -> bool:
    """`name` occurs in `text` as a whole word or path (not inside a longer one)."""
    return re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/-]|\.\w)", text) is not None


def _stems(path: str) -> set[str]:
    """The words of a file's name without its extension: `notes/to_do-list.md` -> to, do, list,
    to_do-list, todo, todolist (joined words, as people write `to-do` or `todo`)."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0].lower()
    parts = [p for p in re.split(r"[_\-\s]+", stem) if p]
    return {stem, "".join(parts), *parts} - _STEM_STOP


def _question_words(text: str) -> set[str]:
    """The question's words, hyphenated ones also joined (`to-do` -> todo) and singular."""
    found: set[str] = set()
    for word in re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text):
        for form in {word, word.replace("-", "")}:
            found |= {form, form.removesuffix("s")}
    return {w for w in found if len(w) >= 3}


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


def file_call(question: str, files: list[str], folders: list[str]) -> tuple[str, str] | None:
    """The file tool call the question asks for, given the files and folders under the root:
    ("read_file", a file it names), ("list_dir", a folder it names or asks about), or None when
    it names none of them."""
    text = " ".join(question.lower().split())
    exists = _EXISTS.search(text) is not None
    for path in sorted(files, key=len, reverse=True):  # `notes/todo.md` before `todo.md`
        if _named(text, path.lower()):
            return ("list_dir", _parent(path)) if exists else ("read_file", path)
    names = [f for f in files if _named(text, f.rsplit("/", 1)[-1].lower())]
    if len(names) == 1:
        return ("list_dir", _parent(names[0])) if exists else ("read_file", names[0])
    for folder in sorted(folders, key=len, reverse=True):
        name = re.escape(folder.lower().rsplit("/", 1)[-1])
        if folder != "." and re.search(
            rf"\b{name} {_FOLDER_WORD}\b|\b{_FOLDER_WORD} {name}\b|\b{re.escape(folder.lower())}/",
            text,
        ):
            return "list_dir", folder
    if _LISTING.search(text) or exists:
        return "list_dir", "."
    words = _question_words(text)
    scored = sorted(((len(_stems(f) & words), f) for f in files), reverse=True)
    if scored and scored[0][0] and (len(scored) == 1 or scored[1][0] < scored[0][0]):
        return "read_file", scored[0][1]
    return None
