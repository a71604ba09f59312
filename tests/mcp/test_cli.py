"""`actloop run --mcp`: the embedded model answers through a real MCP server's tool; the live
display names the server; a server that cannot start is a configuration error (exit 2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import psutil
import pytest
from mcp_fixtures import DEMO, SERVERS, server_processes

from support.openai_server import LoopbackServer, message, running

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


def _servers_anywhere(script: str) -> list[psutil.Process]:
    """Live processes on this machine running `script` (the CLI's children outlive it if
    orphaned, so they are looked for everywhere)."""
    found: list[psutil.Process] = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if script in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


@pytest.fixture
def model() -> Iterator[LoopbackServer]:
    """A loopback OpenAI-compatible server playing the model's scripted replies."""
    yield from running()


def _calls(*calls: tuple[str, str, dict[str, object]]) -> object:
    return message("", [{"id": i, "name": n, "arguments": json.dumps(a)} for i, n, a in calls])


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
    assert _servers_anywhere(ARITH) == []


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
    assert _servers_anywhere(ARITH) == []


def test_a_hung_mcp_tool_ends_at_the_runs_timeout_with_its_steps(model: LoopbackServer) -> None:
    model.script(
        _calls(("c1", "add", {"a": 1, "b": 2})),
        _calls(("c2", "hang", {})),
        message("never asked"),
    )
    started = time.monotonic()
    done = run_cli(
        "run",
        "go",
        "--model",
        "openai:test",
        "--base-url",
        model.url,
        "--mcp",
        f"{sys.executable} {DEMO}",
        "--timeout",
        "8",
        "--json",
    )
    assert time.monotonic() - started < 60  # liveness: it ended instead of hanging
    assert done.returncode == 3, done.stderr
    record = json.loads(done.stdout)
    assert record["stopped"] is True
    steps = [(s[0]["kwargs"]["tool"], s[1]) for s in record["intermediate_steps"]]
    assert steps == [("add", {"result": 3})]
    assert _servers_anywhere(DEMO) == []


def test_ctrl_c_during_a_hung_mcp_call(model: LoopbackServer) -> None:
    model.script(_calls(("c1", "add", {"a": 1, "b": 2})), _calls(("c2", "hang", {})))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    command = ["run", "go", "--model", "openai:test", "--base-url", model.url]
    command += ["--mcp", f"{sys.executable} {DEMO}"]
    process = subprocess.Popen(
        [sys.executable, "-m", "actloop", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    lines = [process.stdout.readline() for _ in range(4)]
    assert lines == [
        "MCP server 'demo': add, shout, profile, picture, boom, hang, crash, noisy, garble, "
        "whoami, big, traced, unlock\n",
        '→ add({"a": 1, "b": 2}) @ MCP server \'demo\'\n',
        "← {'result': 3}\n",
        "→ hang({}) @ MCP server 'demo'\n",
    ]
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err == "\ninterrupted after 1 step(s):\n  add({'a': 1, 'b': 2}) -> {'result': 3}\n"
    assert _servers_anywhere(DEMO) == []
    assert server_processes() == []
