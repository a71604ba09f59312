"""How long the built-in tools take to refuse hostile input, and the journal's size per step.

    .venv/bin/python bench/hostile.py [--json]

The tests only hold these to a generous liveness bound (`tests/tools/test_builtin_logic.py`,
`tests/reliability/test_security.py`); the speed lives here. Prints the worst of 5 runs of each
input in milliseconds (`--json`: one JSON object).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from actloop.tools.builtin._calculator import calculate
from actloop.tools.builtin._clock import now
from actloop.tools.builtin._files import list_dir, read_file

REPEATS = 5
EXPRESSIONS = [
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
]


def worst_ms(call: Callable[[], object]) -> float:
    """The slowest of REPEATS calls, in milliseconds (a refusal counts as a return)."""
    times: list[float] = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        try:
            call()
        except ValueError:
            pass
        times.append(time.perf_counter() - start)
    return max(times) * 1000


def measure(root: Path) -> dict[str, float]:
    results = {
        f"calculate #{i} {e[:20]!r}... ({len(e):,} chars)": worst_ms(lambda e=e: calculate(e))
        for i, e in enumerate(EXPRESSIONS)
    }
    os.mkfifo(root / "pipe")
    (root / "sub").mkdir()
    results["read_file 100k-char path"] = worst_ms(lambda: read_file(root, "a/" * 50_000))
    results["list_dir 2,000 './' parts"] = worst_ms(lambda: list_dir(root, "sub/" + "./" * 2_000))
    results["read_file fifo"] = worst_ms(lambda: read_file(root, "pipe"))
    results["clock 100k-char zone"] = worst_ms(lambda: now("A" * 100_000))
    return results


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results = measure(Path(tmp))
    if "--json" in sys.argv:
        print(json.dumps(results))
        return
    width = max(map(len, results))
    for name, ms in results.items():
        print(f"{name:<{width}}  {ms:8.2f} ms")


if __name__ == "__main__":
    main()
