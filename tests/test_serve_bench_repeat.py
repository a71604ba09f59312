"""bench/serve_bench.py's `--repeat`: a row made of several bursts against one real `actloop serve`
process (their medians, each burst's runs/s). Only what it reports is checked, never a speed."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def serve_bench() -> Iterator[ModuleType]:
    """bench/serve_bench.py, imported with bench/ on sys.path (its spawned client processes
    inherit it); both taken away afterwards."""
    sys.path.insert(0, str(ROOT / "bench"))
    yield importlib.import_module("serve_bench")
    sys.path.remove(str(ROOT / "bench"))
    sys.modules.pop("serve_bench", None)


def test_a_row_of_three_bursts(serve_bench: ModuleType) -> None:
    row = serve_bench.measure("actloop", "a2a", 8, 2, 0.0, repeat=3)
    assert (row["protocol"], row["concurrency"], row["completed"], row["own_answer"]) == (
        "a2a",
        8,
        8,
        8,
    )
    assert len(row["runs_per_s_each"]) == 3
    assert sorted(row["runs_per_s_each"])[1] == row["runs_per_s"]  # the median burst
    assert row["first_event_p50_ms"] <= row["first_event_p99_ms"]


def test_the_medians_of_bursts(serve_bench: ModuleType) -> None:
    bursts = [
        {"completed": 8, "own_answer": 8, "runs_per_s": 10.0, "first_event_p50_ms": None},
        {"completed": 8, "own_answer": 7, "runs_per_s": 30.0, "first_event_p50_ms": 5.0},
        {"completed": 7, "own_answer": 7, "runs_per_s": 20.0, "first_event_p50_ms": 7.0},
    ]
    assert serve_bench._medians(bursts) == {
        "completed": 7,
        "own_answer": 7,
        "runs_per_s": 20.0,
        "first_event_p50_ms": 6.0,
    }
