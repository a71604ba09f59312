"""The `actloop` command line: `actloop run`, `actloop runs ...`."""

from actloop.cli._main import main

__all__ = ["main"]
