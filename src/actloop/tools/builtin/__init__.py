"""Built-in tools that are safe to hand a model: calculator, clock, and root-confined file access.

Each tool reports a bad input (an expression it refuses, a path outside the root, an unknown time
zone) as an observation starting with "Error:", so the model can correct itself; nothing here runs
code the model wrote. A `python` tool is deliberately absent: a subprocess with no network cannot
be guaranteed portably (see the README's security notes).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from actloop.exceptions import ConfigurationError, ToolException
from actloop.tools._base import BaseTool
from actloop.tools._structured import StructuredTool
from actloop.tools.builtin._calculator import CalculatorError, calculate
from actloop.tools.builtin._clock import ClockError, now
from actloop.tools.builtin._files import FileToolError, list_dir, read_file

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "calculator",
    "clock",
    "file_tools",
    "get_builtin_tools",
]

BUILTIN_TOOL_NAMES = ("calculator", "clock", "list_dir", "read_file")
"""Names accepted by `get_builtin_tools` (and the CLI's `--tools`)."""


def _calculator(expression: str) -> str:
    """Evaluate an arithmetic expression, e.g. "12 * 7 + 5" or "sqrt(2) ** 2".

    Args:
        expression: The arithmetic expression: numbers, + - * / // % **, parentheses, and
            functions such as sqrt, abs, round, min, max, log, sin, cos; constants pi and e.
    """
    try:
        return calculate(expression)
    except CalculatorError as exc:
        raise ToolException(f"Error: {exc}") from exc


def _clock(timezone: str = "UTC") -> str:
    """Tell the current date and time.

    Args:
        timezone: An IANA time zone such as "UTC", "Europe/Paris" or "America/New_York", or a
            city that names one, such as "Tokyo".
    """
    try:
        return now(timezone)
    except ClockError as exc:
        raise ToolException(f"Error: {exc}") from exc


calculator: BaseTool = StructuredTool.from_function(
    _calculator, name="calculator", parse_docstring=True, handle_tool_error=True
)
"""Arithmetic on an AST walker with size limits (never `eval`)."""

clock: BaseTool = StructuredTool.from_function(
    _clock, name="clock", parse_docstring=True, handle_tool_error=True
)
"""The current date and time in a time zone."""


def file_tools(root: str | Path = ".") -> list[BaseTool]:
    """`read_file` and `list_dir`, confined to `root`: paths outside it (symlinks too) refused.

    A `root` that is not an existing directory is a ConfigurationError; one removed later makes
    each call an `Error:` observation."""
    base = Path(root).resolve()
    if not base.is_dir():
        raise ConfigurationError(f"the file tools' root {str(root)!r} is not an existing directory")

    def _read(path: str) -> str:
        """Read a text file.

        Args:
            path: The file's path, relative to the folder you may access.
        """
        try:
            return read_file(base, path)
        except FileToolError as exc:
            raise ToolException(f"Error: {exc}") from exc

    def _list(path: str = ".") -> str:
        """List a folder's entries; folders end with "/".

        Args:
            path: The folder's path, relative to the folder you may access.
        """
        try:
            return list_dir(base, path)
        except FileToolError as exc:
            raise ToolException(f"Error: {exc}") from exc

    return [
        StructuredTool.from_function(
            _read, name="read_file", parse_docstring=True, handle_tool_error=True
        ),
        StructuredTool.from_function(
            _list, name="list_dir", parse_docstring=True, handle_tool_error=True
        ),
    ]


def get_builtin_tools(names: Sequence[str], *, root: str | Path = ".") -> list[BaseTool]:
    """The built-in tools with these names, in order; an unknown name is a ConfigurationError."""
    unknown = [n for n in names if n not in BUILTIN_TOOL_NAMES]
    if unknown:
        raise ConfigurationError(
            f"unknown tool {unknown[0]!r}; choose from {', '.join(BUILTIN_TOOL_NAMES)}"
        )
    files = {t.name: t for t in file_tools(root)} if {"read_file", "list_dir"} & set(names) else {}
    table: dict[str, BaseTool] = {"calculator": calculator, "clock": clock, **files}
    return [table[n] for n in dict.fromkeys(names)]
