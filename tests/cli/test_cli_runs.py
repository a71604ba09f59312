"""`actloop run` as a user runs it: a subprocess on the local model or an OpenAI-style server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from actloop.serialization import loads
from support.openai_server import LoopbackServer, message, running


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [sys.executable, "-m", "actloop", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd,
    )


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


def call(name: str, arguments: dict[str, object], id: str = "call_1") -> dict[str, str]:
    return {"id": id, "name": name, "arguments": json.dumps(arguments)}


def scripted(server: LoopbackServer, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, "--model", "openai:gpt-test", "--base-url", server.url)


def test_demo_question_on_the_local_model_as_json() -> None:
    done = run_cli("run", "What is 12 * 7 + 5?", "--json", "--seed", "0")
    assert done.returncode == 0, done.stderr
    record = loads(done.stdout)
    assert record["input"] == "What is 12 * 7 + 5?"
    assert "89" in record["output"]
    assert record["stopped"] is False
    (action, observation), *_ = record["intermediate_steps"]
    assert (action.tool, observation) == ("calculator", "89")
    assert "\x1b[" not in done.stdout


def test_tool_calling_run_against_a_server(server: LoopbackServer) -> None:
    server.script(
        message("", [call("calculator", {"expression": "12 * 7 + 5"})]),
        message("The answer is 89."),
    )
    done = scripted(server, "run", "What is 12 * 7 + 5?", "--json")
    assert done.returncode == 0, done.stderr
    record = loads(done.stdout)
    assert record["output"] == "The answer is 89."
    assert [(a.tool, a.tool_input, o) for a, o in record["intermediate_steps"]] == [
        ("calculator", {"expression": "12 * 7 + 5"}, "89")
    ]
    assert server.bodies[0]["tools"][0]["function"]["name"] == "calculator"


def test_plain_output_shows_call_observation_and_answer(server: LoopbackServer) -> None:
    server.script(
        message("", [call("calculator", {"expression": "2 ** 10"})]),
        message("It is 1024."),
    )
    done = scripted(server, "run", "What is 2 to the 10th?")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ['→ calculator({"expression": "2 ** 10"})', "← 1024"]
    assert "Answer: It is 1024." in lines
    assert lines[-1].startswith("steps: 1 · tool calls: 1 · time: ")


def test_a_stopped_run_exits_3(server: LoopbackServer) -> None:
    server.script(*[message("", [call("clock", {}, f"c{i}")]) for i in range(2)])
    done = scripted(server, "run", "loop forever", "--max-iterations", "2", "--json")
    assert done.returncode == 3, done.stderr
    record = loads(done.stdout)
    assert record["stopped"] is True
    assert record["output"] == "Agent stopped due to max iterations."
    assert len(record["intermediate_steps"]) == 2


def test_model_server_error_exits_4_with_one_line(server: LoopbackServer) -> None:
    done = run_cli("run", "hi", "--model", "openai:gpt-test", "--base-url", "http://127.0.0.1:9/v1")
    assert done.returncode == 4
    assert done.stderr.startswith("actloop: error: the model failed: ")
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_hostile_path_is_refused_as_an_observation(server: LoopbackServer, tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "secret.txt").write_text("top secret")
    (tmp_path / "root" / "link").symlink_to(tmp_path / "secret.txt")
    server.script(
        message("", [call("read_file", {"path": "../secret.txt"}, "a")]),
        message("", [call("read_file", {"path": "link"}, "b")]),
        message("I cannot read it."),
    )
    done = scripted(
        server,
        "run",
        "read the secret",
        "--tools",
        "read_file,list_dir",
        "--root",
        str(tmp_path / "root"),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    observations = [o for _, o in loads(done.stdout)["intermediate_steps"]]
    assert observations == [
        "Error: '../secret.txt' is outside the directory you may access; use a path inside it",
        "Error: 'link' is outside the directory you may access; use a path inside it",
    ]
    assert "top secret" not in done.stdout


def test_calculator_bomb_is_refused_quickly(server: LoopbackServer) -> None:
    server.script(
        message("", [call("calculator", {"expression": "9 ** 9 ** 9"})]),
        message("", [call("calculator", {"expression": "(" * 5000 + "1" + ")" * 5000})]),
        message("Too big."),
    )
    done = scripted(server, "run", "big", "--json", "--timeout", "20")
    assert done.returncode == 0, done.stderr
    observations = [o for _, o in loads(done.stdout)["intermediate_steps"]]
    assert observations == [
        "Error: the result is too large (integers are limited to about 1000 digits)",
        "Error: the expression is too long (10001 characters; the limit is 1000)",
    ]
