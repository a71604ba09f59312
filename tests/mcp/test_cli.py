"""`actloop run --mcp`: the embedded model answers through a real MCP server's tool; the live
display names the server; a server that cannot start is a configuration error (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil
from mcp_fixtures import SERVERS

ARITH = str(SERVERS / "arith.py")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [sys.executable, "-m", "actloop", *args],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )


def _arith_servers() -> list[psutil.Process]:
    found: list[psutil.Process] = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if ARITH in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


def test_the_embedded_model_answers_through_an_mcp_tool() -> None:
    done = run_cli(
        "run",
        "What is 12 * 7 + 5?",
        "--tools",
        "clock",
        "--mcp",
        f"{sys.executable} {ARITH}",
        "--seed",
        "0",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "MCP server 'arith': calculator",
        '→ calculator({"expression": "12 * 7 + 5"}) @ MCP server \'arith\'',
        "← 89",
    ]
    assert "Answer: The answer is 89." in lines
    assert _arith_servers() == []


def test_a_server_that_cannot_start_is_a_configuration_error() -> None:
    done = run_cli("run", "hi", "--mcp", "/nonexistent/mcp-server --port 1")
    assert done.returncode == 2
    assert done.stderr == (
        "actloop: error: could not start or reach MCP server 'mcp-server --port 1': "
        "[Errno 2] No such file or directory: '/nonexistent/mcp-server'\n"
    )
    done = run_cli("run", "hi", "--mcp", " ")
    assert (done.returncode, done.stderr) == (
        2,
        'actloop: error: --mcp needs a command, e.g. --mcp "python server.py"\n',
    )


def test_a_name_clash_gives_the_servers_tools_its_prefix() -> None:
    # no model server at this address: the run fails after the MCP tools were added and shown
    done = run_cli(
        "run",
        "hi",
        "--model",
        "openai:any",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--tools",
        "calculator,clock",
        "--mcp",
        f"{sys.executable} {ARITH}",
        "--mcp",
        f"{sys.executable} {ARITH}",
    )
    assert done.returncode == 4
    assert done.stdout.splitlines() == ["MCP server 'arith': arith_calculator, arith2_calculator"]
    assert _arith_servers() == []
