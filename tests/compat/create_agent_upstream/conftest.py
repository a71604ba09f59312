"""The checkpointer fixtures of LangChain's agent tests (`tests/unit_tests/agents/conftest.py`
in its default fast mode: an in-memory saver), with actloop's `InMemorySaver`."""

from collections.abc import Iterator

import pytest

from actloop.checkpoint.memory import InMemorySaver


@pytest.fixture
def sync_checkpointer() -> Iterator[InMemorySaver]:
    """A fresh in-memory checkpointer for a sync test."""
    yield InMemorySaver()


@pytest.fixture
def async_checkpointer() -> Iterator[InMemorySaver]:
    """A fresh in-memory checkpointer for an async test."""
    yield InMemorySaver()
