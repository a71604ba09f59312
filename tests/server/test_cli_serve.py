"""`actloop serve` as a process: the agent from `run`'s options, or a `module:attr` factory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langchain_core.agents import AgentActionMessageLog
from langserve import RemoteRunnable

from support.openai_server import LoopbackServer, message, running
from support.serve import free_port

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture
def model_server() -> Iterator[LoopbackServer]:
    yield from running()


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ACTLOOP_"))}
    env["PYTHONPATH"] = str(TESTS)
    return env


def start_serve(*args: str) -> tuple[subprocess.Popen[bytes], str]:
    """`actloop serve ARGS` on a free port; returns the process and its base URL once healthy."""
    port = free_port()
    cmd = [sys.executable, "-m", "actloop", "serve", "--port", str(port), *args]
    proc = subprocess.Popen(cmd, env=_env(), stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            if httpx.get(f"{url}/health").status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.05)
    stop(proc)
    raise AssertionError("actloop serve did not come up within 60 s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(timeout=30)
    if proc.stderr is not None:
        proc.stderr.close()


def test_any_other_host_needs_a_token() -> None:
    cmd = [sys.executable, "-m", "actloop", "serve", "--host", "0.0.0.0", "--port", "1"]
    done = subprocess.run(cmd, env=_env(), capture_output=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.decode().strip() == "actloop: error: binding 0.0.0.0 needs --token"


def test_a_bad_executor_spec_is_a_configuration_error() -> None:
    cmd = [sys.executable, "-m", "actloop", "serve", "--executor", "server.agents:nothing"]
    done = subprocess.run(cmd, env=_env(), capture_output=True, timeout=60)
    assert done.returncode == 2
    assert "cannot load 'server.agents:nothing'" in done.stderr.decode()


def test_serves_the_agent_built_from_run_options(model_server: LoopbackServer) -> None:
    call = {"id": "c1", "name": "calculator", "arguments": json.dumps({"expression": "6 * 7"})}
    model_server.script(message("", [call]), message("It is 42."))
    model_server.script(message("", [call]), message("Still 42."))
    proc, url = start_serve("--model", "openai:gpt-test", "--base-url", model_server.url)
    try:
        agent = RemoteRunnable(f"{url}/agent/")
        assert agent.invoke({"input": "6 * 7?"}) == {"input": "6 * 7?", "output": "It is 42."}
        chunks = list(agent.stream({"input": "6 * 7?"}))
    finally:
        stop(proc)
    assert [sorted(c) for c in chunks] == [
        ["actions", "messages"],
        ["messages", "steps"],
        ["messages", "output"],
    ]
    action = chunks[0]["actions"][0]
    assert isinstance(action, AgentActionMessageLog)
    assert (action.tool, action.tool_input) == ("calculator", {"expression": "6 * 7"})
    assert chunks[1]["steps"][0]["observation"] == "42"
    assert chunks[2]["output"] == "Still 42."


def test_serves_a_module_factory_with_durable_threads(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    proc, url = start_serve(
        "--executor", "server.agents:make_executor", "--db", str(db), "--token", "t0k"
    )
    auth = {"Authorization": "Bearer t0k"}
    try:
        with httpx.Client(base_url=url, headers=auth) as client:
            started = client.post(
                "/threads", json={"input": {"input": "add 5 6"}, "thread_id": "a"}
            )
            assert started.status_code == 202
            with client.stream("GET", "/threads/a/events") as events:
                events.read()
            state = client.get("/threads/a").json()
    finally:
        stop(proc)
    assert (state["status"], state["output"]) == ("finished", {"output": "The sum is 11."})
    assert state["steps"] == [
        {"id": "0-0", "tool": "add", "tool_input": {"a": 5, "b": 6}, "observation": 11}
    ]
