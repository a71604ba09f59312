"""The live display on a real pseudo-terminal: events appear in the order they happened."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.openai_server import LoopbackServer, message, running

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


def run_in_pty(*args: str) -> tuple[int, str]:
    """Run the CLI with stdout and stderr on a pseudo-terminal; return its code and screen text."""
    code, raw = run_in_pty_code_raw(*args)
    return code, ANSI.sub("", raw)


def run_in_pty_raw(*args: str) -> str:
    """The CLI's raw terminal output (escape sequences included); it must exit 0."""
    code, raw = run_in_pty_code_raw(*args)
    assert code == 0, raw
    return raw


def run_in_pty_code_raw(*args: str) -> tuple[int, str]:
    """Run the CLI with stdout and stderr on a pseudo-terminal; return its code and raw output."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update({"TERM": "xterm-256color", "COLUMNS": "100", "LINES": "40"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "actloop", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=120), b"".join(chunks).decode(errors="replace")


def test_live_display_shows_call_observation_then_answer(server: LoopbackServer) -> None:
    server.script(
        message(
            "Let me compute.",
            [{"id": "c1", "name": "calculator", "arguments": json.dumps({"expression": "6 * 7"})}],
        ),
        message("The answer is 42."),
    )
    code, screen = run_in_pty(
        "run", "What is 6 * 7?", "--model", "openai:gpt-test", "--base-url", server.url
    )
    assert code == 0, screen
    call = screen.index('→ calculator({"expression": "6 * 7"})')
    observation = screen.index("← 42")
    answer = screen.index("The answer is 42.", observation)
    assert call < observation < answer
    assert "Answer" in screen[observation:]
    assert re.search(r"steps: 1 · tool calls: 1 · time: \d+\.\ds · tokens: 22 in / 14 out", screen)


def test_escapes_in_mcp_names_do_not_reach_the_terminal(server: LoopbackServer) -> None:
    """Issue 29, item 10: a server-declared name and a tool name holding escape sequences show as
    visible escapes in every line, the live spinner line (`running TOOL @ MCP server`) included."""
    script = Path(__file__).parents[1] / "mcp" / "servers" / "escapes.py"
    tool = "nap\x1b[2J\x1b]0;TOOL-TITLE\x07"
    server.script(
        message("", [{"id": "c1", "name": tool, "arguments": "{}"}]),
        message("Rested."),
    )
    raw = run_in_pty_raw(
        "run", "Nap.", "--model", "openai:gpt-test", "--base-url", server.url,
        "--tools", "clock", "--mcp", f"{sys.executable} {script}",
    )  # fmt: skip
    assert "Rested." in raw
    assert "\x1b]0;" not in raw  # no window-title write: every OSC stayed text
    assert "\x1b[2J" not in raw  # no clear-screen
    assert "running nap\\x1b[2J\\x1b]0;TOOL-TITLE\\x07" in ANSI.sub("", raw)  # the spinner line
