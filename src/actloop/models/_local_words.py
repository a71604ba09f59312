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
import os
import re
from collections.abc import Mapping
from pathlib import Path

from actloop.models._local_places import city_zone, country_zones, plain

__all__ = ["expression_for", "file_call", "place_for", "place_named"]

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
    "year": ("time", 31536000), "inch": ("length", 0.0254), "inche": ("length", 0.0254),
    "foot": ("length", 0.3048), "feet": ("length", 0.3048), "yard": ("length", 0.9144),
    "mile": ("length", 1609.344), "pound": ("mass", 453.59237), "lb": ("mass", 453.59237),
    "ounce": ("mass", 28.349523125), "oz": ("mass", 28.349523125),
    "gallon": ("volume", 3.785411784),
    "tonne": ("mass", 1_000_000), "ton": ("mass", 1_000_000),
}  # fmt: skip
_UNIT = r"([a-z]+)\b"


def _unit(word: str) -> tuple[str, float] | None:
    word = word.replace("metre", "meter")
    return _UNITS.get(word) or _UNITS.get(word.removesuffix("s"))


def _temperature(text: str) -> str | None:
    """`30 degrees celsius in fahrenheit`, `100 f to c`."""
    found = re.search(
        rf"{_N} ?(?:degrees? |°)?(c|f|celsius|fahrenheit)\b.*?\b(?:in|to|into|as)\s+"
        r"(?:degrees? )?(c|f|celsius|fahrenheit)\b",
        text,
    )
    if not found or found.group(2)[0] == found.group(3)[0]:
        return None
    value, frm = found.group(1), found.group(2)[0]
    return f"{value} * 9 / 5 + 32" if frm == "c" else f"({value} - 32) * 5 / 9"


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


_PHRASES: list[tuple[str, str]] = [
    (rf"subtract {_N} from {_N}", r"\2 - \1"),
    (rf"take {_N} (?:away )?from {_N}", r"\2 - \1"),
    (rf"{_N} (?:less|fewer) than {_N}", r"\2 - \1"),
    (rf"{_N} more than {_N}", r"\2 + \1"),
    (rf"add {_N} (?:and|to) {_N}", r"\1 + \2"),
    (rf"multiply {_N} (?:by|and|with) {_N}", r"\1 * \2"),
    (rf"divide {_N} by {_N}", r"\1 / \2"),
    (rf"(?:the )?product of {_N} and {_N}", r"\1 * \2"),
    (rf"(?:the )?(?:remainder|modulo|mod) (?:when |of )?{_N} (?:is )?divided by {_N}", r"\1 % \2"),
    (rf"{_N} (?:mod|modulo) {_N}", r"\1 % \2"),
    (rf"{_N} factorial|factorial of {_N}", r"factorial(\1\2)"),
    (rf"\b(?:double|twice) {_N}", r"2 * \1"),
    (rf"\btriple {_N}", r"3 * \1"),
    (rf"{_N} ?(?:x|×) ?{_N}", r"\1 * \2"),
    (r"\^", " ** "),
]
"""Phrases that say an operation with its operands (`subtract 7 from 20` -> `20 - 7`)."""

_DENOMINATORS = {"half": 2, "halve": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5,
                 "sixth": 6, "eighth": 8, "tenth": 10}  # fmt: skip


def _lists(text: str) -> str:
    """`the sum of 12, 15 and 30`, `the average of 4, 8 and 12`, `the difference between 50 and
    18` (the larger first), `3 quarters of 80`, `15% more than 80`, `what percent is 15 of 60`."""
    series = rf"{_N}((?:,? (?:and )?\d+(?:\.\d+)?)+)"

    def listed(match: re.Match[str]) -> list[str]:
        return [match.group(2), *re.findall(_N, match.group(3))]

    def total(match: re.Match[str]) -> str:
        return " + ".join(listed(match))

    def average(match: re.Match[str]) -> str:
        items = listed(match)
        return f"({' + '.join(items)}) / {len(items)}"

    text = re.sub(rf"(?:the )?(sum|total) of {series}", total, text)
    text = re.sub(rf"(?:the )?(average|mean) of {series}", average, text)
    text = re.sub(
        rf"(?:the )?difference between {_N} and {_N}",
        lambda m: f"{max(m.groups(), key=float)} - {min(m.groups(), key=float)}",
        text,
    )
    text = re.sub(
        rf"\b{_N} ({'|'.join(_DENOMINATORS)})s? of {_N}",
        lambda m: f"{m.group(1)} / {_DENOMINATORS[m.group(2)]} * {m.group(3)}",
        text,
    )
    percent = r"\s*(?:%|percent|per cent)"
    text = re.sub(rf"{_N}{percent} (?:more than|on top of) {_N}", r"\2 * (100 + \1) / 100", text)
    text = re.sub(rf"{_N}{percent} less than {_N}", r"\2 * (100 - \1) / 100", text)
    text = re.sub(rf"increase {_N} by {_N}{percent}", r"\1 * (100 + \2) / 100", text)
    text = re.sub(rf"(?:decrease|reduce) {_N} by {_N}{percent}", r"\1 * (100 - \2) / 100", text)
    text = re.sub(
        rf"what percent(?:age)? (?:is|of) {_N} (?:is )?(?:of|out of) {_N}", r"\1 / \2 * 100", text
    )
    text = re.sub(rf"{_N} ?/ ?{_N} as a percent(?:age)?", r"\1 / \2 * 100", text)
    text = re.sub(rf"{_N} out of {_N} as a percent(?:age)?", r"\1 / \2 * 100", text)
    return text


def _rewrite(text: str) -> str:
    """Operator words as operators (`7 squared minus 10` -> `7 ** 2 - 10`)."""
    text = _lists(text)
    for pattern, replacement in _PHRASES:
        text = re.sub(pattern, replacement, text)
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


_SPAN = re.compile(r"(?:sqrt|factorial)?[\d(][\d\s.+\-*/%()a-z]*[\d)]")


def _written(text: str) -> str | None:
    """The arithmetic span of a rewritten question, if it holds an operator and parses."""
    for span in sorted(_SPAN.findall(text), key=len, reverse=True):
        span = re.sub(r"\b(?!sqrt\b|factorial\b)[a-z]+\b", " ", span).strip()
        span = " ".join(span.split())
        if re.search(r"[+\-*/%]|sqrt\(|factorial\(", span) and _parses(span):
            return span
    return None


def _parses(expression: str) -> bool:
    try:
        ast.parse(expression, mode="eval")
    except SyntaxError:
        return False
    return True


def _discount(text: str, numbers: list[str]) -> str | None:
    """`costs 40 dollars and is 25% off`: the saving, or the new price; `a meal costs 50
    dollars, I tip 20%`: the tip (or, asked for the total, the price with it)."""
    off = re.search(rf"{_N}\s*(?:%|percent) off", text)
    if not off and len(numbers) == 2:
        return _surcharge(text, numbers)
    if not off or len(numbers) != 2:
        return None
    percent = off.group(1)
    price = numbers[0] if numbers[1] == percent else numbers[1]
    if re.search(r"\bsave|\bdiscount\b|\bhow much off\b", text):
        return f"{price} * {percent} / 100"
    return f"{price} * (100 - {percent}) / 100"


def _surcharge(text: str, numbers: list[str]) -> str | None:
    """A price and a tip, tax or interest in percent: the amount, or the total with it."""
    rate = re.search(rf"{_N}\s*(?:%|percent)", text)
    if not rate or not re.search(r"\btip|\btax|\binterest|\bcommission|\bservice", text):
        return None
    price = numbers[0] if numbers[1] == rate.group(1) else numbers[1]
    if re.search(
        r"\btotal\b|\baltogether\b|\bin all\b|\bincluding\b|\bwith (?:the )?(?:tip|tax)", text
    ):
        return f"{price} * (100 + {rate.group(1)}) / 100"
    return f"{price} * {rate.group(1)} / 100"


_DIVIDE = re.compile(r"\bsplit|\bshare|\bamong|\bbetween|\bevenly|\bdivide")
_MULTIPLY = re.compile(r"\bper\b|\beach\b|\ba day\b|\ban hour\b|\ba week\b|\bevery\b|\bcosts?\b")
_SUBTRACT = re.compile(
    r"\bleft\b|\bspent\b|\bspend\b|\bgave away\b|\bgives away\b|\bate\b|\blost\b|\bremain"
)
_ADD = re.compile(
    r"\bmore\b|\bin total\b|\baltogether\b|\bcombined\b|\bolder\b|\btaller\b|\blonger\b"
    r"|\bheavier\b|\blater\b|\bgains?\b|\bgot\b|\breceived?\b|\bfinds?\b|\bfound\b"
)
_LESS = re.compile(r"\byounger\b|\bshorter\b|\blighter\b|\bfewer\b|\bless\b|\bcheaper\b")
_CONTAIN = re.compile(
    r"\bhas\b|\bhave\b|\bholds?\b|\bcontains?\b|\bwith\b|\bin (?:a|one|each)\b"
    r"|\bbuys?\b|\bbought\b|\borders?\b|\bpacks? of\b|\bboxes of\b|\bbags? of\b"
)
_ASKS_SHARE = re.compile(
    r"how many [a-z ]*?\b(?:per|in each|for each|each)\b"
    r"|\beach (?:one )?(?:gets?|receives?|pays?|has|have)\b"
)


def _word_problem(text: str, numbers: list[str]) -> str | None:
    """Two numbers and a word that says what to do with them."""
    if len(numbers) != 2:
        return None
    a, b = numbers
    larger, smaller = (a, b) if float(a) >= float(b) else (b, a)
    if _DIVIDE.search(text) or _ASKS_SHARE.search(_last_sentence(text)):
        return f"{larger} / {smaller}"  # the total is split, whichever is named first
    if _SUBTRACT.search(text) or _LESS.search(text):
        return f"{a} - {b}"
    if _ADD.search(text) and not _MULTIPLY.search(text):
        return f"{a} + {b}"
    if _MULTIPLY.search(text) or _CONTAIN.search(text):
        return f"{a} * {b}"
    return None


def _last_sentence(text: str) -> str:
    """The question of a word problem: its last sentence (`How many students per group?`)."""
    parts = [p for p in re.split(r"(?<=[.!?])\s+", text.strip()) if p]
    return parts[-1] if parts else text


_SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
          "fifteen sixteen seventeen eighteen nineteen").split()  # fmt: skip
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_VALUES = {w: i for i, w in enumerate(_SMALL)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "dozen": 12}
_NUMBER_WORDS = re.compile(
    r"\b(?:(?:a|an) (?=(?:hundred|thousand|million|dozen)\b))?"
    rf"(?:(?:{'|'.join(_WORD_VALUES)}|{'|'.join(_SCALES)})(?:[ -]|\b(?=\W|$)))+"
)


_ONE_OPERAND = re.compile(
    r"(?:plus|minus|times|by|over|of|than) one\b|\bone (?:plus|minus|times|divided|multiplied)\b"
)
"""`one` next to an operator word: a number (`what is one plus one`)."""


def _digits(text: str) -> str:
    """Numbers written in words as digits: `four` -> 4, `twenty-five` -> 25, `two hundred and
    fifty` -> 250, `a dozen` -> 12; `one` before a fraction word (`one quarter of`) stays."""
    text = re.sub(r"\b(hundred|thousand) and (?=[a-z])", r"\1 ", text)
    text = re.sub(r"(\d+) dozen\b", r"\1 * 12", text)

    def value(match: re.Match[str]) -> str:
        words = match.group(0).replace("-", " ").split()
        if words == ["one"] and not _ONE_OPERAND.search(text, max(0, match.start() - 12)):
            return match.group(0)  # `each one`, `one quarter of`: not a number to compute with
        total = current = 0
        for word in words:
            if word in ("a", "an"):
                current = 1
            elif word in _SCALES:
                current = max(current, 1) * _SCALES[word]
                if _SCALES[word] >= 1000:
                    total, current = total + current, 0
            else:
                current += _WORD_VALUES[word]
        trail = " " if match.group(0).endswith((" ", "-")) else ""
        return f"{total + current}{trail}"

    return _NUMBER_WORDS.sub(value, text)


def expression_for(question: str) -> str | None:
    """The calculator expression the question asks for, or None when the rules cannot tell."""
    text = _digits(" ".join(question.lower().replace(",", "").split()))
    numbers: list[str] = re.findall(_N, text)
    if not numbers:
        return None
    for rule in (_temperature(text), _conversion(text), _discount(text, numbers)):
        if rule:
            return rule
    written = _written(_rewrite(text))
    if written:
        return written
    return _rate(text, numbers) or _per_period(text, numbers) or _word_problem(text, numbers)


_PERIOD = r"(second|minute|hour|day|week)"
_COUNT_WORDS = {"a": "1", "an": "1", "one": "1", "two": "2", "three": "3", "four": "4"}


def _per_period(text: str, numbers: list[str]) -> str | None:
    """`25 pages a day ... in a week`, `3 km per hour for 2 days`: a rate times a span of
    another length of time (a * span / period)."""
    rate = re.search(rf"{_N} [a-z ]*?(?:a|an|per|each|every) {_PERIOD}\b", text)
    span = re.search(
        rf"\b(?:in|for|over|after) (a|an|one|two|three|four|{_N[1:-1]}) {_PERIOD}s?\b", text
    )
    if not rate or not span or len(numbers) > 2:
        return None
    amount, period = rate.groups()
    count, unit = _COUNT_WORDS.get(span.group(1), span.group(1)), span.group(2)
    if unit == period or (count != "1" and count not in numbers):
        return None
    ratio = _UNITS[unit][1] / _UNITS[period][1]
    span_text = f"{count} * {ratio:g}" if count != "1" else f"{ratio:g}"
    return f"{amount} * {span_text}"


def _rate(text: str, numbers: list[str]) -> str | None:
    """`6 liters per 100 km ... for 300 km`: a rate per N units applied to M units, a * m / n."""
    rate = re.search(rf"{_N} ?{_UNIT} (?:per|every|for each|each) {_N} ?{_UNIT}", text)
    if not rate or len(numbers) != 3:
        return None
    amount, _, per, unit = rate.groups()
    rest = [n for n in numbers if n not in (amount, per)]
    if len(rest) != 1 or not re.search(rf"{re.escape(rest[0])} ?{re.escape(unit)}", text):
        return None
    return f"{amount} * {rest[0]} / {per}"


_ASKS_TIME = re.compile(
    r"\bwhat time\b|\bthe time\b|\btime is it\b|\bcurrent time\b|\btime now\b|\blocal time\b"
    r"|^time\b|\btime (?:in|at|over)\b|\bclock\b|\bwhat hour\b|\bwhat day is\b"
    r"|\bwhat(?:'s| is) (?:the |today's )?date\b|\btoday's date\b"
    r"|\bis it (?:night|morning|daytime|day|evening|afternoon|late|early|midnight|dark)\b"
)
"""A question about the time or date (not `thanks for your time`, `take your time`)."""
_ANY_PLACE = re.compile(r"\b(?:in|at|for)\s+((?:[^\W\d_][\w'.-]*\s*){1,4})")
_FILLER = frozenset(
    "the a right now please today currently here there me us moment this morning afternoon "
    "evening tonight zone time".split()
)
"""Words after `in` that name no place (`in the moment`, `right now`)."""
_IN_PLACE = re.compile(r"\b(?:in|at|for)\s+((?:the\s+)?[A-Z][\w'.-]*(?:[ /][A-Z][\w'.-]*)*)")


_plain = plain


def place_named(question: str, places: Mapping[str, str]) -> tuple[str, str] | None:
    """(the place, its IANA zone) for the place a question names: a zone's own place or name
    (`places`: "Mexico City", "Asia/Seoul"; the longest that occurs), else a country or a city
    named after `in`/`at`/`for` (`_local_places`: "Japan", "Beijing"), else None."""
    text = f" {_plain(question)} "
    best = ""
    for place in places:
        if ("/" in place and place != places[place]) or _plain(place) in _NOT_PLACES:
            continue  # Country/Place spellings: the model's, not the question's
        key = _plain(place)
        if len(key) > len(best) and re.search(rf"(?<![\w/]){re.escape(key)}(?![\w/])", text):
            best = place
    found = (best, places[best]) if best else None
    for after in re.finditer(r"\b(?:in|at|for)\s+((?:[^\W\d_][\w'.-]*\s*){1,4})", question):
        words = after.group(1).split()
        for count in range(len(words), 0, -1):
            name = " ".join(words[:count]).strip(" .,'?!")
            key = _plain(name).removeprefix("the ")
            if len(key) <= len(best):
                break  # a zone's own place as long or longer is named
            if key in _NOT_PLACES:
                continue
            zone = country_zones().get(key) or (city_zone(key) if len(key) > 2 else None)
            if zone is not None and zone in places:
                return name, zone
    return found


_NOT_PLACES = frozenset({"north", "south", "east", "west", "central"})
"""Old zone names (`Australia/South`) that are words of a place ("South Korea"), not places."""


def place_for(question: str, places: Mapping[str, str]) -> tuple[str | None, str | None]:
    """For a question about the time: (the IANA zone of the place it names, None), or (None,
    the place it names that no zone has), ("UTC", None) when it names none, or (None, None)
    when it asks no such thing."""
    if not _ASKS_TIME.search(question.lower()):
        return None, None
    named = place_named(question, places)
    if named is not None:
        return named[1], None
    unknown = _IN_PLACE.search(question)
    if unknown:
        return None, unknown.group(1).removeprefix("the ").strip(" .?!")
    for after in _ANY_PLACE.finditer(question):
        words = [w.strip(".,?!'") for w in after.group(1).split()]
        while words and words[-1].lower() in _FILLER:
            words.pop()
        while words and words[0].lower() in _FILLER:
            words.pop(0)
        if words:
            return None, " ".join(words)
    if re.search(r"\bthere\b", question.lower()):
        return None, None  # `over there`: a place named earlier, which the model may know
    return "UTC", None  # no place named: the clock's own default


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
    found: set[str] = {"todo"} if re.search(r"\bto do\b", text) else set()
    for word in re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text):
        for form in {word, word.replace("-", "")}:
            found |= {form, form.removesuffix("s")}
    return {w for w in found if len(w) >= 3}


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


def file_call(
    question: str,
    files: list[str],
    folders: list[str],
    root: str | os.PathLike[str] | None = None,
) -> tuple[str, str] | None:
    """The file tool call the question asks for, given the files and folders under the root:
    ("read_file", a file it names, or the one its topic or words point to: see `_best_file`),
    ("list_dir", a folder it names or asks about), or None when nothing points to one file."""
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
    best = _best_file(text, files, root)
    return ("read_file", best) if best is not None else None


def _best_file(text: str, files: list[str], root: str | os.PathLike[str] | None) -> str | None:
    """The one file the question's words point to most, if one does: a word of its name (2
    points: `poem` -> poem.txt), a name its topic calls for (1: "what do I need to buy?" ->
    groceries.txt, see `_TOPICS`), a word of its text (1 each: "when is the design review?" ->
    the notes that mention a design review), a folder of its path (1: `party/guests.txt` for
    "who is coming to the party?"). A tie is no answer: the model then picks."""
    words = _question_words(text)
    topical = _topic_names(words)
    asked = words - _COMMON
    scores: list[tuple[int, str]] = []
    for path in files:
        stems = _stems(path)
        folders = {f.lower() for f in path.split("/")[:-1]} - _STEM_STOP
        score = 2 * len(stems & words) + len(stems & topical - words) + len(folders & words)
        score += len(asked & _file_words(root, path)) if root is not None else 0
        scores.append((score, path))
    scores.sort(reverse=True)
    if scores and scores[0][0] and (len(scores) == 1 or scores[1][0] < scores[0][0]):
        return scores[0][1]
    return None


_TOPICS: list[tuple[str, str]] = [
    ("buy purchase shop shopping store supermarket market grocery groceries errand",
     "shopping shop grocery groceries buy store market errands"),
    ("plan planned planning plans schedule agenda weekend monday tuesday "
     "wednesday thursday friday saturday sunday tomorrow tonight week",
     "plan plans planning schedule agenda calendar weekend itinerary events week"),
    ("call phone number contact email reach ring text dial",
     "contact contacts phone phones phonebook addressbook people numbers"),
    ("password wifi login network pin username",
     "wifi password passwords credentials network login secrets"),
    ("cook make bake recipe ingredient dinner lunch breakfast meal",
     "recipe recipes cooking cookbook meal meals menu"),
    ("meeting meet appointment review standup interview",
     "meeting meetings calendar agenda appointments schedule minutes"),
    ("spend spent cost money budget expense pay paid rent bill price owe salary",
     "budget expenses expense finance finances money bills costs spending accounts"),
    ("todo task chore remind reminder remember",
     "todo tasks task chores reminders"),
    ("birthday anniversary", "birthdays birthday calendar dates"),
    ("guest invite invited coming come attend attending party rsvp",
     "guests guest invitations invites invitees rsvp attendees"),
    ("quote motto saying slogan", "quote quotes motto sayings"),
    ("book novel reading", "books reading library booklist"),
    ("movie film watch show series", "movies films watchlist shows"),
    ("song music listen playlist album", "songs playlist music"),
    ("gift present wish wishlist", "gifts presents wishlist wishes"),
    ("pack packing trip travel flight hotel vacation holiday",
     "packing travel trip itinerary flight flights hotel vacation holiday"),
    ("address live lives", "addresses address contacts"),
    ("medicine medication pill dose doctor", "medications medicine health pills"),
    ("idea brainstorm", "ideas brainstorm"),
    ("goal resolution", "goals resolutions"),
    ("workout exercise gym training", "workout workouts exercise training fitness gym"),
    ("server port host setting settings configured option",
     "config configuration settings conf ini env options"),
    ("project about summary summarise summarize describe overview",
     "readme about overview summary"),
    ("poem poetry verse", "poem poems poetry"),
    ("log error crash failure", "log logs errors"),
]  # fmt: skip
"""(words of a question, words of the file names it may mean): everyday topics a file's name
says and a question only implies. Singular forms: question words lose a final `s`."""

_COMMON = frozenset(
    "what whats which who whom whose when where why how the and for are was were is isn't "
    "you your yours my mine our ours me i we they them their this that these those there here "
    "have has had having do does did doing done can could would should will shall may might "
    "must need want get got give tell show let know say says said please about with from into "
    "onto than then just also any some all each every much many more most one two not yes no "
    "file files folder list read today now time make made use used like".split()
)
"""Words too common to point to a file by its text."""

_MAX_READ = 64_000
"""Bytes of a file read for its words; larger files are skipped (their name still counts)."""


def _topic_names(words: set[str]) -> set[str]:
    """The file-name words the question's topics call for (see `_TOPICS`)."""
    names: set[str] = set()
    for asked, named in _TOPICS:
        if words & set(asked.split()):
            names |= {n.removesuffix("s") for n in named.split()} | set(named.split())
    return names


def _file_words(root: str | os.PathLike[str], path: str) -> set[str]:
    """The words of a small text file under `root` (singular too), empty if it cannot be read."""
    try:
        full = Path(root) / path
        if full.stat().st_size > _MAX_READ:
            return set()
        text = full.read_text(encoding="utf-8").lower()
    except (OSError, UnicodeDecodeError):
        return set()
    return _question_words(text)
