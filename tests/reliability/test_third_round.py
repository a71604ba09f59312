"""Third round of attacks (issue 29): secrets, stored values, bounded model calls.

Each test here failed on the code before its fix. A test whose failure was a hang runs its attack
in a fresh interpreter with a generous time limit, so a regression fails instead of hanging.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest


def run_script(script: str, *args: str, timeout: float = 60) -> dict[str, Any]:
    """Run `script` in a fresh interpreter; it must print one JSON line and exit by itself."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the script hung for {timeout} s")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the key filter never blocks -----------------------------------------------------------------

REENTERED_FILTER = r"""
import gc, io, json, logging
from actloop.models._secret import Secret, watch_logs

KEY = "sk-reentry-0123456789abcdef"
stream = io.StringIO()
handler = logging.StreamHandler(stream)
logging.basicConfig(level=logging.DEBUG, handlers=[handler])


class LogsWhenCollected:
    # What the SDK's client does: its finalizer logs on the HTTP stack's logger.
    def __del__(self):
        logging.getLogger("httpcore.connection").debug("close.started " + KEY)


class CollectingSecret(Secret):
    # Garbage collection runs while the key filter reads the live keys, as it did when the
    # filter iterated its WeakSet (here made certain instead of left to the collector's timing).
    def get_secret_value(self):
        gc.collect()
        return super().get_secret_value()


secret = CollectingSecret(KEY)
watch_logs(secret)
for _ in range(3):
    cycle = LogsWhenCollected()
    cycle.me = cycle
    del cycle
    logging.getLogger("httpx").debug("HTTP Request: key=%s", KEY)
gc.collect()
print(json.dumps(stream.getvalue().splitlines()))
"""


def test_the_key_filter_never_blocks_when_a_finalizer_logs_inside_it() -> None:
    # Before: the filter held a plain Lock while it read the keys; a finalizer run by garbage
    # collection there logged, re-entered the filter on the same thread and hung forever.
    lines = run_script(REENTERED_FILTER, timeout=30)
    request = "DEBUG:httpx:HTTP Request: key=**********"
    closed = "DEBUG:httpcore.connection:close.started **********"
    assert sorted(lines) == [closed] * 3 + [request] * 3
