"""Spans of instrumented runs: `spans` instruments actloop with a fresh TracerProvider for one
test (its exporter in memory) and uninstruments after. The helpers are in `support.tracing`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from actloop.tracing import instrument, uninstrument
from support.tracing import Spans


@pytest.fixture
def spans() -> Iterator[Spans]:
    caught = Spans()
    instrument(tracer_provider=caught.provider)
    yield caught
    uninstrument()
    caught.provider.shutdown()
