#!/usr/bin/env python3
"""Eval of the embedded model's main job, run as a user runs it: `actloop run --json`.

Questions the built-in tools serve (arithmetic, the clock, files with `--tools read_file,list_dir`)
and plain chat that needs no tool, each scored by an exact check: the right number, the right hour
in that zone, the file's words, and for chat no tool call and no invented number. Every question
runs once per seed in a fresh process. Prints accuracy per category and wall time per question
(median), and writes `bench/out/eval_local.json`. It measures and reports; it asserts nothing.

    python bench/eval_local.py [--seeds 0,1,2] [--quick] [--model local] [--only arith,clock]
        [--set original|new|dev|all]

`--set new` runs the 42 plainly worded questions of issue 30, kept out of every prompt; `--set dev`
40 more written after the fact on a folder of other files (see `DEV`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

OUT = Path(__file__).resolve().parent / "out"

FILES = {
    "motto.txt": "Measure twice, cut once.\n",
    "shopping.txt": "eggs\nflour\nbutter\n",
    "notes/todo.md": "# Todo\n- water the plants\n- call the plumber\n",
    "README.md": "# Garden planner\nPlans the planting season for small gardens.\n",
    "config.ini": "[server]\nport = 8042\nhost = garden.local\n",
    "poem.txt": "The quiet river bends toward the sea.\n",
}


@dataclass(frozen=True)
class Question:
    """One question, its category and how its answer is checked."""

    category: str
    text: str
    check: Callable[[dict[str, object]], bool]
    tools: str = "calculator,clock"
    quick: bool = False
    expected: str = ""
    root: str = "main"
    """Which folder the file tools read: `FILES` ("main") or `DEV_FILES` ("dev")."""


# -- checks --------------------------------------------------------------------------------------

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def numbers_in(text: str) -> list[float]:
    """Every number written in `text` (thousands separators allowed)."""
    found: list[float] = []
    for match in _NUMBER.findall(text):
        try:
            found.append(float(match.replace(",", "")))
        except ValueError:
            continue
    return found


def number(expected: float, places: int = 2) -> Callable[[dict[str, object]], bool]:
    """The answer states `expected` (exactly for integers, to `places` decimals otherwise)."""

    def check(result: dict[str, object]) -> bool:
        tolerance = 0 if float(expected).is_integer() else 0.5 * 10**-places
        return any(
            math.isclose(n, expected, abs_tol=tolerance + 1e-9) for n in _answer_numbers(result)
        )

    return check


def _answer_numbers(result: dict[str, object]) -> list[float]:
    return numbers_in(str(result.get("output", "")))


_TIME = re.compile(r"(?<![+\-\d])(\d{1,2}):(\d{2})(?::\d{2})?\s*([AaPp]\.?[Mm]\.?)?")
"""A clock time; a UTC offset such as `+09:00` is not one."""


def hours_in(text: str) -> set[int]:
    """Hours (0-23) of the times written in `text`: `14:05`, `2:05 PM`, `T14:05:00`."""
    hours: set[int] = set()
    for hour_text, _, meridiem in _TIME.findall(text.replace("T", " ")):
        hour = int(hour_text)
        if meridiem:
            hour = hour % 12 + (12 if meridiem[0].lower() == "p" else 0)
        if hour < 24:
            hours.add(hour)
    return hours


def hour_in(zone: str) -> Callable[[dict[str, object]], bool]:
    """The answer states the current hour in `zone` (at the run's start or end)."""

    def check(result: dict[str, object]) -> bool:
        span = result.get("_span")
        assert isinstance(span, tuple)
        start, end = span
        right = {datetime.fromtimestamp(t, ZoneInfo(zone)).hour for t in (start, end)}
        return bool(hours_in(str(result.get("output", ""))) & right)

    return check


def words(*expected: str) -> Callable[[dict[str, object]], bool]:
    """The answer contains each of these words or phrases (case-insensitive)."""

    def check(result: dict[str, object]) -> bool:
        answer = str(result.get("output", "")).lower()
        return all(w.lower() in answer for w in expected)

    return check


def no_tool_no_number(result: dict[str, object]) -> bool:
    """Plain chat: no tool was called, and the answer has text but no invented number."""
    steps = result.get("intermediate_steps") or []
    answer = str(result.get("output", ""))
    return (
        not steps and answer.strip() != "" and not result.get("stopped") and not numbers_in(answer)
    )


# -- the questions -------------------------------------------------------------------------------

A, C, F, T = "arithmetic", "clock", "files", "chat"
_FILE_TOOLS = "read_file,list_dir"

QUESTIONS: list[Question] = [
    Question(A, "What is 12 * 7 + 5?", number(89), quick=True),
    Question(A, "What is 999 - 457?", number(542)),
    Question(A, "What is (7 + 8) * 4?", number(60), quick=True),
    Question(A, "What is (18 - 4) * 3?", number(42)),
    Question(A, "What is 2 to the power of 10?", number(1024)),
    Question(A, "What is 3 ** 4?", number(81)),
    Question(A, "What is 15% of 240?", number(36)),
    Question(A, "What is 8 percent of 50?", number(4)),
    Question(A, "What is the square root of 144?", number(12), quick=True),
    Question(A, "What is the square root of 2?", number(math.sqrt(2))),
    Question(A, "What is 1234 + 5678?", number(6912)),
    Question(A, "What is 144 / 12?", number(12)),
    Question(
        A, "Tom has 23 apples and buys 19 more. How many apples does he have now?", number(42)
    ),
    Question(A, "A book costs 12 dollars. How much do 7 books cost?", number(84)),
    Question(A, "I had 50 euros and spent 18. How many euros are left?", number(32)),
    Question(
        A, "A train travels 60 km per hour for 3 hours. How far does it go, in km?", number(180)
    ),
    Question(C, "What time is it in Tokyo?", hour_in("Asia/Tokyo"), quick=True),
    Question(C, "What time is it in London right now?", hour_in("Europe/London")),
    Question(C, "What is the time in New York?", hour_in("America/New_York")),
    Question(C, "What time is it in Paris?", hour_in("Europe/Paris")),
    Question(C, "What time is it in Sydney?", hour_in("Australia/Sydney")),
    Question(C, "What is the current time in UTC?", hour_in("UTC")),
    Question(C, "What time is it in Los Angeles?", hour_in("America/Los_Angeles")),
    Question(C, "What time is it in the Europe/Berlin time zone?", hour_in("Europe/Berlin")),
    Question(C, "Tell me the time in Asia/Kolkata.", hour_in("Asia/Kolkata")),
    Question(F, "What does the file motto.txt say?", words("measure twice"), _FILE_TOOLS, True),
    Question(F, "What is written in poem.txt?", words("quiet river"), _FILE_TOOLS),
    Question(
        F,
        "What is on my shopping list in shopping.txt?",
        words("eggs", "flour", "butter"),
        _FILE_TOOLS,
    ),
    Question(F, "What is in notes/todo.md?", words("plants", "plumber"), _FILE_TOOLS),
    Question(F, "Which port is set in config.ini?", number(8042), _FILE_TOOLS),
    Question(F, "What does README.md say the project is?", words("garden"), _FILE_TOOLS),
    Question(
        F,
        "Which files are in this folder?",
        words("motto.txt", "poem.txt", "config.ini"),
        _FILE_TOOLS,
        True,
    ),
    Question(F, "List the files in the notes folder.", words("todo.md"), _FILE_TOOLS),
    Question(F, "Is there a file called shopping.txt here?", words("yes"), _FILE_TOOLS),
    Question(T, "Hello, who are you?", no_tool_no_number, quick=True),
    Question(T, "Hi!", no_tool_no_number),
    Question(T, "Thank you for your help.", no_tool_no_number),
    Question(T, "What can you do?", no_tool_no_number),
    Question(T, "Good morning!", no_tool_no_number),
    Question(T, "Tell me a short joke.", no_tool_no_number),
    Question(T, "What is your name?", no_tool_no_number),
    Question(T, "Say goodbye politely.", no_tool_no_number),
]


# -- plainly worded questions (issue 30): all held out of the prompt ------------------------------
# Written the way people type: word problems with each/per/off/split/left, percentages, powers and
# roots in words, unit conversions, multi-word and non-English city names, files asked about
# without naming the tool, chat that must not loop. None of them (nor their numbers, cities or
# files) is in the prompt's worked runs (`models/_local_prompt.py`); checks are stricter than the
# original set's: the LAST number the answer states must be the right one, and a chat answer
# may not repeat a clause.


def last_number(expected: float, places: int = 2) -> Callable[[dict[str, object]], bool]:
    """The last number the answer states is `expected` (to `places` decimals)."""

    def check(result: dict[str, object]) -> bool:
        found = _answer_numbers(result)
        tolerance = 0 if float(expected).is_integer() else 0.5 * 10**-places
        return bool(found) and math.isclose(found[-1], expected, abs_tol=tolerance + 1e-9)

    return check


_CLAUSE = re.compile(r"[^.!?,;]{3,}[.!?,;]?")


def chat_no_loop(result: dict[str, object]) -> bool:
    """Chat: no tool, no number, and no clause said twice (`I'm sorry, I'm sorry, ...`)."""
    clauses = [c.strip().lower() for c in _CLAUSE.findall(str(result.get("output", "")))]
    return no_tool_no_number(result) and len(clauses) == len(set(clauses))


def no_time(result: dict[str, object]) -> bool:
    """A place the tz database does not know: the answer states no clock time."""
    return not hours_in(str(result.get("output", "")))


NEW: list[Question] = [
    Question(
        A, "If I split 96 cookies evenly among 8 kids, how many does each get?", last_number(12)
    ),
    Question(A, "What is 20% of 85?", last_number(17)),
    Question(A, "Calculate 7 squared minus 10.", last_number(39)),
    Question(A, "What is one quarter of 200?", last_number(50)),
    Question(A, "How many minutes are there in 3.5 hours?", last_number(210)),
    Question(A, "What is the cube of 4?", last_number(64)),
    Question(A, "I ran 5 km a day for 12 days. How far did I run in total?", last_number(60)),
    Question(A, "A shirt costs 40 dollars and is 25% off. How much do I save?", last_number(10)),
    Question(A, "Pencils cost 3 dollars each. How much are 14 pencils?", last_number(42)),
    Question(A, "A bus carries 45 people per trip. How many people in 6 trips?", last_number(270)),
    Question(A, "I had 120 dollars and spent 45. How much is left?", last_number(75)),
    Question(A, "What's 15 percent of 60?", last_number(9)),
    Question(A, "What is the square root of 169?", last_number(13)),
    Question(A, "What is 3 to the fifth power?", last_number(243)),
    Question(A, "How many seconds are in 2 hours?", last_number(7200)),
    Question(A, "How many grams are in 2.5 kilograms?", last_number(2500)),
    Question(
        A, "Split a 90 dollar bill between 3 friends. How much does each pay?", last_number(30)
    ),
    Question(A, "A jacket is 80 euros with 10% off. What is the new price?", last_number(72)),
    Question(C, "Could you tell me the time in Mexico City?", hour_in("America/Mexico_City")),
    Question(C, "What's the current time in New York?", hour_in("America/New_York")),
    Question(C, "What time is it in Dubai?", hour_in("Asia/Dubai")),
    Question(C, "What time is it in Seoul right now?", hour_in("Asia/Seoul")),
    Question(C, "Time in Buenos Aires please", hour_in("America/Argentina/Buenos_Aires")),
    Question(C, "What's the time in Sao Paulo?", hour_in("America/Sao_Paulo")),
    Question(C, "What time is it in Zürich?", hour_in("Europe/Zurich")),
    Question(C, "Is it morning in Hong Kong? What time is it there?", hour_in("Asia/Hong_Kong")),
    Question(C, "Do you know what time it is in Cairo?", hour_in("Africa/Cairo")),
    Question(C, "What time is it in Atlantis?", no_time),
    Question(F, "What's on my to-do list?", words("plants", "plumber"), _FILE_TOOLS),
    Question(F, "Remind me of the motto I saved.", words("measure twice"), _FILE_TOOLS),
    Question(F, "What do I need to buy?", words("eggs", "flour", "butter"), _FILE_TOOLS),
    Question(F, "Which host does the server config use?", words("garden.local"), _FILE_TOOLS),
    Question(F, "Read me the poem.", words("quiet river"), _FILE_TOOLS),
    Question(F, "Summarise README.md", words("garden"), _FILE_TOOLS),
    Question(F, "What's in the notes folder?", words("todo.md"), _FILE_TOOLS),
    Question(T, "Thanks for your help, goodbye!", chat_no_loop),
    Question(T, "How are you today?", chat_no_loop),
    Question(T, "Nice to meet you.", chat_no_loop),
    Question(T, "Can you help me?", chat_no_loop),
    Question(T, "Good night!", chat_no_loop),
    Question(T, "You're great, thanks.", chat_no_loop),
    Question(T, "Who made you?", chat_no_loop),
]
"""The 42 plainly worded questions: 18 arithmetic, 10 clock, 7 files, 7 chat."""


# -- a development set written after the fact (issue 30, second pass) -----------------------------
# Written after `NEW` had been measured and its failures fixed, as a stand-in for the held-out
# check's unseen questions: other numbers, cities (including places whose name is no tz zone and
# non-English spellings), a folder of other files asked about only indirectly (what to buy, what
# is planned, whom to call), and chat. The fixes it led to are general rules (word maps, the
# files' content, a city table), never these questions' words; see `bench/RESULTS.md`.

DEV_FILES = {
    "groceries.txt": "oat milk\napples\nbasmati rice\n",
    "weekend_plans.md": "# Weekend\nSaturday: hike to the lighthouse\nSunday: lunch with Grandma\n",
    "contacts.csv": "name,phone\nDr. Okafor,555-0142\nBob the electrician,555-0199\n",
    "wifi.txt": "network: HomeNet\npassword: sunflower42\n",
    "recipes/pancakes.txt": "Whisk flour, milk and two eggs. Fry in butter.\n",
    "meeting_notes.txt": "The design review moved to Thursday at 3 pm.\n",
    "budget.csv": "item,amount\nrent,950\nfood,310\n",
}

_DEV = "dev"
"""The `Question.root` of the questions that read `DEV_FILES`."""

DEV: list[Question] = [
    Question(A, "Each ticket costs 8 dollars. How much do 9 tickets cost?", last_number(72)),
    Question(A, "What's 30% of 250?", last_number(75)),
    Question(
        A,
        "If 3 friends split a 75 dollar dinner bill, how much does each one pay?",
        last_number(25),
    ),
    Question(A, "What is 9 cubed?", last_number(729)),
    Question(A, "What is the square root of 225?", last_number(15)),
    Question(A, "How many hours are in 3 days?", last_number(72)),
    Question(A, "Convert 5 kilometers to meters.", last_number(5000)),
    Question(A, "A phone costs 300 dollars and is 20% off. What do I pay?", last_number(240)),
    Question(A, "I baked 48 muffins and sold 29. How many are left?", last_number(19)),
    Question(A, "What is 2 to the 8th power?", last_number(256)),
    Question(A, "A car uses 6 liters per 100 km. How many liters for 300 km?", last_number(18)),
    Question(A, "What is half of 86?", last_number(43)),
    Question(A, "What's 17 times 23?", last_number(391)),
    Question(A, "How many centimeters are in 4.2 meters?", last_number(420)),
    Question(A, "I read 25 pages a day. How many pages in a week?", last_number(175)),
    Question(A, "What is 1000 minus 387?", last_number(613)),
    Question(C, "What time is it in Rio de Janeiro?", hour_in("America/Sao_Paulo")),
    Question(C, "Can you check the time in Beijing for me?", hour_in("Asia/Shanghai")),
    Question(C, "what time is it in los angeles", hour_in("America/Los_Angeles")),
    Question(C, "Current time in Ho Chi Minh City?", hour_in("Asia/Ho_Chi_Minh")),
    Question(C, "What time is it now in München?", hour_in("Europe/Berlin")),
    Question(C, "Tell me what time it is in San Francisco.", hour_in("America/Los_Angeles")),
    Question(C, "What's the local time in Reykjavik?", hour_in("Atlantic/Reykjavik")),
    Question(C, "What time is it in Mumbai right now?", hour_in("Asia/Kolkata")),
    Question(C, "What time is it in Narnia?", no_time),
    Question(C, "Is it late in Auckland? What's the time there?", hour_in("Pacific/Auckland")),
    Question(
        F, "What do I need to get from the store?", words("apples", "rice"), _FILE_TOOLS, root=_DEV
    ),
    Question(F, "What am I doing on Saturday?", words("lighthouse"), _FILE_TOOLS, root=_DEV),
    Question(F, "What's the electrician's number?", words("555-0199"), _FILE_TOOLS, root=_DEV),
    Question(F, "What is the wifi password?", words("sunflower42"), _FILE_TOOLS, root=_DEV),
    Question(F, "How do I make pancakes?", words("flour", "eggs"), _FILE_TOOLS, root=_DEV),
    Question(F, "When is the design review?", words("thursday"), _FILE_TOOLS, root=_DEV),
    Question(F, "How much do I spend on rent?", words("950"), _FILE_TOOLS, root=_DEV),
    Question(F, "What's in the recipes folder?", words("pancakes.txt"), _FILE_TOOLS, root=_DEV),
    Question(T, "Hey there!", chat_no_loop),
    Question(T, "Thanks a lot, see you tomorrow!", chat_no_loop),
    Question(T, "Are you a robot?", chat_no_loop),
    Question(T, "Have a nice day.", chat_no_loop),
    Question(T, "I'm feeling a bit tired today.", chat_no_loop),
    Question(T, "Sorry, I made a mistake.", chat_no_loop),
]
"""The 40 dev questions: 16 arithmetic, 10 clock, 8 files, 6 chat (written after the fact)."""

SETS = {"original": QUESTIONS, "new": NEW, "dev": DEV, "all": QUESTIONS + NEW}


SHORT = (
    "What is 12 * 7 + 5?",
    "What is the square root of 144?",
    "What time is it in London right now?",
    "Hello, who are you?",
)
"""The questions of the short eval in the tests (tests/local/test_eval_short.py)."""


# -- running -------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """One question run once."""

    category: str
    question: str
    seed: int
    correct: bool
    seconds: float
    cpu: float
    """CPU seconds (user + system) of the run's process: robust to a loaded machine."""
    output: str
    tools: list[str] = field(default_factory=lambda: list[str]())
    exit_code: int = 0


def make_root(folder: Path, files: dict[str, str] = FILES) -> Path:
    """The folder the file questions read (the same files every run)."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def run_one(question: Question, seed: int, root: Path, model: str, timeout: float = 300) -> Outcome:
    """`actloop run --json` in a fresh process, timed from start to exit."""
    command = [sys.executable, "-m", "actloop", "run", "--json", "--seed", str(seed)]
    command += ["--model", model, "--tools", question.tools]
    if question.tools == _FILE_TOOLS:
        command += ["--root", str(root)]
    command.append(question.text)
    start = time.time()
    before = _children_cpu()
    began = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=root)
    except subprocess.TimeoutExpired as exc:  # counts as wrong; the eval goes on
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
        done = subprocess.CompletedProcess(command, -9, out, "timed out")
    seconds = time.perf_counter() - began
    cpu = _children_cpu() - before
    try:
        result: dict[str, object] = json.loads(done.stdout)
    except ValueError:
        result = {"output": done.stdout + done.stderr}
    result["_span"] = (start, time.time())
    steps = result.get("intermediate_steps") or []
    tools = [str(s[0].get("kwargs", {}).get("tool")) for s in steps if isinstance(s, list)]  # type: ignore[union-attr]
    return Outcome(
        category=question.category,
        question=question.text,
        seed=seed,
        correct=done.returncode == 0 and question.check(result),
        seconds=seconds,
        cpu=cpu,
        output=str(result.get("output", ""))[:300],
        tools=tools,
        exit_code=done.returncode,
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_eval(
    questions: Sequence[Question], seeds: Sequence[int], model: str = "local", echo: bool = True
) -> list[Outcome]:
    """Every question once per seed; the file questions read a temp folder made here."""
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as folder:
        roots = {
            "main": make_root(Path(folder) / "main"),
            _DEV: make_root(Path(folder) / _DEV, DEV_FILES),
        }
        for seed in seeds:
            for question in questions:
                outcome = run_one(question, seed, roots[question.root], model)
                outcomes.append(outcome)
                if echo:
                    mark = "ok " if outcome.correct else "BAD"
                    shown = f"{question.text!r} -> {outcome.output[:90]!r} {outcome.tools}"
                    print(f"{mark} {outcome.seconds:5.2f}s s{seed} {shown}", flush=True)
    return outcomes


def summary(outcomes: Sequence[Outcome]) -> list[dict[str, object]]:
    """Per category (and all): right/total, accuracy and median seconds per question."""
    rows: list[dict[str, object]] = []
    categories = sorted({o.category for o in outcomes}, key=[A, C, F, T].index)
    for name, group in [(c, [o for o in outcomes if o.category == c]) for c in categories] + [
        ("all", list(outcomes))
    ]:
        right = sum(o.correct for o in group)
        times = [o.seconds for o in group]
        cpus = [o.cpu for o in group]
        rows.append(
            {
                "category": name,
                "right": right,
                "total": len(group),
                "accuracy": round(right / len(group), 3) if group else 0.0,
                "median_s": round(statistics.median(times), 2) if times else 0.0,
                "p90_s": round(sorted(times)[int(0.9 * (len(times) - 1))], 2) if times else 0.0,
                "median_cpu_s": round(statistics.median(cpus), 2) if cpus else 0.0,
            }
        )
    return rows


def table(rows: Sequence[dict[str, object]]) -> str:
    lines = [
        "| category | right | accuracy | median wall s | p90 wall s | median CPU s |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['category']} | {r['right']}/{r['total']} | {float(str(r['accuracy'])):.0%} "
            f"| {r['median_s']} | {r['p90_s']} | {r['median_cpu_s']} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--quick", action="store_true", help="one question per kind, seed 0")
    parser.add_argument("--model", default="local")
    parser.add_argument("--only", default="", help="categories, e.g. arithmetic,clock")
    parser.add_argument(
        "--set",
        choices=sorted(SETS),
        default="all",
        help="original, new (held out), dev (written after the fact) or all",
    )
    parser.add_argument("--out", default=str(OUT / "eval_local.json"))
    args = parser.parse_args(argv)
    chosen = SETS[args.set]
    questions = [q for q in chosen if q.quick] if args.quick else chosen
    if args.only:
        questions = [q for q in questions if q.category in args.only.split(",")]
    seeds = [0] if args.quick else [int(s) for s in args.seeds.split(",")]
    load = os.getloadavg()[0]
    outcomes = run_eval(questions, seeds, args.model)
    rows = summary(outcomes)
    after = os.getloadavg()[0]
    print(
        f"\n{len(questions)} questions ({args.set}) x seeds {seeds}, "
        f"load average {load:.1f} -> {after:.1f}"
    )
    print(table(rows))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps({"summary": rows, "outcomes": [o.__dict__ for o in outcomes]}, indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
