"""bench/compare.py in its quick mode against HEAD: it checks REF out into a temporary worktree,
measures every row on both trees in fresh processes and prints each row's ratio with its spread.
Only the shape is checked (speed is measured in bench/, never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPARE = ROOT / "bench" / "compare.py"
ROWS = [
    "loop_sync_10",
    "loop_sync_1000",
    "loop_async_10",
    "loop_async_1000",
    "agent_sync_20",
    "agent_async_20",
    "agent_peak_kib",
    "import_ms",
    "durable_sqlite",
]


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def _compare(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(COMPARE), *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quick_compare_against_head_reports_every_row_with_its_ratio_and_spread() -> None:
    result = json.loads(_compare("HEAD", "--quick", "--rounds", "1", "--json"))
    assert "actloop-ref-" not in _git("worktree", "list")  # the temporary worktree is gone
    assert result["ref"] == "HEAD"
    assert result["ref_commit"] == _git("rev-parse", "HEAD")[:10]
    assert result["rounds"] == 1
    assert len(result["load"]) == 2
    assert [r["row"] for r in result["rows"]] == ROWS
    for row in result["rows"]:
        assert set(row) == {"row", "label", "unit", "ref", "tree", "ratio", "spread"}, row
        assert row["ref"] > 0 and row["tree"] > 0
        assert row["ratio"] == row["tree"] / row["ref"]
        assert row["spread"] == [row["ratio"], row["ratio"]]  # one round: one ratio
    units = {r["row"]: r["unit"] for r in result["rows"]}
    assert units["import_ms"] == "ms" and units["agent_peak_kib"] == "KiB"
    assert {units[r] for r in ROWS if r.startswith(("loop", "agent_s", "agent_a", "dur"))} == {
        "us/step"
    }


def test_the_table_names_ref_and_tree_and_has_one_line_per_row() -> None:
    lines = _compare("HEAD", "--quick", "--rows", "loop_sync_10,import_ms").splitlines()
    assert lines[0].startswith("compare.py: REF HEAD (")
    assert "2 rounds, fresh processes, alternating; load average" in lines[0]
    assert lines[1].split() == ["row", "unit", "REF", "tree", "ratio", "spread"]
    assert [line.split("  ")[0] for line in lines[2:4]] == ["loop sync, N=10", "import actloop"]
    assert lines[2].split()[3] == "us/step" and lines[3].split()[2] == "ms"
    assert lines[-1].startswith("ratio = tree / REF")


def test_an_unknown_row_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, str(COMPARE), "HEAD", "--rows", "loop_sync_7"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "unknown rows ['loop_sync_7']" in done.stderr
