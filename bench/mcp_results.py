"""How long a large MCP result takes to read over stdio: 10, 20, 40 and 80 MB of text from the
demo server of the tests (mcp 2.x `MCPServer`), each read 3 times, best of 3 in seconds.

    PYTHONPATH=src .venv/bin/python bench/mcp_results.py

The time should grow linearly with the size (the stdio transport splits each chunk once; the
SDK's own transport re-split the whole pending buffer per chunk: 20 MB 1.6 s, 40 MB 9.3 s,
80 MB 90 s). What remains is the server writing the JSON and both sides parsing it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from actloop.mcp import MCPToolset

DEMO = str(Path(__file__).resolve().parent.parent / "tests" / "mcp" / "servers" / "demo.py")


def main() -> None:
    with MCPToolset.stdio(sys.executable, [DEMO], timeout=300, max_result_bytes=10**9) as demo:
        for megabytes in (10, 20, 40, 80):
            best = float("inf")
            for _ in range(3):
                started = time.perf_counter()
                text = demo.call("big", {"megabytes": megabytes})
                best = min(best, time.perf_counter() - started)
                assert len(text) == megabytes * 1_000_000
            print(f"{megabytes:3d} MB  {best:6.2f} s  {best / megabytes * 1000:6.1f} ms/MB")


if __name__ == "__main__":
    main()
