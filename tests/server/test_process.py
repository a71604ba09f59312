"""`pace_collector`: what `actloop serve` sets in its own process (the young generation collected
every 10,000 allocations; a slower pace already set is kept; the older generations' pace kept)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from actloop.server._process import YOUNG_THRESHOLD, pace_collector


@pytest.fixture
def threshold() -> Iterator[None]:
    """The test process's collector as it was, back after the test."""
    before = gc.get_threshold()
    try:
        yield
    finally:
        gc.set_threshold(*before)


@pytest.mark.usefixtures("threshold")
def test_the_young_generation_is_collected_every_10000_allocations() -> None:
    gc.set_threshold(700, 10, 10)
    pace_collector()
    assert YOUNG_THRESHOLD == 10_000
    assert gc.get_threshold() == (10_000, 10, 10)


@pytest.mark.usefixtures("threshold")
def test_a_slower_pace_already_set_is_kept() -> None:
    gc.set_threshold(50_000, 20, 5)
    pace_collector()
    assert gc.get_threshold() == (50_000, 20, 5)
