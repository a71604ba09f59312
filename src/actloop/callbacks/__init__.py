"""Callback handlers: the no-op hooks users override, and the run dispatcher behind them."""

from actloop.callbacks._context import Run, RunCollectorCallbackHandler, collect_runs
from actloop.callbacks._handlers import (
    AsyncCallbackHandler,
    BaseCallbackHandler,
    Callbacks,
    StdOutCallbackHandler,
    get_color_mapping,
    print_text,
)
from actloop.callbacks._llm_run import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun

__all__ = [
    "AsyncCallbackHandler",
    "AsyncCallbackManagerForLLMRun",
    "BaseCallbackHandler",
    "CallbackManagerForLLMRun",
    "Callbacks",
    "Run",
    "RunCollectorCallbackHandler",
    "StdOutCallbackHandler",
    "collect_runs",
    "get_color_mapping",
    "print_text",
]
