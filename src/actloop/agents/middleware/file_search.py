"""`FilesystemFileSearchMiddleware` (LangChain 1.5's): `glob_search` and `grep_search` tools over
the files under a root directory, with LangChain's options, texts and output formats.

Every path stays inside the root: a `..`/`~` path or pattern is refused, each match is resolved
(symlinks followed) and dropped unless it lies inside the root, the directory walk does not follow
symlinked directories, and a file is read through one descriptor whose real path is checked again
(so a symlink swapped in after the check is not followed out). Work and output are bounded beyond
LangChain's: files over `max_file_size_mb` are skipped (as LangChain does), a search stops after
`search_timeout` seconds (glob checks it between matches, grep between lines and, when the
`regex` package is installed, inside each match: Python's `re` backtracks without a bound), and
an answer gives at most `max_results` lines.
"""

from __future__ import annotations

import fnmatch
import json
import operator
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from actloop.agents.middleware.types import AgentMiddleware
from actloop.tools import BaseTool, tool

__all__ = ["FilesystemFileSearchMiddleware"]

Results = dict[str, list[tuple[int, str]]]
_RG_TIMEOUT = 30


class _SearchTimeout(Exception):
    """A search ran past its deadline."""


def _is_within_root(candidate: Path, root: Path) -> bool:
    """Whether `candidate`, resolved (symlinks followed, `..` normalised), lies inside `root`."""
    try:
        return candidate.resolve().is_relative_to(root.resolve())
    except (OSError, ValueError, RuntimeError):
        return False


def _expand_include_patterns(pattern: str) -> list[str] | None:
    """`*.{py,pyi}` as `["*.py", "*.pyi"]`; None for unbalanced or empty braces."""
    if "}" in pattern and "{" not in pattern:
        return None
    expanded: list[str] = []

    def expand(current: str) -> None:
        start = current.find("{")
        if start == -1:
            expanded.append(current)
            return
        end = current.find("}", start)
        if end == -1:
            raise ValueError
        inner = current[start + 1 : end]
        if not inner:
            raise ValueError
        for option in inner.split(","):
            expand(current[:start] + option + current[end + 1 :])

    try:
        expand(pattern)
    except ValueError:
        return None
    return expanded


def _is_valid_include_pattern(pattern: str) -> bool:
    """Whether an include glob is usable: not empty, no NUL or newline, braces balanced."""
    if not pattern or any(char in pattern for char in ("\x00", "\n", "\r")):
        return False
    expanded = _expand_include_patterns(pattern)
    if expanded is None:
        return False
    try:
        for candidate in expanded:
            re.compile(fnmatch.translate(candidate))
    except re.error:
        return False
    return True


def _match_include_pattern(basename: str, pattern: str) -> bool:
    """Whether a file name matches the include glob (braces expanded)."""
    expanded = _expand_include_patterns(pattern)
    if not expanded:
        return False
    return any(fnmatch.fnmatch(basename, candidate) for candidate in expanded)


def _bounded_search(pattern: str) -> Callable[[str, float], bool]:
    """`search(line, deadline)`: whether `pattern` occurs in `line`, raising `_SearchTimeout`
    past `deadline`. With the `regex` package each match is interrupted at the deadline;
    without it Python's `re` runs each line to its end (LangChain's behaviour)."""
    try:
        import regex  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - the regex package is installed with tiktoken
        compiled = re.compile(pattern)

        def search_re(line: str, deadline: float) -> bool:
            if time.monotonic() > deadline:
                raise _SearchTimeout
            return compiled.search(line) is not None

        return search_re

    bounded: Any = regex.compile(pattern)  # pyright: ignore[reportUnknownMemberType]

    def search_regex(line: str, deadline: float) -> bool:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _SearchTimeout
        try:
            return bounded.search(line, timeout=remaining) is not None
        except TimeoutError as err:
            raise _SearchTimeout from err

    return search_regex


def _read_inside(path: Path, root: Path, max_bytes: int) -> str | None:
    """The UTF-8 text of `path` if its open descriptor is a regular file inside `root` of at
    most `max_bytes`; else None. The descriptor's real path is checked (Linux), so a symlink
    swapped in between the walk's check and the open is not followed out of the root."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path.resolve(), flags)
    except (OSError, RuntimeError):
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            info = os.fstat(fd)
            if not _regular(info.st_mode) or info.st_size > max_bytes:
                return None
            if sys.platform.startswith("linux"):
                real = Path(os.readlink(f"/proc/self/fd/{fd}"))
                if not real.is_relative_to(root):
                    return None
            data = handle.read(max_bytes + 1)
        except OSError:
            return None
    if len(data) > max_bytes:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _regular(mode: int) -> bool:
    """Whether a stat mode is a regular file."""
    import stat

    return stat.S_ISREG(mode)


def _capped(lines: list[str], limit: int) -> str:
    """`lines` joined, at most `limit` of them and then a line saying how many were left out."""
    if len(lines) <= limit:
        return "\n".join(lines)
    left = len(lines) - limit
    return "\n".join([*lines[:limit], f"... {left} more results not shown"])


class FilesystemFileSearchMiddleware(AgentMiddleware):
    """Adds `glob_search` (file names) and `grep_search` (file contents) over a root directory.

    `root_path`, `use_ripgrep` (ripgrep when installed, else Python) and `max_file_size_mb` are
    LangChain's options. actloop's bounds: `search_timeout` seconds a search may take (30, as
    LangChain's ripgrep call) and `max_results` lines a tool answers with (1,000).
    """

    def __init__(
        self,
        *,
        root_path: str,
        use_ripgrep: bool = True,
        max_file_size_mb: int = 10,
        search_timeout: float = 30.0,
        max_results: int = 1000,
    ) -> None:
        self.root_path = Path(root_path).resolve()
        self.use_ripgrep = use_ripgrep
        self.max_file_size_bytes = max_file_size_mb * 1024 * 1024
        self.search_timeout = search_timeout
        self.max_results = max_results
        self.glob_search: BaseTool = _glob_tool(self)
        self.grep_search: BaseTool = _grep_tool(self)
        self.tools = [self.glob_search, self.grep_search]

    # -- glob ---------------------------------------------------------------------------------

    def find_files(self, pattern: str, path: str) -> str:
        """The `glob_search` tool's answer: matching files, newest first."""
        try:
            base_full = self._validate_and_resolve_path(path)
        except ValueError:
            return "No files found"
        if not base_full.is_dir():
            return "No files found"
        # a `..` or absolute pattern would be expanded outside the root (LangChain refuses them;
        # a `~` is never expanded by glob, and the containment check drops any other escape)
        if pattern.startswith("/") or any(part == ".." for part in pattern.split("/")):
            return "No files found"
        deadline = time.monotonic() + self.search_timeout
        matching: list[tuple[str, str]] = []
        try:
            for match in base_full.glob(pattern):
                if time.monotonic() > deadline:
                    break
                if match.is_file() and _is_within_root(match, self.root_path):
                    modified = datetime.fromtimestamp(match.stat().st_mtime, tz=timezone.utc)
                    matching.append(
                        ("/" + str(match.relative_to(self.root_path)), modified.isoformat())
                    )
        except (OSError, ValueError, NotImplementedError):
            return "No files found"
        if not matching:
            return "No files found"
        matching.sort(key=operator.itemgetter(1), reverse=True)
        return _capped([p for p, _ in matching], self.max_results)

    # -- grep ---------------------------------------------------------------------------------

    def find_in_files(self, pattern: str, path: str, include: str | None, output_mode: str) -> str:
        """The `grep_search` tool's answer in `output_mode`."""
        try:
            re.compile(pattern)
        except re.error as e:
            return f"Invalid regex pattern: {e}"
        if include and not _is_valid_include_pattern(include):
            return "Invalid include pattern"
        results: Results | None = None
        try:
            if self.use_ripgrep:
                with suppress(
                    FileNotFoundError, subprocess.CalledProcessError, subprocess.TimeoutExpired
                ):
                    results = self._ripgrep_search(pattern, path, include)
            if results is None:
                results = self._python_search(pattern, path, include)
        except _SearchTimeout:
            return f"Search timed out after {self.search_timeout:g} seconds"
        if not results:
            return "No matches found"
        return _capped(self._format_grep_results(results, output_mode), self.max_results)

    def _validate_and_resolve_path(self, path: str) -> Path:
        """The directory a virtual path (`/src`) names under the root; ValueError for `..`,
        `~` or a path that resolves outside the root."""
        if not path.startswith("/"):
            path = "/" + path
        if ".." in path or "~" in path:
            raise ValueError("Path traversal not allowed")
        full_path = (self.root_path / path.lstrip("/")).resolve()
        try:
            full_path.relative_to(self.root_path)
        except ValueError:
            raise ValueError(f"Path outside root directory: {path}") from None
        return full_path

    def _existing_base(self, base_path: str) -> Path | None:
        """The search's base directory under the root, or None (outside the root or missing:
        the search finds nothing, as LangChain's does)."""
        try:
            base_full = self._validate_and_resolve_path(base_path)
        except ValueError:
            return None
        return base_full if base_full.exists() else None

    def _ripgrep_search(self, pattern: str, base_path: str, include: str | None) -> Results:
        """Search with ripgrep (`rg --json`, the pattern after `--`); linear-time matching."""
        base_full = self._existing_base(base_path)
        if base_full is None:
            return {}
        cmd = ["rg", "--json"]
        if include:
            cmd.extend(["--glob", include])
        cmd.extend(["--", pattern, str(base_full)])
        timeout = min(_RG_TIMEOUT, self.search_timeout)
        try:
            result = subprocess.run(
                cmd, capture_output=True, text=True, timeout=timeout, check=False
            )
        except (subprocess.TimeoutExpired, FileNotFoundError):
            return self._python_search(pattern, base_path, include)
        results: Results = {}
        for line in result.stdout.splitlines():
            with suppress(json.JSONDecodeError, KeyError, TypeError):
                data = json.loads(line)
                if data["type"] != "match":
                    continue
                found = Path(data["data"]["path"]["text"])
                if not _is_within_root(found, self.root_path):
                    continue
                virtual_path = "/" + str(found.relative_to(self.root_path))
                text = data["data"]["lines"]["text"].rstrip("\n")
                results.setdefault(virtual_path, []).append((data["data"]["line_number"], text))
        return results

    def _python_search(self, pattern: str, base_path: str, include: str | None) -> Results:
        """Search in Python: the walk skips symlinked directories, files outside the root and
        files over the size bound; matching stops at the search's deadline."""
        base_full = self._existing_base(base_path)
        if base_full is None:
            return {}
        search = _bounded_search(pattern)
        deadline = time.monotonic() + self.search_timeout
        results: Results = {}
        for file_path in self._walk(base_full, include):
            content = _read_inside(file_path, self.root_path, self.max_file_size_bytes)
            if content is None:
                continue
            for line_num, line in enumerate(content.splitlines(), 1):
                if search(line, deadline):
                    virtual_path = "/" + str(file_path.relative_to(self.root_path))
                    results.setdefault(virtual_path, []).append((line_num, line))
        return results

    def _walk(self, base: Path, include: str | None) -> Iterator[Path]:
        """The files under `base` (symlinked directories not followed) inside the root that
        match `include`."""
        for walk_root, _dirs, files in os.walk(base, followlinks=False):
            for name in files:
                file_path = Path(walk_root) / name
                if not _is_within_root(file_path, self.root_path) or not file_path.is_file():
                    continue
                if include and not _match_include_pattern(name, include):
                    continue
                yield file_path

    @staticmethod
    def _format_grep_results(results: Results, output_mode: str) -> list[str]:
        """The answer's lines: file paths, `file:line:content` or `file:count`."""
        if output_mode == "content":
            return [f"{f}:{n}:{line}" for f in sorted(results) for n, line in results[f]]
        if output_mode == "count":
            return [f"{f}:{len(results[f])}" for f in sorted(results)]
        return sorted(results)


def _described(fn: Callable[..., str]) -> BaseTool:
    """`fn` as a tool described by its docstring indented as LangChain's (whose tools are
    defined four spaces deeper, in `__init__`, and keep the docstring's indentation)."""
    import inspect

    first, *rest = inspect.cleandoc(fn.__doc__ or "").splitlines()
    text = "\n".join([first, *(f"            {line}" if line else "" for line in rest)])
    return tool(fn, description=text)


def _glob_tool(middleware: FilesystemFileSearchMiddleware) -> BaseTool:
    """The `glob_search` tool (LangChain's name, docstring and arguments)."""

    def glob_search(pattern: str, path: str = "/") -> str:
        """Fast file pattern matching tool that works with any codebase size.

        Supports glob patterns like `**/*.js` or `src/**/*.ts`.

        Returns matching file paths sorted by modification time.

        Use this tool when you need to find files by name patterns.

        Args:
            pattern: The glob pattern to match files against.
            path: The directory to search in. If not specified, searches from root.

        Returns:
            Newline-separated list of matching file paths, sorted by modification
            time (most recently modified first). Returns `'No files found'` if no
            matches.
        """
        return middleware.find_files(pattern, path)

    return _described(glob_search)


def _grep_tool(middleware: FilesystemFileSearchMiddleware) -> BaseTool:
    """The `grep_search` tool (LangChain's name, docstring and arguments)."""

    def grep_search(
        pattern: str,
        path: str = "/",
        include: str | None = None,
        output_mode: Literal["files_with_matches", "content", "count"] = "files_with_matches",
    ) -> str:
        """Fast content search tool that works with any codebase size.

        Searches file contents using regular expressions. Supports full regex
        syntax and filters files by pattern with the include parameter.

        Args:
            pattern: The regular expression pattern to search for in file contents.
            path: The directory to search in. If not specified, searches from root.
            include: File pattern to filter (e.g., `'*.js'`, `'*.{ts,tsx}'`).
            output_mode: Output format:

                - `'files_with_matches'`: Only file paths containing matches
                - `'content'`: Matching lines with `file:line:content` format
                - `'count'`: Count of matches per file

        Returns:
            Search results formatted according to `output_mode`.
                Returns `'No matches found'` if no results.
        """
        return middleware.find_in_files(pattern, path, include, output_mode)

    return _described(grep_search)
