"""`FilesystemFileSearchMiddleware` against LangChain 1.5's: the same scripted glob and grep calls
over the same files (escapes by `..`, `~`, absolute paths and symlinks among them), the final
states compared field by field, and the tools' schemas as the model is sent them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import langchain.agents.middleware as lc_mw
import pytest
from _both import reply
from langchain_core.utils.function_calling import convert_to_openai_tool as lc_openai_tool
from test_builtin_middleware_more import ask, run_both

import actloop.agents.middleware as al_mw
from actloop.tools import convert_to_openai_tool as al_openai_tool


def tree(root: Path) -> Path:
    """A small tree under `root/ws` with a secret beside it and symlinks pointing out."""
    ws = root / "ws"
    (ws / "src" / "nested").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("def hello():\n    return 'hi'\n", encoding="utf-8")
    (ws / "src" / "nested" / "b.py").write_text("HELLO = 1\nhello()\n", encoding="utf-8")
    (ws / "notes.txt").write_text("say hello\nnothing\n", encoding="utf-8")
    (ws / "data.bin").write_bytes(b"\xff\xfehello")
    (root / "secret.txt").write_text("hello secret\n", encoding="utf-8")
    (ws / "out.txt").symlink_to(root / "secret.txt")
    (ws / "outdir").symlink_to(root)
    for i, name in enumerate(["src/a.py", "src/nested/b.py", "notes.txt", "data.bin"]):
        os.utime(ws / name, (1_000_000 + i, 1_000_000 + i))
    return ws


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("glob_search", {"pattern": "**/*.py"}),
    ("glob_search", {"pattern": "*", "path": "/src"}),
    ("glob_search", {"pattern": "*.txt"}),
    ("glob_search", {"pattern": "../*.txt"}),
    ("glob_search", {"pattern": "*.txt", "path": "/outdir"}),
    ("glob_search", {"pattern": "*", "path": "~"}),
    ("grep_search", {"pattern": "hello"}),
    ("grep_search", {"pattern": "hello", "output_mode": "content"}),
    ("grep_search", {"pattern": "(?i)hello", "output_mode": "count", "include": "*.{py,txt}"}),
    ("grep_search", {"pattern": "hello", "path": "/../"}),
    ("grep_search", {"pattern": "[bad"}),
    ("grep_search", {"pattern": "x", "include": "*.{py"}),
    ("grep_search", {"pattern": "secret", "output_mode": "content"}),
]


@pytest.mark.parametrize("use_async", [False, True])
async def test_glob_and_grep_answers_equal_langchains(tmp_path: Path, use_async: bool) -> None:
    ws = tree(tmp_path)
    calls = [(name, args, f"c{i}") for i, (name, args) in enumerate(CALLS)]
    replies = [reply("", call, id=f"r{i}") for i, call in enumerate(calls)]
    replies.append(reply("done", id="rend"))
    lc, al = await run_both(
        replies,
        lambda m: [m.FilesystemFileSearchMiddleware(root_path=str(ws), use_ripgrep=False)],
        ask("find"),
        use_async=use_async,
        tools=[],
    )
    assert al == lc
    answers = [m["content"] for m in al[0]["messages"] if m["type"] == "tool"]
    assert answers == [
        "/src/nested/b.py\n/src/a.py",
        "/src/a.py",
        "/notes.txt",
        "No files found",
        "No files found",
        "No files found",
        "/notes.txt\n/src/a.py\n/src/nested/b.py",
        "/notes.txt:1:say hello\n/src/a.py:1:def hello():\n/src/nested/b.py:2:hello()",
        "/notes.txt:1\n/src/a.py:1\n/src/nested/b.py:2",
        "No matches found",
        "Invalid regex pattern: unterminated character set at position 0",
        "Invalid include pattern",
        "No matches found",
    ]


def test_tool_schemas_equal_langchains(tmp_path: Path) -> None:
    lc = lc_mw.FilesystemFileSearchMiddleware(root_path=str(tmp_path))
    al = al_mw.FilesystemFileSearchMiddleware(root_path=str(tmp_path))
    assert [al_openai_tool(t) for t in al.tools] == [lc_openai_tool(t) for t in lc.tools]


def test_results_are_bounded(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("x\n", encoding="utf-8")
    mw = al_mw.FilesystemFileSearchMiddleware(
        root_path=str(tmp_path), use_ripgrep=False, max_results=2
    )
    assert mw.grep_search.invoke({"pattern": "x"}) == (
        "/f0.txt\n/f1.txt\n... 3 more results not shown"
    )


def test_catastrophic_pattern_stops_at_the_deadline(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a" * 40 + "!\n", encoding="utf-8")
    mw = al_mw.FilesystemFileSearchMiddleware(
        root_path=str(tmp_path), use_ripgrep=False, search_timeout=0.2
    )
    assert mw.grep_search.invoke({"pattern": "^(a|a)+$"}) == "Search timed out after 0.2 seconds"
