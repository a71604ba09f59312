"""Reliability suites: the seed every randomized test uses, and a watchdog against hung runs.

`ACTLOOP_RELIABILITY_SEED=<n>` replays (or varies) every fuzzed and load test; the seed is shown in
the pytest header and in every falsifying example. `ACTLOOP_FUZZ_EXAMPLES` and `ACTLOOP_LOAD_RUNS`
scale the suites up (the defaults keep this folder well under 90 s on two cores).
"""

from __future__ import annotations

import faulthandler
import sys
import threading
from collections.abc import Iterator

import pytest

from ._support import SEED

WATCHDOG_SECONDS = 240
"""A run that never ends fails the suite: after this long every thread's stack is dumped and the
process exits, instead of hanging CI."""


def pytest_report_header() -> list[str]:
    return [f"reliability seed: {SEED} (replay with ACTLOOP_RELIABILITY_SEED={SEED})"]


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True, file=sys.stderr)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set when the test ends: every hung call returns then."""
    event = threading.Event()
    yield event
    event.set()
