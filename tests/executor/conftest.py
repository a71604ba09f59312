"""Two string tools executor tests share; the helpers are in `support.executor`."""

from __future__ import annotations

import pytest

from actloop import Tool
from support.executor import make_tool


@pytest.fixture
def search() -> Tool:
    return make_tool("search", lambda q: f"results for {q}")


@pytest.fixture
def lookup() -> Tool:
    return make_tool("lookup", lambda q: f"entry {q}")
