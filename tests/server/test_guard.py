"""The guard in front of every route (`actloop.server._guard`), over real HTTP: a rebinding
`Host`, another origin, a cross-site "simple" POST, a malformed number or body, a base64 token;
failed runs show their exception type only; the event logs keep at most `keep` threads."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.websockets import WebSocket

from actloop import AgentExecutor
from actloop.checkpoint import SqliteCheckpointer
from actloop.exceptions import ConfigurationError
from actloop.prompts import ChatPromptTemplate
from actloop.server import create_app
from actloop.testing import FunctionChatModel
from actloop.tool_calling import create_tool_calling_agent
from support.serve import Serve, free_port, serve_env

from .agents import add, make_executor
from .test_threads import events, start

REBIND = "rebind.attacker.example"
SIMPLE = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]


def durable_app(tmp_path: Path, **options: Any) -> Starlette:
    return create_app(make_executor(SqliteCheckpointer(tmp_path / "runs.sqlite")), **options)


def every_route(routes: list[BaseRoute], prefix: str = "") -> list[tuple[str, str]]:
    """(method, path) of each route of the app, mounts included, `{thread_id}` filled in."""
    found: list[tuple[str, str]] = []
    for route in routes:
        if isinstance(route, Mount):
            found += every_route(route.routes, prefix + route.path)
        elif isinstance(route, Route):
            path = (prefix + route.path).replace("{thread_id}", "t1")
            found += [(m, path) for m in sorted(route.methods or ()) if m != "HEAD"]
    return found


def test_a_rebinding_host_is_refused_on_every_route(serve: Serve, tmp_path: Path) -> None:
    app = durable_app(tmp_path)
    url = serve(app)
    port = url.rsplit(":", 1)[1]
    routes = every_route(app.routes)
    assert ("POST", "/threads/search") in routes and ("POST", "/agent/invoke") in routes
    assert len(routes) == 40  # LangServe, Agent Protocol, Responses, A2A, MCP, AG-UI, the page
    with httpx.Client(base_url=url, timeout=30) as client:
        for method, path in routes:
            response = client.request(
                method, path, json={"input": "add 1 2"}, headers={"Host": f"{REBIND}:{port}"}
            )
            assert (response.status_code, response.json()) == (
                421,
                {
                    "error": f"Host '{REBIND}:{port}' is not served here "
                    "(see actloop serve --allowed-host)"
                },
            ), (method, path)
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "localhost"):
            found = client.post("/threads/search", json={}, headers={"Host": host})
            assert found.json() == []


def test_allowed_hosts_name_a_reverse_proxy(serve: Serve, tmp_path: Path) -> None:
    proxied = serve(durable_app(tmp_path, allowed_hosts=["agents.example.com"]))
    assert (
        httpx.get(f"{proxied}/openapi.json", headers={"Host": "agents.example.com"}).status_code
        == 200
    )
    assert httpx.get(f"{proxied}/openapi.json", headers={"Host": REBIND}).status_code == 421
    anything = serve(durable_app(tmp_path, allowed_hosts=["*"]))
    assert httpx.get(f"{anything}/openapi.json", headers={"Host": REBIND}).status_code == 200


def test_the_token_as_an_api_key_and_a_body_less_post(serve: Serve, tmp_path: Path) -> None:
    """langgraph-sdk sends the token as `X-Api-Key` and its cancel as a POST with no body and no
    `Content-Type`: both pass; a body-less POST with a type, or from another origin, does not."""
    url = serve(durable_app(tmp_path, token="t0k"))
    cancel = f"{url}/threads/t1/runs/r1/cancel"
    assert httpx.post(f"{url}/threads/search", json={}, headers={"X-Api-Key": "t0k"}).json() == []
    wrong = httpx.post(f"{url}/threads/search", json={}, headers={"X-Api-Key": "t0k2"})
    assert (wrong.status_code, wrong.json()) == (401, {"error": "missing or wrong bearer token"})
    key = {"X-Api-Key": "t0k"}
    passed = httpx.post(cancel, headers=key)  # no body, no type: the route answers
    assert (passed.status_code, passed.json()) == (404, {"error": "no run 'r1' of thread 't1'"})
    typed = httpx.post(cancel, headers={**key, "Content-Type": "text/plain"})
    assert typed.status_code == 415
    elsewhere = httpx.post(cancel, headers={**key, "Origin": "http://evil.example"})
    assert elsewhere.status_code == 403


def test_a_cross_site_simple_post_runs_nothing(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "naps.log"
    monkeypatch.setenv("ACTLOOP_TEST_LOG", str(log))
    url = serve(durable_app(tmp_path))
    body = b'{"input": {"input": "slow 1"}, "inputs": [{"input": "slow 1"}]}'
    paths = [
        "/agent/invoke",
        "/agent/batch",
        "/agent/stream",
        "/agent/stream_events",
        "/threads",
        "/threads/t1/runs",
        "/runs/wait",
    ]
    for path in paths:
        for media in [*SIMPLE, None]:
            headers = {"Content-Type": media} if media else {}
            response = httpx.post(f"{url}{path}", content=body, headers=headers)
            assert (response.status_code, response.json()) == (
                415,
                {"error": "the request body must be sent as Content-Type: application/json"},
            )
    assert httpx.get(f"{url}/health").json() == {"status": "ok", "active_runs": 0}
    assert httpx.post(f"{url}/threads/search", json={}).json() == []
    assert not log.exists()  # no tool ran


def test_a_cross_site_approval_is_refused(serve: Serve, tmp_path: Path) -> None:
    url = serve(durable_app(tmp_path))
    port = url.rsplit(":", 1)[1]
    with httpx.Client(base_url=url, timeout=30) as client:
        start(client, "send hello", "t1")
        assert events(client, "t1")[-2][2]["status"] == "paused"
        decision = {"assistant_id": "agent", "command": {"resume": {"approve": True}}}
        approve = json.dumps(decision).encode()
        for media in SIMPLE:
            refused = client.post(
                "/threads/t1/runs", content=approve, headers={"Content-Type": media}
            )
            assert refused.status_code == 415
        for origin in (f"http://127.0.0.1:{free_port()}", "http://evil.example", "null"):
            other = client.post("/threads/t1/runs", json=decision, headers={"Origin": origin})
            assert (other.status_code, other.json()) == (
                403,
                {"error": f"requests from origin {origin!r} are not allowed"},
            )
        assert client.get("/threads/t1").json()["status"] == "interrupted"
        own = client.post(
            "/threads/t1/runs", json=decision, headers={"Origin": f"http://127.0.0.1:{port}"}
        )
        assert own.status_code == 200
        assert events(client, "t1", 2)[-2][2]["output"] == "Sent: sent 'hello'"


def test_origins_allowed_are_the_served_one_and_cors_ones(serve: Serve) -> None:
    url = serve(create_app(make_executor(), cors_origins=["http://app.example"]))
    port = url.rsplit(":", 1)[1]
    body = {"input": "add 1 2"}
    for origin, host in [
        (f"http://127.0.0.1:{port}", f"127.0.0.1:{port}"),
        (f"http://localhost:{port}", f"localhost:{port}"),
        ("http://app.example", f"127.0.0.1:{port}"),
    ]:
        ok = httpx.post(f"{url}/agent/invoke", json=body, headers={"Origin": origin, "Host": host})
        assert ok.json()["output"]["output"] == "The sum is 3.", origin
    cors = httpx.post(f"{url}/agent/invoke", json=body, headers={"Origin": "http://app.example"})
    assert cors.headers["access-control-allow-origin"] == "http://app.example"
    assert cors.headers["access-control-expose-headers"] == (
        "Content-Location, Location, X-Actloop-Last-Event"
    )
    preflight = {"Origin": "http://app.example", "Access-Control-Request-Method": "DELETE"}
    assert httpx.options(f"{url}/threads/t1", headers=preflight).status_code == 200
    other_port = httpx.get(
        f"{url}/agent/input_schema", headers={"Origin": f"http://localhost:{port}"}
    )
    assert other_port.status_code == 403  # Host is 127.0.0.1: localhost is another origin


def test_every_response_is_hardened(serve: Serve) -> None:
    url = serve(create_app(make_executor()))
    for response in (httpx.get(f"{url}/health"), httpx.get(f"{url}/nope")):
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["cross-origin-resource-policy"] == "same-origin"


def test_a_route_added_later_is_guarded_without_code_of_its_own(serve: Serve) -> None:
    calls: list[str] = []

    async def extra(request: Request) -> Response:
        calls.append(request.method)
        return JSONResponse({"ok": True})

    app = create_app(make_executor(), token="t0k")
    app.router.routes.append(Route("/extra", extra, methods=["POST", "DELETE"]))
    url = serve(app)
    auth = {"Authorization": "Bearer t0k"}
    assert httpx.post(f"{url}/extra", json={}).status_code == 401
    assert httpx.post(f"{url}/extra", content=b"{}", headers=auth).status_code == 415
    assert httpx.post(f"{url}/extra", json={}, headers={**auth, "Host": REBIND}).status_code == 421
    evil = {**auth, "Origin": "http://evil.example"}
    assert httpx.post(f"{url}/extra", json={}, headers=evil).status_code == 403
    plain = {**auth, "Content-Type": "text/plain"}
    assert httpx.request("DELETE", f"{url}/extra", content=b"x", headers=plain).status_code == 415
    assert calls == []
    assert httpx.post(f"{url}/extra", json={}, headers=auth).json() == {"ok": True}
    assert httpx.delete(f"{url}/extra", headers=auth).json() == {"ok": True}  # no body: no type
    assert calls == ["POST", "DELETE"]


@pytest.mark.parametrize(
    "query", ["q+3/xZ==", "q%2B3%2FxZ%3D%3D", "q%2b3%2fxZ%3d%3d"], ids=["raw", "encoded", "lower"]
)
def test_a_base64_token_is_read_as_given_or_percent_encoded(serve: Serve, query: str) -> None:
    url = serve(create_app(make_executor(), token="q+3/xZ=="))
    assert httpx.get(f"{url}/?token={query}").status_code == 200
    assert httpx.get(f"{url}/?token=q%203/xZ==").status_code == 401  # "+" is not a space
    header = {"Authorization": "Bearer q+3/xZ=="}
    assert httpx.get(f"{url}/openapi.json", headers=header).status_code == 200


@pytest.mark.parametrize(
    ("headers", "query"),
    [
        ({"Last-Event-ID": "\u00b2".encode("latin-1")}, ""),
        ({"Last-Event-ID": "\u0663".encode()}, ""),
        ({"Last-Event-ID": "9" * 5000}, ""),
        ({}, "?after=1%20"),
        ({}, "?after=%C2%B2"),
        ({}, "?after=" + "9" * 5000),
        ({}, "?after=0x10"),
    ],
    ids=[
        "superscript",
        "arabic-indic",
        "5000-digits",
        "space",
        "after-superscript",
        "after-5000-digits",
        "hex",
    ],
)
def test_a_malformed_event_number_is_a_400(
    serve: Serve, tmp_path: Path, headers: dict[str, Any], query: str
) -> None:
    url = serve(durable_app(tmp_path))
    with httpx.Client(base_url=url, timeout=30) as client:
        start(client, "add 1 2", "t1")
        response = client.get(f"/threads/t1/events{query}", headers=headers)
        assert (response.status_code, response.json()) == (
            400,
            {"error": "Last-Event-ID (or ?after=) must be a whole number of at most 18 digits"},
        )
        assert events(client, "t1", 1)[0][0] == 2  # a good one still works


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "request body is nested more than 100 levels deep"),
        (
            b'{"input": ' + b"[" * 100 + b"]" * 100 + b"}",
            "request body is nested more than 100 levels deep",
        ),
        (b'{"input": {"input": "add 1 2", "x": ' + b"[" * 98 + b"]" * 98 + b"}}", None),
    ],
    ids=["100000-deep", "101-deep", "100-deep"],
)
def test_a_deeply_nested_body_is_a_400(serve: Serve, content: bytes, reason: str | None) -> None:
    url = serve(create_app(make_executor(), max_body=1 << 20))
    response = httpx.post(
        f"{url}/agent/invoke", content=content, headers={"Content-Type": "application/json"}
    )
    if reason is None:
        assert response.json()["output"]["output"] == "The sum is 3."
    else:
        assert (response.status_code, response.json()) == (400, {"error": reason})


def _leaky_executor(tmp_path: Path) -> AgentExecutor:
    def fail(messages: object) -> str:
        raise RuntimeError("upstream refused key sk-LEAK at http://10.1.2.3/v1")

    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = create_tool_calling_agent(FunctionChatModel(fail), [add], prompt)
    return AgentExecutor(
        agent=agent, tools=[add], checkpointer=SqliteCheckpointer(tmp_path / "runs.sqlite")
    )


def test_a_failed_thread_shows_its_exception_type_only(serve: Serve, tmp_path: Path) -> None:
    url = serve(create_app(_leaky_executor(tmp_path)))
    with httpx.Client(base_url=url, timeout=30) as client:
        start(client, "hi", "t1")
        stream = events(client, "t1")
        assert stream[-1][1:] == ("error", {"status_code": 500, "message": "Internal Server Error"})
        state = client.get("/threads/t1/state")
        listed = client.post("/threads/search", json={})
        assert state.json()["tasks"][0]["error"] == "RuntimeError"
        assert listed.json()[0]["status"] == "error"
        invoked = client.post("/agent/invoke", json={"input": "hi"})
        assert invoked.json() == {"error": "the run failed (RuntimeError); see the server log"}
        for text in (state.text, listed.text, str(stream), invoked.text):
            assert "sk-LEAK" not in text and "10.1.2.3" not in text
    stored = SqliteCheckpointer(tmp_path / "runs.sqlite").get("t1")
    assert stored is not None and stored.error == (
        "RuntimeError: upstream refused key sk-LEAK at http://10.1.2.3/v1"
    )  # the details stay in the store, for `actloop runs show`


def _wait_finished(client: httpx.Client, thread: str) -> None:
    deadline = time.monotonic() + 30
    while client.get(f"/threads/{thread}").json()["status"] != "idle":
        assert time.monotonic() < deadline, f"{thread} did not finish"
        time.sleep(0.05)


def test_event_logs_keep_at_most_keep_threads(serve: Serve, tmp_path: Path) -> None:
    app = durable_app(tmp_path, max_threads=2)
    url = serve(app)
    with httpx.Client(base_url=url, timeout=30) as client:
        start(client, "slow 300", "live")  # the oldest, still going for the whole test
        start(client, "add 1 2", "done")
        _wait_finished(client, "done")
        start(client, "add 2 2", "new")  # replaces "done", the oldest whose run is over
        assert list(app.state.hub.threads) == ["live", "new"]
        told = client.get("/threads/done/events")  # its log was dropped: told by the store
        assert told.status_code == 200 and told.text.startswith("id: 1000000")
        assert told.text.endswith("event: end\ndata: \n\n")
        _wait_finished(client, "new")
        start(client, "slow 300", "live2")  # replaces "new"
        body = {"assistant_id": "agent", "input": {"input": "add 1 1"}, "if_not_exists": "create"}
        busy = client.post("/threads/x/runs", json=body)
        assert (busy.status_code, busy.json()) == (
            503,
            {"error": "2 threads have a run going on; try again when one ends"},
        )
        assert list(app.state.hub.threads) == ["live", "live2"]
        assert client.get("/threads/x").status_code == 404  # refused before it started


def test_max_threads_must_be_at_least_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as caught:
        durable_app(tmp_path, max_threads=0)
    assert str(caught.value) == "max_threads must be at least 1, got 0"


@pytest.mark.parametrize("given", ["0", "-3", "2.5", "١٢", "1" * 10])
def test_the_max_threads_option_takes_a_whole_number_of_at_least_one(given: str) -> None:
    cmd = [sys.executable, "-m", "actloop", "serve", "--max-threads", given]
    done = subprocess.run(cmd, env=serve_env(), capture_output=True, timeout=60)
    assert done.returncode == 2
    expected = f"argument --max-threads: {given!r} is not a whole number of at least 1"
    assert expected in done.stderr.decode()


def test_a_websocket_route_added_later_is_guarded_too(serve: Serve) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    async def echo(socket: WebSocket) -> None:
        await socket.accept()
        await socket.send_text(await socket.receive_text())
        await socket.close()

    app = create_app(make_executor(), token="t0k")
    app.router.routes.append(WebSocketRoute("/echo", echo))
    port = int(serve(app).rsplit(":", 1)[1])
    auth = {"Authorization": "Bearer t0k"}
    for name, headers in [
        ("127.0.0.1", {}),
        (REBIND, auth),  # the Host a rebound page sends
        ("127.0.0.1", {**auth, "Origin": "http://evil.example"}),
    ]:
        sock = socket.create_connection(("127.0.0.1", port))
        with pytest.raises(InvalidStatus) as refused:
            connect(f"ws://{name}:{port}/echo", sock=sock, additional_headers=headers).close()
        assert refused.value.response.status_code == 403, (name, headers)
    with connect(f"ws://127.0.0.1:{port}/echo", additional_headers=auth, open_timeout=30) as ws:
        ws.send("hi")
        assert ws.recv(timeout=30) == "hi"


def test_stored_values_json_cannot_carry_are_still_served(serve: Serve, tmp_path: Path) -> None:
    store = SqliteCheckpointer(tmp_path / "runs.sqlite")
    executor = make_executor(store)  # a run saved by library code, then served
    config: Any = {"configurable": {"thread_id": "t1"}}
    executor.invoke({"input": "add 1 2 \ud800", "x": float("nan")}, config)
    url = serve(create_app(make_executor(store)))
    listed = httpx.post(f"{url}/threads/search", json={})
    assert listed.json()[0]["values"]["input"] == "add 1 2 \ud800"
    assert b"\\ud800" in listed.content  # escaped: the body is valid UTF-8
    values = httpx.get(f"{url}/threads/t1/state").json()["values"]
    assert (values["input"], values["x"]) == ("add 1 2 \ud800", None)  # NaN as JSON.stringify
    assert values["output"] == "The sum is 3."


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (
            b'{"input": "a\\ud800"}',
            "request body holds a lone surrogate (an unpaired \\udXXX escape)",
        ),
        (b'{"input": "add 1 2", "x": NaN}', "request body holds NaN, which JSON does not allow"),
        (b'{"input": -Infinity}', "request body holds -Infinity, which JSON does not allow"),
    ],
    ids=["lone-surrogate", "nan", "infinity"],
)
def test_json_no_client_should_send_is_a_400(serve: Serve, content: bytes, reason: str) -> None:
    url = serve(create_app(make_executor()))
    json_body = {"Content-Type": "application/json"}
    response = httpx.post(f"{url}/agent/invoke", content=content, headers=json_body)
    assert (response.status_code, response.json()) == (400, {"error": reason})
    paired = httpx.post(  # an escaped pair (an emoji) is fine
        f"{url}/agent/invoke", content=b'{"input": "add 1 2 \\ud83d\\ude00"}', headers=json_body
    )
    assert paired.json()["output"]["input"] == "add 1 2 \U0001f600"
