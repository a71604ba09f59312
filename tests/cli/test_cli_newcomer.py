"""What a newcomer expects of `actloop run` and `actloop runs resume`, through the real CLI in a
subprocess: usage errors, tool names in `--help`, a durable run's thread id, which limit stopped a
run, Ctrl-C that keeps a run resumable, and approvals decided from the command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from actloop.serialization import loads
from actloop.tools.builtin import BUILTIN_TOOL_NAMES
from support.openai_server import LoopbackServer, message, running


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "actloop", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        cwd=cwd,
    )


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


def call(name: str, arguments: dict[str, object], id: str = "call_1") -> dict[str, str]:
    return {"id": id, "name": name, "arguments": json.dumps(arguments)}


def model(server: LoopbackServer) -> list[str]:
    return ["--model", "openai:gpt-test", "--base-url", server.url]


USAGE_END = 'actloop run: error: {}; ask one in quotes, e.g. actloop run "What is 12 * 7 + 5?"\n'


def test_no_question_prints_usage_and_exits_2() -> None:
    done = run_cli("run")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("usage: actloop run [-h]")
    assert done.stderr.endswith(USAGE_END.format("no question"))


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_an_empty_question_is_a_usage_error(question: str) -> None:
    done = run_cli("run", question)
    assert done.returncode == 2
    assert done.stderr.endswith(USAGE_END.format("an empty question"))


def test_help_names_every_built_in_tool() -> None:
    done = run_cli("run", "--help")
    assert done.returncode == 0
    listed = done.stdout.split("built-in tools (--tools NAME,NAME):\n", 1)[1]
    names = [line.split()[0] for line in listed.splitlines()[: len(BUILTIN_TOOL_NAMES)]]
    assert sorted(names) == sorted(BUILTIN_TOOL_NAMES)


def test_a_durable_run_prints_its_thread_id(server: LoopbackServer, tmp_path: Path) -> None:
    server.script(message("Hello there."))
    db = str(tmp_path / "runs.sqlite")
    done = run_cli("run", "hi", "--db", db, "--json", *model(server))
    assert done.returncode == 0, done.stderr
    thread = loads(done.stdout)["thread_id"]
    assert len(thread) == 12
    assert done.stderr == f"actloop: durable run, thread {thread} in {db}\n"
    shown = run_cli("runs", "show", thread, "--db", db)
    assert shown.stdout.splitlines()[:2] == [f"thread:  {thread}", "status:  finished"]


def test_a_stop_names_the_iteration_limit(server: LoopbackServer) -> None:
    server.script(message("", [call("clock", {})]))
    done = run_cli("run", "what time?", "--max-iterations", "1", *model(server))
    assert done.returncode == 3, done.stderr
    assert (
        "Stopped by the iteration limit (--max-iterations 1): no answer before the limit."
    ) in done.stdout.splitlines()
    as_json = run_cli("run", "what time?", "--max-iterations", "0", "--json", *model(server))
    assert loads(as_json.stdout)["stop_reason"] == "max_iterations"


def test_a_stop_names_the_time_limit(server: LoopbackServer) -> None:
    slow = message("", [call("clock", {})])
    slow.delay = 2.0
    server.script(slow)
    done = run_cli("run", "what time?", "--timeout", "0.5", *model(server))
    assert done.returncode == 3, done.stderr
    assert (
        "Stopped by the time limit (--timeout 0.5 s): no answer before the limit."
    ) in done.stdout.splitlines()


def _interrupt(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Start `actloop run ARGS`, wait for its durable-run line, then Ctrl-C it mid-model-call."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "actloop", "run", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()
    time.sleep(1.5)  # inside the model call, which the server holds for 30 s
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, first + err)


def test_ctrl_c_in_a_durable_run_says_how_to_resume(server: LoopbackServer, tmp_path: Path) -> None:
    held = message("too late")
    held.delay = 30.0
    server.script(message("", [call("calculator", {"expression": "6 * 7"})]), held)
    db = str(tmp_path / "runs.sqlite")
    done = _interrupt(["6 times 7?", "--db", db, "--thread", "t1", *model(server)])
    assert done.returncode == 130
    resume = f"actloop runs resume t1 --db {db} --model openai:gpt-test --base-url {server.url}"
    assert done.stderr.endswith(
        "interrupted after 1 step(s):\n"
        "  calculator({'expression': '6 * 7'}) -> '42'\n"
        f"thread t1 keeps its finished steps; resume it with:\n  {resume}\n"
    )
    listed = run_cli("runs", "list", "--db", db).stdout.splitlines()
    assert listed[1].split()[:3] == ["t1", "interrupted", "1"]
    server.script(message("It is 42."))
    resumed = run_cli(*resume.split()[1:])
    assert (resumed.returncode, resumed.stdout) == (0, "It is 42.\n")
    assert len(server.requests) == 3  # the calculator step was not asked for again


APP = textwrap.dedent(
    """
    from actloop.agents import AgentAction, AgentFinish
    from actloop.executor import AgentExecutor
    from actloop.testing import ScriptedAgent
    from actloop.tools import tool


    @tool(requires_approval=True)
    def delete(name: str) -> str:
        \"\"\"Delete the file NAME.\"\"\"
        return f"deleted {name}"


    def decide(intermediate_steps):
        if not intermediate_steps:
            return AgentAction("delete", {"name": "old.txt"}, "")
        return AgentFinish({"output": f"done: {intermediate_steps[-1][1]}"}, "")


    def make():
        return AgentExecutor(agent=ScriptedAgent([decide, decide]), tools=[delete])
    """
)


def _paused(tmp_path: Path) -> tuple[str, str]:
    """A run of app:make paused on its `delete` call in tmp_path/runs.sqlite: (db, call id)."""
    (tmp_path / "app.py").write_text(APP)
    start = textwrap.dedent(
        """
        import json, sys
        from actloop.checkpoint import SqliteCheckpointer
        from app import make
        executor = make()
        executor.checkpointer = SqliteCheckpointer("runs.sqlite")
        result = executor.invoke({"input": "tidy"}, {"configurable": {"thread_id": "t1"}})
        print(json.dumps(result["pending_approvals"][0]["id"]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", start], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return str(tmp_path / "runs.sqlite"), json.loads(done.stdout)


def test_runs_resume_approves_with_the_executor_named(tmp_path: Path) -> None:
    db, call_id = _paused(tmp_path)
    refused = run_cli("runs", "resume", "t1", "--db", db, "--approve", call_id)
    assert refused.returncode == 2
    assert refused.stdout == (
        "actloop: error: thread 't1' used tools no built-in provides (delete): pass the MCP "
        "servers it was started with (--mcp, --mcp-url), or --executor\n"
    )
    done = run_cli(
        "runs", "resume", "t1", "--db", db, "--executor", "app:make", "--approve", cwd=tmp_path
    )
    assert (done.returncode, done.stdout) == (0, "done: deleted old.txt\n")


def test_runs_resume_edits_a_call(tmp_path: Path) -> None:
    db, call_id = _paused(tmp_path)
    done = run_cli(
        "runs", "resume", "t1", "--db", db, "--executor", "app:make",
        "--edit", f'{call_id}={{"name": "new.txt"}}', cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "done: deleted new.txt\n")


def test_runs_resume_rejects_a_call(tmp_path: Path) -> None:
    db, call_id = _paused(tmp_path)
    done = run_cli(
        "runs", "resume", "t1", "--db", db, "--executor", "app:make", "--reject", call_id,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("done: ")
    assert "deleted" not in done.stdout


WEATHER = textwrap.dedent(
    """
    # A stdio MCP server written out by hand (JSON-RPC lines), with one tool: weather(city).
    import json, sys
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method, params = msg["method"], msg.get("params") or {}
        if method == "initialize":
            result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "weather", "version": "1"}}
        elif method == "tools/list":
            schema = {"type": "object", "properties": {"city": {"type": "string"}},
                      "required": ["city"]}
            result = {"tools": [{"name": "weather", "description": "Today's weather in a city.",
                                 "inputSchema": schema}]}
        elif method == "tools/call":
            city = params["arguments"]["city"]
            result = {"content": [{"type": "text", "text": f"sunny in {city}"}], "isError": False}
        else:
            result = {}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    """
)


def test_runs_resume_takes_the_mcp_servers_the_run_used(
    server: LoopbackServer, tmp_path: Path
) -> None:
    (tmp_path / "weather.py").write_text(WEATHER)
    mcp = f"{sys.executable} {tmp_path / 'weather.py'}"
    held = message("too late")
    held.delay = 30.0
    server.script(message("", [call("weather", {"city": "Oslo"})]), held)
    db = str(tmp_path / "runs.sqlite")
    done = _interrupt(
        ["Weather in Oslo?", "--db", db, "--thread", "t1", "--mcp", mcp, *model(server)]
    )
    assert done.returncode == 130, done.stderr
    assert "  weather({'city': 'Oslo'}) -> 'sunny in Oslo'\n" in done.stderr
    resume = ["runs", "resume", "t1", "--db", db, *model(server)]
    refused = run_cli(*resume)
    assert refused.returncode == 2
    assert refused.stdout == (
        "actloop: error: thread 't1' used tools no built-in provides (weather): pass the MCP "
        "servers it was started with (--mcp, --mcp-url), or --executor\n"
    )
    gone = run_cli(*resume, "--mcp", f"{sys.executable} -c pass")
    assert gone.returncode == 2
    assert gone.stdout.startswith("actloop: error: ")
    server.script(message("Sunny."))
    resumed = run_cli(*resume, "--mcp", mcp)
    assert (resumed.returncode, resumed.stdout) == (0, "Sunny.\n")
