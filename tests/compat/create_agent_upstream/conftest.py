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


BETA_PORTS = {"test_model_router.py"}
"""Ported files building LangChain beta middleware: LangChain's test config ignores
`LangChainBetaWarning` (`filterwarnings` in its pyproject), so these tests do too."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Ignore `LangChainBetaWarning` in `BETA_PORTS`, as LangChain's own test config does."""
    ignore = pytest.mark.filterwarnings(
        "ignore::langchain_core._api.beta_decorator.LangChainBetaWarning"
    )
    for item in items:
        if item.path.name in BETA_PORTS:
            item.add_marker(ignore)
