"""A tool made per request does not keep its schema class alive: the per-schema caches a tool
call reads are bounded (`CACHED_SCHEMAS`), so a dropped tool's class is collected."""

from __future__ import annotations

import gc
import weakref
from typing import Any

from actloop.tools import tool
from actloop.tools._schema import CACHED_SCHEMAS, HAS_FIELDS
from actloop.tools._validate import _FILLED, _PLAIN_STR  # pyright: ignore[reportPrivateUsage]


def _made_and_called() -> weakref.ref[Any]:
    """A fresh tool, called with text and with arguments; a weak reference to its schema."""

    def echo(text: str, times: int = 1) -> str:
        """Says it back."""
        return text * times

    made = tool(echo)
    assert made.run("ab") == "ab"
    assert made.run({"text": "ab", "times": 2}) == "abab"
    schema = made.args_schema
    assert isinstance(schema, type)
    return weakref.ref(schema)


def test_a_dropped_tools_schema_class_is_collected_after_the_caches_turn_over() -> None:
    first = _made_and_called()
    assert first() is not None
    for _ in range(CACHED_SCHEMAS + 1):
        _made_and_called()
    gc.collect()
    assert first() is None
    assert len(HAS_FIELDS) <= CACHED_SCHEMAS
    assert len(_PLAIN_STR) <= CACHED_SCHEMAS
    assert len(_FILLED) <= CACHED_SCHEMAS


def test_the_caches_still_answer_for_a_schema_in_use() -> None:
    def shout(text: str) -> str:
        """Says it loudly."""
        return text.upper()

    made = tool(shout)
    for _ in range(3):
        assert made.run("hi") == "HI"
        assert made.run({"text": "yo"}) == "YO"
    assert made.args_schema in _PLAIN_STR
    assert _PLAIN_STR[made.args_schema] is True
