"""Pure logic of the built-in tools: calculator, confined file access, clock."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actloop.tools.builtin._calculator import CalculatorError, calculate
from actloop.tools.builtin._clock import ClockError, now
from actloop.tools.builtin._files import (
    FileToolError,
    _open_inside,  # pyright: ignore[reportPrivateUsage]
    list_dir,
    read_file,
)

LIVENESS = 30.0
"""Seconds a hostile input may take before we call the tool hung. A liveness guard, not a speed
claim: each input is refused before any real work (computed, it would take hours or never end).
Their speed is measured in `bench/hostile.py`."""


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    try:
        call()
    except ValueError:
        pass
    return time.perf_counter() - start


# --- calculator -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1 + 2", "3"),
        ("2 * (3 + 4) ** 2", "98"),
        ("7 - 10", "-3"),
        ("24 / 2", "12"),
        ("7 / 2", "3.5"),
        ("7 // 2", "3"),
        ("-7 // 2", "-4"),
        ("-7 % 3", "2"),
        ("5.5 % 2", "1.5"),
        ("2 ** 10", "1024"),
        ("2 ** -1", "0.5"),
        ("2 ** 0.5", "1.4142135623731"),
        ("-2 ** 2", "-4"),
        ("(-2) ** 2", "4"),
        ("--+-3", "-3"),
        ("0.1 + 0.2", "0.3"),
        ("1 / 3", "0.333333333333333"),
        ("2 / 3", "0.666666666666667"),
        ("1e20", "1e+20"),
        ("1.5e-7 * 2", "3e-07"),
        ("-0.0", "0"),
        ("1_000 * 3", "3000"),
        ("0x10 + 0b11", "19"),
        ("  42  ", "42"),
        ("2 ** 64", "18446744073709551616"),
        ("pi", "3.14159265358979"),
        ("e", "2.71828182845905"),
        ("tau / 2", "3.14159265358979"),
        ("sqrt(16)", "4"),
        ("sqrt(2) / 3", "0.471404520791032"),
        ("abs(-3)", "3"),
        ("abs(-2.5)", "2.5"),
        ("round(2.567, 2)", "2.57"),
        ("round(2.5)", "2"),
        ("round(3.5)", "4"),
        ("round(1234, -2)", "1200"),
        ("min(3, 1.5, 2)", "1.5"),
        ("max(3, 1.5, 2)", "3"),
        ("max(7)", "7"),
        ("log(8, 2)", "3"),
        ("log(e)", "1"),
        ("log10(1000)", "3"),
        ("log2(1024)", "10"),
        ("exp(0)", "1"),
        ("sin(pi / 2)", "1"),
        ("cos(0)", "1"),
        ("atan(1) * 4", "3.14159265358979"),
        ("floor(-2.5)", "-3"),
        ("ceil(2.1)", "3"),
        ("factorial(10)", "3628800"),
        ("factorial(0)", "1"),
        ("2 ** -5000", "0"),
        ("-" * 999 + "1", "-1"),
        ("(((((((((((1)))))))))))", "1"),
        ("2" + " ** 1" * 150, "2"),
    ],
)
def test_calculate_values(expression: str, expected: str) -> None:
    assert calculate(expression) == expected


def test_calculate_large_integers_within_the_limit_are_exact() -> None:
    assert calculate("2 ** 3000") == str(2**3000)
    assert calculate("10 ** 999 + 1") == "1" + "0" * 998 + "1"
    assert calculate("factorial(400)") == str(__import__("math").factorial(400))


TOO_LARGE = "the result is too large (integers are limited to about 1000 digits)"
NOT_SUPPORTED = "supported: numbers, + - * / // % ** and parentheses"
FUNCTIONS = (
    "abs, round, min, max, sqrt, exp, log, log10, log2, sin, cos, tan, asin, acos, atan, "
    "floor, ceil, factorial"
)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("", "the expression is empty"),
        ("   ", "the expression is empty"),
        ("1 / 0", "division by zero"),
        ("1 // 0", "division by zero"),
        ("1 % 0", "division by zero"),
        ("1.5 / 0.0", "division by zero"),
        ("0 ** -1", "division by zero"),
        ("log(8, 1)", "division by zero"),
        ("9**9**9", TOO_LARGE),
        ("10**10**10", TOO_LARGE),
        ("2**10000000", TOO_LARGE),
        ("(-3) ** 100000", TOO_LARGE),
        ("10 ** 999 * 10 ** 999", TOO_LARGE),
        ("2 ** 3400", TOO_LARGE),
        ("factorial(1000)", TOO_LARGE),
        ("1" * 1001, "the expression is too long (1001 characters; the limit is 1000)"),
        ("1e308 * 10", "the result is too large (not a finite number)"),
        ("1e999", "the result is too large (not a finite number)"),
        ("2.0 ** 100000", "the result is too large"),
        ("10 ** 999 / 3", "the result is too large"),
        ("exp(1000)", "the result of exp() is too large"),
        ("sqrt(10 ** 999)", "the result of sqrt() is too large"),
        ("(-8) ** (1 / 3)", "the result is a complex number, which is not supported"),
        ("sqrt(-1)", "sqrt() is not defined for these arguments"),
        ("log(0)", "log() is not defined for these arguments"),
        ("asin(2)", "asin() is not defined for these arguments"),
        ("2 ^ 10", "^ is not supported; use ** for powers, e.g. 2 ** 10"),
        ("1 << 10000000", f"this operator is not supported; {NOT_SUPPORTED}"),
        ("1 & 3", f"this operator is not supported; {NOT_SUPPORTED}"),
        ("~1", f"only + and - can come before a number; {NOT_SUPPORTED}"),
        ("not 1", f"only + and - can come before a number; {NOT_SUPPORTED}"),
        ("x + 1", "unknown name 'x'; constants are pi, e, tau"),
        ("__builtins__", "unknown name '__builtins__'; constants are pi, e, tau"),
        (
            "__import__('os').system('true')",
            f"unknown this function call; available functions: {FUNCTIONS}",
        ),
        ("__import__('os')", f"unknown function '__import__'; available functions: {FUNCTIONS}"),
        ("eval('1')", f"unknown function 'eval'; available functions: {FUNCTIONS}"),
        ("pi.real", f"this kind of expression is not supported; {NOT_SUPPORTED}"),
        ("(1).__class__", f"this kind of expression is not supported; {NOT_SUPPORTED}"),
        ("[1, 2]", f"this kind of expression is not supported; {NOT_SUPPORTED}"),
        ("1 < 2", f"this kind of expression is not supported; {NOT_SUPPORTED}"),
        ("1 if 1 else 0", f"this kind of expression is not supported; {NOT_SUPPORTED}"),
        ("lambda: 1", f"this kind of expression is not supported; {NOT_SUPPORTED}"),
        ("'a' * 10 ** 9", f"'a' is not a number; {NOT_SUPPORTED}"),
        ("True + 1", f"True is not a number; {NOT_SUPPORTED}"),
        ("1j", f"1j is not a number; {NOT_SUPPORTED}"),
        ("min()", "min() takes at least 1 argument(s), got 0"),
        ("sqrt(1, 2)", "sqrt() takes 1 argument(s), got 2"),
        ("round(1, 2, 3)", "round() takes 1 or 2 argument(s), got 3"),
        ("round(2.5, ndigits=1)", "round() takes plain positional arguments only"),
        ("max(*[1])", "max() takes plain positional arguments only"),
        ("round(1, 10 ** 9)", "round() takes a whole number of digits between -100 and 100"),
        (
            "round(10 ** 900, -(10 ** 9))",
            "round() takes a whole number of digits between -100 and 100",
        ),
        ("factorial(2.5)", "factorial() takes a whole number from 0 to 1000"),
        ("factorial(-1)", "factorial() takes a whole number from 0 to 1000"),
        ("factorial(10 ** 9)", "factorial() takes a whole number from 0 to 1000"),
        ("(" * 300 + "1" + ")" * 300, "the expression is nested too deeply"),
    ],
)
def test_calculate_refuses_with_a_clear_message(expression: str, message: str) -> None:
    with pytest.raises(CalculatorError) as caught:
        calculate(expression)
    assert str(caught.value) == message
    assert timed(lambda: calculate(expression)) < LIVENESS


@pytest.mark.parametrize(
    "expression",
    [
        "(" * 100_000 + "1" + ")" * 100_000,
        "-" * 100_000 + "1",
        "1+" * 100_000 + "1",
        "9" * 1_000_000,
        "9**9**9**9**9",
        "10**10**10",
        "2**2**2**2**2**2",
        "factorial(factorial(factorial(5)))",
        "(" * 499 + "1" + ")" * 499,
        "2" + "**2" * 333,
        "max(" + "9**999," * 100 + "1)*" + "*".join(["9**999"] * 100),
    ],
)
def test_calculate_hostile_inputs_are_refused_quickly(expression: str) -> None:
    assert timed(lambda: calculate(expression)) < LIVENESS
    with pytest.raises(CalculatorError):
        calculate(expression)


def test_calculator_error_is_a_value_error() -> None:
    assert issubclass(CalculatorError, ValueError)


ARITHMETIC_TEXT = st.text(alphabet="0123456789.e+-*/%()^, _xjpisqrtlogfacmn", max_size=80)


def _expressions() -> st.SearchStrategy[str]:
    leaves = st.one_of(
        st.integers(min_value=-(10**30), max_value=10**30).map(lambda n: f"({n})"),
        st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"({x!r})"),
        st.sampled_from(["pi", "e", "0", "1", "0.0"]),
    )
    operators = st.sampled_from(["+", "-", "*", "/", "//", "%", "**"])
    functions = st.sampled_from(["sqrt", "abs", "round", "log", "exp", "factorial", "floor"])

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(inner, operators, inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
        call = st.tuples(functions, inner).map(lambda t: f"{t[0]}({t[1]})")
        return st.one_of(binary, call, inner.map(lambda s: f"-{s}"))

    return st.recursive(leaves, extend, max_leaves=12)


def _returns_str_or_refuses(expression: str) -> None:
    start = time.perf_counter()
    try:
        result = calculate(expression)
    except CalculatorError:
        pass
    else:
        assert isinstance(result, str)
        assert result
    assert time.perf_counter() - start < LIVENESS


@given(st.text(max_size=200))
def test_calculate_on_any_text_returns_str_or_raises_calculator_error(text: str) -> None:
    _returns_str_or_refuses(text)


@given(ARITHMETIC_TEXT)
def test_calculate_on_arithmetic_looking_text(text: str) -> None:
    _returns_str_or_refuses(text)


@settings(max_examples=300)
@given(_expressions())
def test_calculate_on_generated_expressions(expression: str) -> None:
    _returns_str_or_refuses(expression)


@pytest.mark.parametrize("expression", ["1 +", "x = 1", "(1", "1 1", "1\x00", "import os"])
def test_calculate_refuses_invalid_syntax(expression: str) -> None:
    with pytest.raises(CalculatorError, match=r"^the expression is not valid arithmetic"):
        calculate(expression)


# --- files ------------------------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    """A root with files and a sibling 'outside' directory holding a secret."""
    base = tmp_path / "root"
    (base / "sub" / "deeper").mkdir(parents=True)
    (base / "a.txt").write_text("hello\n", encoding="utf-8")
    (base / "sub" / "b.txt").write_text("bee", encoding="utf-8")
    (base / ".hidden").write_text("h", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET", encoding="utf-8")
    yield base


def outside_message(path: str) -> str:
    return f"{path!r} is outside the directory you may access; use a path inside it"


def test_read_file_returns_text(root: Path) -> None:
    assert read_file(root, "a.txt") == "hello\n"
    assert read_file(root, "sub/b.txt") == "bee"
    assert read_file(root, "./sub/../a.txt") == "hello\n"
    assert read_file(root, str(root / "sub" / "b.txt")) == "bee"
    assert read_file(root, " sub/b.txt\n") == "bee"  # a model's stray spaces, as list_dir


def test_read_file_follows_symlinks_that_stay_inside(root: Path) -> None:
    (root / "link.txt").symlink_to("sub/b.txt")
    (root / "sublink").symlink_to(root / "sub", target_is_directory=True)
    assert read_file(root, "link.txt") == "bee"
    assert read_file(root, "sublink/b.txt") == "bee"


def test_read_file_works_when_the_root_itself_is_a_symlink(root: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    assert read_file(alias, "a.txt") == "hello\n"
    with pytest.raises(FileToolError, match="outside"):
        read_file(alias, "../outside/secret.txt")


@pytest.mark.parametrize(
    "path",
    [
        "../outside/secret.txt",
        "../../etc/passwd",
        "../" * 50 + "etc/passwd",
        "sub/../../outside/secret.txt",
        "/etc/passwd",
        "/",
        "..",
        "/proc/self/environ",
    ],
)
def test_read_file_refuses_paths_outside_root(root: Path, path: str) -> None:
    with pytest.raises(FileToolError) as caught:
        read_file(root, path)
    assert str(caught.value) == outside_message(path)


def test_read_file_refuses_absolute_path_to_a_sibling(root: Path, tmp_path: Path) -> None:
    path = str(tmp_path / "outside" / "secret.txt")
    with pytest.raises(FileToolError) as caught:
        read_file(root, path)
    assert str(caught.value) == outside_message(path)


def test_read_file_refuses_symlinks_out_of_root(root: Path, tmp_path: Path) -> None:
    (root / "leak.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (root / "leakdir").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "sub" / "up").symlink_to("../..", target_is_directory=True)
    (root / "etc").symlink_to("/etc", target_is_directory=True)
    for path in ["leak.txt", "leakdir/secret.txt", "sub/up/outside/secret.txt", "etc/passwd"]:
        with pytest.raises(FileToolError) as caught:
            read_file(root, path)
        assert str(caught.value) == outside_message(path)


def test_descriptor_check_refuses_a_target_outside_root(root: Path, tmp_path: Path) -> None:
    # As if a symlink had been swapped in between resolving and opening.
    secret = tmp_path / "outside" / "secret.txt"
    with pytest.raises(FileToolError) as caught:
        _open_inside(root.resolve(), secret.resolve(), "a.txt")
    assert str(caught.value) == outside_message("a.txt")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("missing.txt", "no such file or directory: 'missing.txt'"),
        ("sub/missing/x", "no such file or directory: 'sub/missing/x'"),
        ("", "the path is empty; give a file path such as 'README.md'"),
        ("  ", "the path is empty; give a file path such as 'README.md'"),
        ("sub", "'sub' is a directory; use list_dir to see its contents"),
        (".", "'.' is a directory; use list_dir to see its contents"),
        ("a.txt\x00.png", "the path contains a NUL character"),
        ("a.txt/x", "cannot access 'a.txt/x': Not a directory"),
    ],
)
def test_read_file_errors(root: Path, path: str, message: str) -> None:
    with pytest.raises(FileToolError) as caught:
        read_file(root, path)
    assert str(caught.value) == message


def test_read_file_refuses_symlink_loops_and_long_paths_quickly(root: Path) -> None:
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    with pytest.raises(FileToolError, match=r"^cannot access 'loop1': "):
        read_file(root, "loop1")
    long_path = "a/" * 50_000
    assert timed(lambda: read_file(root, long_path)) < LIVENESS
    with pytest.raises(FileToolError) as caught:
        read_file(root, long_path)
    assert str(caught.value) == "the path is too long (the limit is 4096 characters)"
    deep = "sub/" + "./" * 2_000 + "a"
    assert timed(lambda: list_dir(root, deep)) < LIVENESS
    with pytest.raises(FileToolError):
        list_dir(root, deep)


def test_read_file_refuses_fifo_without_blocking(root: Path) -> None:
    os.mkfifo(root / "pipe")
    assert timed(lambda: read_file(root, "pipe")) < LIVENESS
    with pytest.raises(FileToolError) as caught:
        read_file(root, "pipe")
    assert str(caught.value) == "'pipe' is not a regular file"


def test_read_file_refuses_binary_and_replaces_bad_utf8(root: Path) -> None:
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (root / "latin1.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(FileToolError) as caught:
        read_file(root, "image.png")
    assert str(caught.value) == "'image.png' is a binary file and cannot be shown as text"
    assert read_file(root, "latin1.txt") == "caf\ufffd"


def test_read_file_truncates_with_a_note(root: Path) -> None:
    (root / "big.txt").write_text("x" * 100, encoding="utf-8")
    (root / "exact.txt").write_text("y" * 10, encoding="utf-8")
    (root / "utf8.txt").write_text("ab€€", encoding="utf-8")  # € is 3 bytes
    assert read_file(root, "big.txt", max_bytes=10) == (
        "xxxxxxxxxx\n[truncated: showing the first 10 of 100 bytes]"
    )
    assert read_file(root, "exact.txt", max_bytes=10) == "y" * 10
    # The cut falls inside the second €: it is dropped whole, not shown as U+FFFD.
    assert read_file(root, "utf8.txt", max_bytes=6) == (
        "ab€\n[truncated: showing the first 6 of 8 bytes]"
    )


def test_read_file_default_limit_bounds_a_large_file(root: Path) -> None:
    (root / "huge.txt").write_bytes(b"z" * 5_000_000)
    result = read_file(root, "huge.txt")
    assert result == "z" * 32_768 + "\n[truncated: showing the first 32768 of 5000000 bytes]"


def test_list_dir_sorted_with_directories_marked(root: Path, tmp_path: Path) -> None:
    (root / "leakdir").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "broken").symlink_to("nowhere")
    assert list_dir(root) == ".hidden\na.txt\nbroken\nleakdir/\nsub/"
    assert list_dir(root, "sub") == "b.txt\ndeeper/"
    assert list_dir(root, "sub/") == "b.txt\ndeeper/"
    assert list_dir(root, "") == list_dir(root, ".")
    assert list_dir(root, str(root / "sub")) == "b.txt\ndeeper/"
    assert list_dir(root, "sub/deeper") == "(empty directory)"


def test_list_dir_caps_entries(root: Path) -> None:
    many = root / "many"
    many.mkdir()
    for index in range(250):
        (many / f"f{index:03d}").write_text("", encoding="utf-8")
    lines = list_dir(root, "many").split("\n")
    assert lines[:3] == ["f000", "f001", "f002"]
    assert lines[199] == "f199"
    assert lines[200] == "[... 50 more entries not shown]"
    assert len(lines) == 201
    assert list_dir(root, "many", max_entries=2) == "f000\nf001\n[... 248 more entries not shown]"


@pytest.mark.parametrize("path", ["..", "../outside", "/", "/etc", "leakdir", "leakdir/"])
def test_list_dir_refuses_paths_outside_root(root: Path, tmp_path: Path, path: str) -> None:
    (root / "leakdir").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(FileToolError) as caught:
        list_dir(root, path)
    assert str(caught.value) == outside_message(path)


def test_list_dir_errors(root: Path) -> None:
    with pytest.raises(FileToolError) as caught:
        list_dir(root, "a.txt")
    assert str(caught.value) == "'a.txt' is not a directory; use read_file to read it"
    with pytest.raises(FileToolError) as caught:
        list_dir(root, "nope")
    assert str(caught.value) == "no such file or directory: 'nope'"


# --- clock ------------------------------------------------------------------------------------

WINTER = datetime(2026, 12, 2, 16, 27, 31, 123456, tzinfo=timezone.utc)
SUMMER = datetime(2026, 7, 14, 10, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("tz", "moment", "expected"),
    [
        (None, WINTER, "2026-12-02T16:27:31+00:00 (UTC, Wednesday)"),
        ("", WINTER, "2026-12-02T16:27:31+00:00 (UTC, Wednesday)"),
        ("utc", WINTER, "2026-12-02T16:27:31+00:00 (UTC, Wednesday)"),
        ("Europe/Paris", WINTER, "2026-12-02T17:27:31+01:00 (Europe/Paris, Wednesday)"),
        ("Europe/Paris", SUMMER, "2026-07-14T12:00:00+02:00 (Europe/Paris, Tuesday)"),
        (" America/New_York ", WINTER, "2026-12-02T11:27:31-05:00 (America/New_York, Wednesday)"),
        ("Asia/Kolkata", WINTER, "2026-12-02T21:57:31+05:30 (Asia/Kolkata, Wednesday)"),
        ("Pacific/Kiritimati", WINTER, "2026-12-03T06:27:31+14:00 (Pacific/Kiritimati, Thursday)"),
        (
            "Europe/Paris",
            datetime(2026, 12, 2, 16, 27, 31),
            "2026-12-02T17:27:31+01:00 (Europe/Paris, Wednesday)",
        ),
        (
            "UTC",
            datetime(2026, 1, 1, 1, 0, tzinfo=timezone(timedelta(hours=3))),
            "2025-12-31T22:00:00+00:00 (UTC, Wednesday)",
        ),
    ],
)
def test_now_with_injected_clock(tz: str | None, moment: datetime, expected: str) -> None:
    assert now(tz, clock=lambda: moment) == expected


@pytest.mark.parametrize(
    ("tz", "expected"),
    [
        ("Tokyo", "2026-12-03T01:27:31+09:00 (Asia/Tokyo, Thursday)"),
        ("new york", "2026-12-02T11:27:31-05:00 (America/New_York, Wednesday)"),
        (" Los_Angeles ", "2026-12-02T08:27:31-08:00 (America/Los_Angeles, Wednesday)"),
        ("Buenos Aires", "2026-12-02T13:27:31-03:00 (America/Argentina/Buenos_Aires, Wednesday)"),
        ("SYDNEY", "2026-12-03T03:27:31+11:00 (Australia/Sydney, Thursday)"),
    ],
)
def test_now_takes_the_city_that_names_a_zone(tz: str, expected: str) -> None:
    assert now(tz, clock=lambda: WINTER) == expected


@pytest.mark.parametrize(
    "tz",
    [
        "Mars/Olympus",
        "America",
        "../../etc/passwd",
        "/etc/localtime",
        "zone.tab",
        "x\x00",
        ".",
        "Atlantis",
        "Tokyo/Asia",
    ],
)
def test_now_unknown_zone(tz: str) -> None:
    with pytest.raises(ClockError) as caught:
        now(tz, clock=lambda: WINTER)
    assert str(caught.value) == (
        f"unknown time zone {tz!r}; use an IANA name such as 'UTC', 'Europe/Paris', "
        "'America/New_York' or 'Asia/Tokyo'"
    )


def test_now_long_zone_name_is_refused_quickly() -> None:
    tz = "A" * 100_000
    assert timed(lambda: now(tz)) < LIVENESS
    with pytest.raises(ClockError, match=r"^unknown time zone 'A{64}'; "):
        now(tz)


def test_now_uses_the_real_clock_by_default() -> None:
    before = datetime.now(timezone.utc).replace(microsecond=0)
    result = now()
    match = re.fullmatch(r"(\S+) \(UTC, (\w+)day\)", result)
    assert match is not None
    moment = datetime.fromisoformat(match.group(1))
    assert before <= moment <= datetime.now(timezone.utc)
