"""Servers that hang, crash, print garbage, fail to start, restart, or get Ctrl-C: every call
ends with an observation or a typed error naming the server, and no server process is left."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time

import pytest
from mcp_fixtures import CHATTY, DEMO, HttpServer, server_processes

from actloop.mcp import MCPConnectionError, MCPTimeoutError, MCPToolset


def test_hang_sync_and_async(demo: MCPToolset) -> None:
    with pytest.raises(MCPTimeoutError) as caught:
        demo.call("hang", {})
    assert str(caught.value) == "MCP server 'demo' did not answer tool 'hang' within 2 s"
    assert (caught.value.server, caught.value.tool) == ("demo", "hang")
    assert demo.call("add", {"a": 1, "b": 2}) == {"result": 3}

    async def cancelled() -> str:
        task = asyncio.ensure_future(demo.acall("hang", {}))
        await asyncio.sleep(0.2)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "finished"

    assert asyncio.run(cancelled()) == "cancelled"
    assert asyncio.run(demo.acall("add", {"a": 2, "b": 2})) == {"result": 4}


def test_a_crash_mid_call_names_the_server_and_the_next_call_restarts_it(
    demo: MCPToolset,
) -> None:
    first = demo.call("whoami", {})["pid"]
    with pytest.raises(MCPConnectionError) as caught:
        demo.call("crash", {})
    assert str(caught.value) == (
        "MCP server 'demo' closed the connection during tool 'crash' (it exited, crashed or "
        "dropped the connection; its last stderr line: fatal: the disk is on fire); the next "
        "call starts it again"
    )
    second = demo.call("whoami", {})["pid"]
    assert second != first


def test_garbage_on_stdout(demo: MCPToolset, no_orphans: None) -> None:
    assert demo.call("noisy", {}) == {"result": "quiet now"}  # stray lines are skipped
    with pytest.raises(MCPTimeoutError) as caught:
        demo.call("garble", {})  # its own answer is glued to the stray text: lost
    assert str(caught.value).startswith(
        "MCP server 'demo' did not answer tool 'garble' within 2 s; it wrote 1 line on stdout "
        "that are not MCP messages, the first: 'partial output {"
    )
    with MCPToolset.stdio(sys.executable, [CHATTY]) as chatty:  # a banner before MCP starts
        assert chatty.call("ping", {}) == {"result": "pong"}


def test_a_server_that_cannot_start(no_orphans: None) -> None:
    with pytest.raises(MCPConnectionError) as caught:
        MCPToolset.stdio("/nonexistent/mcp-server", ["--flag"]).open()
    assert str(caught.value) == (
        "could not start or reach MCP server 'mcp-server --flag': "
        "[Errno 2] No such file or directory: '/nonexistent/mcp-server'"
    )
    code = "import sys; print('bad config', file=sys.stderr); sys.exit(2)"
    with pytest.raises(MCPConnectionError) as caught:
        MCPToolset.stdio(sys.executable, ["-c", code], name="broken").open()
    assert str(caught.value) == (
        "could not start or reach MCP server 'broken': Connection closed; "
        "its last stderr line: bad config"
    )


def test_a_silent_server_times_out_at_the_handshake(no_orphans: None) -> None:
    code = "import time; time.sleep(60)"
    toolset = MCPToolset.stdio(sys.executable, ["-c", code], name="mute", connect_timeout=1)
    with pytest.raises(MCPTimeoutError) as caught:
        toolset.open()
    assert str(caught.value) == "MCP server 'mute' did not finish the MCP handshake within 1 s"
    toolset.close()


def test_http_reconnects_after_the_server_restarts(http_server: HttpServer) -> None:
    with MCPToolset.http(http_server.url, timeout=5) as toolset:
        assert toolset.call("whoami", {})["pid"] == http_server.process.pid
        http_server.restart()
        assert toolset.call("whoami", {})["pid"] == http_server.process.pid
        http_server.kill()
        with pytest.raises(MCPConnectionError) as caught:
            toolset.call("add", {"a": 1, "b": 1})
        assert str(caught.value) == (
            "could not start or reach MCP server 'demo': All connection attempts failed"
        )


CTRL_C = f"""
import sys
from actloop.mcp import MCPToolset
with MCPToolset.stdio(sys.executable, [{DEMO!r}]) as toolset:
    print(toolset.call("whoami", {{}})["pid"], flush=True)
    toolset.call("hang", {{}})
"""


def test_ctrl_c_during_a_hung_call_ends_the_server() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", CTRL_C], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    server_pid = int(process.stdout.readline())
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGINT  # KeyboardInterrupt, then exit by the signal
    assert err.rstrip().endswith("KeyboardInterrupt")
    deadline = time.monotonic() + 10
    while _alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(server_pid)
    assert server_processes() == []


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# The exit handler joining the caller is registered before actloop.mcp's, so it runs after it
# (atexit runs handlers last in, first out): the caller's line is printed before the interpreter
# stops its daemon thread, and the test sees it whole every time.
NEVER_CLOSED = f"""
import atexit, sys, threading, time
caller = threading.Thread(target=lambda: hang(), daemon=True)
atexit.register(lambda: caller.join(30))
from actloop.mcp import MCPToolset
toolset = MCPToolset.stdio(sys.executable, [{DEMO!r}], timeout=None).open()
print(toolset.call("whoami", {{}})["pid"], flush=True)
def hang():
    try:
        toolset.call("hang", {{}})
    except BaseException as exc:
        print(type(exc).__name__, exc, flush=True)
caller.start()
time.sleep(0.5)
"""


def test_a_toolset_never_closed_ends_its_server_at_exit() -> None:
    done = subprocess.run(
        [sys.executable, "-c", NEVER_CLOSED], capture_output=True, text=True, timeout=60
    )
    pid, *message = done.stdout.splitlines()
    # close() at exit lets the cut call end with its error before the loop stops (it used to be
    # cancelled with the loop now and then: a bare CancelledError)
    assert message == [
        "MCPConnectionError MCP server 'demo' was closed while tool 'hang' was running"
    ]
    assert done.returncode == 0
    deadline = time.monotonic() + 10
    while _alive(int(pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(int(pid))


def test_http_server_crashing_mid_call(http_server: HttpServer) -> None:
    with MCPToolset.http(http_server.url, timeout=None) as toolset:  # no per-call timeout
        with pytest.raises(MCPConnectionError) as caught:
            toolset.call("crash", {})
        assert str(caught.value) == (
            "MCP server 'demo' closed the connection during tool 'crash' (it exited, crashed or "
            "dropped the connection); the next call reconnects"
        )
        http_server.restart()
        assert toolset.call("add", {"a": 20, "b": 22}) == {"result": 42}
