"""`actloop serve` as a process: the agent from `run`'s options, or a `module:attr` factory."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langchain_core.agents import AgentActionMessageLog
from langserve import RemoteRunnable

from support.openai_server import LoopbackServer, message, running
from support.serve import serve_env, start_serve, stop_serve


@pytest.fixture
def model_server() -> Iterator[LoopbackServer]:
    yield from running()


def test_any_other_host_needs_a_token() -> None:
    cmd = [sys.executable, "-m", "actloop", "serve", "--host", "0.0.0.0", "--port", "1"]
    done = subprocess.run(cmd, env=serve_env(), capture_output=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.decode().strip() == "actloop: error: binding 0.0.0.0 needs --token"


def test_a_bad_executor_spec_is_a_configuration_error() -> None:
    cmd = [sys.executable, "-m", "actloop", "serve", "--executor", "server.agents:nothing"]
    done = subprocess.run(cmd, env=serve_env(), capture_output=True, timeout=60)
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
        stop_serve(proc)
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
            assert client.post("/threads", json={"thread_id": "a"}).status_code == 200
            body = {"assistant_id": "agent", "input": {"input": "add 5 6"}}
            assert client.post("/threads/a/runs", json=body).status_code == 200
            with client.stream("GET", "/threads/a/events") as events:
                events.read()
            thread = client.get("/threads/a").json()
    finally:
        stop_serve(proc)
    values = thread["values"]
    assert (thread["status"], values["output"]) == ("idle", "The sum is 11.")
    assert [(m["type"], m.get("tool_calls"), m["content"]) for m in values["messages"][1:3]] == [
        ("ai", [{"name": "add", "args": {"a": 5, "b": 6}, "id": "0-0", "type": "tool_call"}], ""),
        ("tool", None, "11"),
    ]


def test_allowed_host_names_a_proxy_and_nothing_else_gets_in() -> None:
    proc, url = start_serve("--executor", "server.agents:make_executor", "--allowed-host", "a.test")
    try:
        proxied = httpx.get(f"{url}/agent/input_schema", headers={"Host": "a.test:8443"})
        rebound = httpx.get(
            f"{url}/agent/input_schema", headers={"Host": "rebind.attacker.example"}
        )
    finally:
        stop_serve(proc)
    assert proxied.status_code == 200
    assert (rebound.status_code, rebound.json()) == (
        421,
        {
            "error": "Host 'rebind.attacker.example' is not served here "
            "(see actloop serve --allowed-host)"
        },
    )
