"""Callback handlers: the no-op hooks users override, and the run dispatcher behind them."""

from actloop.callbacks._handlers import (
    AsyncCallbackHandler,
    BaseCallbackHandler,
    Callbacks,
    StdOutCallbackHandler,
    get_color_mapping,
    print_text,
)

__all__ = [
    "AsyncCallbackHandler",
    "BaseCallbackHandler",
    "Callbacks",
    "StdOutCallbackHandler",
    "get_color_mapping",
    "print_text",
]
