"""Runs one library's workloads in its own process, for the runner (run.py).

``worker.py serve LIB``: reads JSON requests ``{"fn": name, "args": [...]}`` line by line on stdin
and answers one JSON line each on the original stdout (library output goes to stderr).
``worker.py oneshot LIB KIND [ARGS_JSON]``: one isolated measurement (hung, mem, many), then exits
with ``os._exit`` so abandoned threads (a hung tool) cannot keep the process alive.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import os
import resource
import sys
import time
import traceback
import tracemalloc
from typing import Any, TextIO

from workloads import LIBRARIES


def _private_stdout() -> TextIO:
    """Keep the real stdout for replies; route library prints to stderr."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def _send(out: TextIO, msg: dict[str, Any]) -> None:
    out.write(json.dumps(msg, default=str) + "\n")
    out.flush()


def _call(mod: Any, fn: str, args: list[Any]) -> Any:
    result = getattr(mod, fn)(*args)
    if asyncio.iscoroutine(result):
        result = asyncio.run(result)
    return result


def _error(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
    return f"{type(e).__name__}: {e}"[:400] + where


def _load(lib: str, out: TextIO) -> Any:
    try:
        mod = importlib.import_module(LIBRARIES[lib])
    except BaseException as e:  # report, never crash the runner
        traceback.print_exc()
        _send(out, {"ok": False, "fatal": True, "error": _error(e)})
        return None
    return mod


def serve(lib: str) -> None:
    out = _private_stdout()
    mod = _load(lib, out)
    if mod is None:
        return
    fns = [n for n in dir(mod) if not n.startswith("_") and callable(getattr(mod, n))]
    _send(
        out,
        {
            "ok": True,
            "ready": True,
            "functions": fns,
            "unsupported": getattr(mod, "UNSUPPORTED", {}),
            "notes": getattr(mod, "NOTES", {}),
        },
    )
    for line in sys.stdin:
        req = json.loads(line)
        try:
            value = _call(mod, req["fn"], req.get("args", []))
            _send(out, {"ok": True, "value": value})
        except BaseException as e:
            traceback.print_exc()
            _send(out, {"ok": False, "error": _error(e)})


def _mem(mod: Any) -> dict[str, Any]:
    """tracemalloc peak of one 20-step run (after two warm-up runs), per kind."""
    result: dict[str, Any] = {}
    for kind in ("loop", "agent"):
        try:
            build = mod.mem_case(kind)
            for _ in range(2):
                build()()
            run = build()
            gc.collect()
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
            run()
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            result[kind] = peak - base
        except Exception as e:
            traceback.print_exc()
            result[kind] = _error(e)
    return result


def _many(mod: Any, count: int, steps: int) -> dict[str, Any]:
    asyncio.run(mod.many_async(10, steps))  # warm-up: lazy imports, caches
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = asyncio.run(mod.many_async(count, steps))
    res["rss_before_kib"] = before
    res["rss_peak_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res["count"] = count
    return res


def oneshot(lib: str, kind: str, args: list[Any]) -> None:
    out = _private_stdout()
    mod = _load(lib, out)
    if mod is None:
        os._exit(0)
    try:
        if kind == "mem":
            value: Any = _mem(mod)
        elif kind == "many":
            value = _many(mod, *args)
        else:  # hung_sync / hung_async: announce the start so the runner can cap the wait
            _send(out, {"ok": True, "event": "start", "t": time.time()})
            value = _call(mod, kind, args)
        _send(out, {"ok": True, "value": value})
    except BaseException as e:
        traceback.print_exc()
        _send(out, {"ok": False, "error": _error(e)})
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        oneshot(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]) if len(sys.argv) > 4 else [])
