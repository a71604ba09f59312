"""bench/serve_bench.py's client pool against a real `actloop serve` process, and bench/systems.py's
section of RESULTS.md. Only what the scripts report is checked (every run completed with its own
answer, the section's rows and markers), never a speed: speed is measured in bench/."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def bench() -> Iterator[Callable[[str], ModuleType]]:
    """Imports bench scripts by name with bench/ on sys.path (spawned client processes inherit
    it, so they import the same module); takes both away afterwards."""
    sys.path.insert(0, str(ROOT / "bench"))
    loaded: list[str] = []

    def load(name: str) -> ModuleType:
        loaded.append(name)
        return importlib.import_module(name)

    yield load
    sys.path.remove(str(ROOT / "bench"))
    for name in loaded:
        sys.modules.pop(name, None)


@pytest.mark.parametrize("protocol", ["langserve", "agent-protocol", "responses", "ag-ui", "a2a"])
def test_serve_bench_row_against_a_real_server(
    protocol: str, bench: Callable[[str], ModuleType]
) -> None:
    """Each protocol's row: 12 concurrent streams from two client processes, each ending with
    exactly its own answer (read from that protocol's final event)."""
    serve_bench = bench("serve_bench")
    row = serve_bench.measure("actloop", protocol, 12, 2, 0.0)
    assert (row["lib"], row["protocol"], row["concurrency"], row["clients"]) == (
        "actloop",
        protocol,
        12,
        2,
    )
    assert (row["completed"], row["own_answer"]) == (12, 12)
    assert row["first_event_p50_ms"] <= row["first_event_p99_ms"]
    assert len(row["load_before_after"]) == 2


def test_systems_section_is_replaced_in_place(
    tmp_path: Path, bench: Callable[[str], ModuleType]
) -> None:
    systems = bench("systems")
    serve_row = {
        "lib": "actloop",
        "protocol": "langserve",
        "concurrency": 50,
        "runs_per_s": 90.5,
        "throughput_vs_langserve": 4.1,
        "server_cpu_ms_per_run": 2.5,
        "first_event_p50_ms": 30.0,
        "first_event_p99_ms": 60.0,
        "own_answer": 50,
        "load_before_after": [0.2, 0.3],
    }
    results = {
        "serve": ([serve_row], [0.2, 0.3]),
        "postgres": ({"steps": 200, "concurrent": {"runs": 50, "ratio": 0.5}}, [0.1, 0.2]),
        "ray": ({"error": "no ray"}, [0.1, 0.1]),
    }
    text = systems.section(results)
    assert (
        "| actloop | langserve | 50 | 90.5 | 4.1x | 2.5 | 30.0 / 60.0 | 50/50 | [0.2, 0.3] |"
        in text
    )
    assert "| concurrent.ratio | 0.50 |" in text
    assert "failed: no ray" in text
    systems.BENCH = tmp_path
    (tmp_path / "RESULTS.md").write_text("# results\n\nbefore\n")
    systems.write(text)
    systems.write(text.replace("90.5", "91.0"))
    written = (tmp_path / "RESULTS.md").read_text()
    assert written.count(systems.START) == written.count(systems.END) == 1
    assert written.startswith("# results\n\nbefore\n\n<!-- systems:start")
    assert "| 91.0 |" in written and "| 90.5 |" not in written
