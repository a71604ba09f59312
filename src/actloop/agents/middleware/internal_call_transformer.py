"""The marks LangChain 1.5 puts on model calls middleware makes for itself (a summary, a tool
selection): `lc_source`, the process's internal-call token under `lc_internal_call`, and the
`nostream` tag, so a `messages` stream and the graph's stream filters leave them out.

Only the marks are here (`langchain.agents.middleware.internal_call_transformer`'s public
functions); LangChain's `InternalCallTransformer` works on LangGraph's v3 event protocol, which
actloop does not have.
"""

from __future__ import annotations

import os
from typing import Any

from actloop.agents.types import TAG_NOSTREAM

__all__ = ["INTERNAL_CALL_METADATA_KEY", "internal_call_config", "internal_call_metadata"]

INTERNAL_CALL_METADATA_KEY = "lc_internal_call"
"""Metadata key marking a model call as internal to middleware (LangChain's)."""

_INTERNAL_CALL_TOKEN = os.urandom(16).hex()
"""A process-local token: user-supplied metadata cannot pass for an internal call."""


def internal_call_metadata() -> dict[str, Any]:
    """The metadata that marks a model call as internal to middleware."""
    return {INTERNAL_CALL_METADATA_KEY: _INTERNAL_CALL_TOKEN}


def internal_call_config(source: str) -> dict[str, Any]:
    """The config of an internal model call made by `source` ("summarization",
    "tool_selection"), as LangChain's middleware passes it; inside an agent's node, the node's
    callbacks (the call is traced as the node's child, as in LangGraph)."""
    from actloop.agents._events import node_callbacks

    config: dict[str, Any] = {
        "metadata": {"lc_source": source, **internal_call_metadata()},
        "tags": [TAG_NOSTREAM],
    }
    callbacks = node_callbacks()
    if callbacks is not None:
        config["callbacks"] = callbacks
    return config
