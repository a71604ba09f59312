"""Safe by default: the token, size limit, one-line 4xx reasons, no tracebacks or secrets, no
CORS unless asked, and a client that leaves mid-stream neither stops nor leaks the run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest

from actloop import AgentExecutor
from actloop.prompts import ChatPromptTemplate
from actloop.server import create_app
from actloop.testing import FunctionChatModel
from actloop.tool_calling import create_tool_calling_agent
from support.serve import Serve

from .agents import add, make_executor

TOKEN = "s3cret-token-value"


def test_token_guards_every_route_but_health(serve: Serve) -> None:
    url = serve(create_app(make_executor(), token=TOKEN))
    body = {"input": {"input": "add 1 2"}}
    with httpx.Client(base_url=url) as client:
        assert client.get("/health").json() == {"status": "ok", "active_runs": 0}
        for method, path in [("GET", "/"), ("GET", "/openapi.json"), ("POST", "/agent/invoke")]:
            response = client.request(method, path, json=body)
            assert response.status_code == 401
            assert response.json() == {"error": "missing or wrong bearer token"}
        wrong = client.post("/agent/invoke", json=body, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        right = client.post(
            "/agent/invoke", json=body, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert right.json()["output"]["output"] == "The sum is 3."
        assert client.get(f"/?token={TOKEN}").status_code == 200
        assert client.get(f"/openapi.json?token={TOKEN}").status_code == 401


@pytest.mark.parametrize(
    ("content", "status", "reason"),
    [
        (b"{not json", 400, "request body is not valid JSON"),
        (b"[1, 2]", 400, "request body must be a JSON object"),
        (b"{}", 422, "missing 'input'"),
        (b'{"input": {"input": "add 1 2"}, "config": 3}', 422, "config must be a JSON object"),
        (b'{"input": {"input": "add 1 2"}, "kwargs": {"x": 1}}', 422, "kwargs are not supported"),
    ],
)
def test_malformed_requests_get_a_one_line_reason(
    serve: Serve, content: bytes, status: int, reason: str
) -> None:
    url = serve(create_app(make_executor()))
    json_body = {"Content-Type": "application/json"}
    response = httpx.post(f"{url}/agent/invoke", content=content, headers=json_body)
    assert (response.status_code, response.json()) == (status, {"error": reason})


def test_a_bare_string_is_the_input_and_a_list_is_a_422(serve: Serve) -> None:
    url = serve(create_app(make_executor()))
    ok = httpx.post(f"{url}/agent/invoke", json={"input": "add 1 2"})
    assert ok.json()["output"] == {"input": "add 1 2", "output": "The sum is 3."}
    response = httpx.post(f"{url}/agent/invoke", json={"input": ["add 1 2"]})
    assert response.status_code == 422
    assert response.json()["error"].startswith("bad input: A single string input was passed in")
    assert "\n" not in response.json()["error"]


def test_request_size_limit(serve: Serve) -> None:
    url = serve(create_app(make_executor(), max_body=1000))
    big = {"input": {"input": "add 1 2", "pad": "x" * 2000}}
    response = httpx.post(f"{url}/agent/invoke", json=big)
    assert response.status_code == 413
    assert response.json() == {"error": "request body too large (limit 1000 bytes)"}

    def chunks():  # no Content-Length: the limit holds while reading
        yield b'{"input": {"input": "'
        yield b"x" * 2000
        yield b'"}}'

    json_body = {"Content-Type": "application/json"}
    chunked = httpx.post(f"{url}/agent/invoke", content=chunks(), headers=json_body)
    assert (chunked.status_code, chunked.json()) == (
        413,
        {"error": "request body too large (limit 1000 bytes)"},
    )


def test_unknown_route_and_method(serve: Serve) -> None:
    url = serve(create_app(make_executor()))
    assert httpx.get(f"{url}/nope").json() == {"error": "no such route"}
    response = httpx.get(f"{url}/agent/invoke")
    assert (response.status_code, response.json()) == (405, {"error": "method not allowed"})


def _leaky_executor() -> AgentExecutor:
    def fail(messages: object) -> str:
        raise RuntimeError(f"upstream refused key {TOKEN} at http://10.1.2.3/v1")

    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = create_tool_calling_agent(FunctionChatModel(fail), [add], prompt)
    return AgentExecutor(agent=agent, tools=[add])


def test_a_failed_run_shows_no_traceback_and_no_secret(serve: Serve) -> None:
    url = serve(create_app(_leaky_executor()))
    body = {"input": {"input": "hi"}}
    response = httpx.post(f"{url}/agent/invoke", json=body)
    assert response.status_code == 500
    assert response.json() == {"error": "the run failed (RuntimeError); see the server log"}
    with httpx.stream("POST", f"{url}/agent/stream", json=body) as stream:
        text = stream.read().decode()
    assert "event: error" in text
    assert '{"status_code":500,"message":"Internal Server Error"}' in text
    for leak in (TOKEN, "10.1.2.3", "Traceback"):
        assert leak not in response.text and leak not in text


def test_no_cors_unless_asked(serve: Serve) -> None:
    origin = {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
    plain = serve(create_app(make_executor()))
    assert "access-control-allow-origin" not in httpx.get(f"{plain}/health", headers=origin).headers
    allowed = serve(create_app(make_executor(), cors_origins=["http://app.example"]))
    ok = httpx.options(
        f"{allowed}/agent/invoke",
        headers={"Origin": "http://app.example", "Access-Control-Request-Method": "POST"},
    )
    assert ok.headers["access-control-allow-origin"] == "http://app.example"
    evil = httpx.options(f"{allowed}/agent/invoke", headers=origin)
    assert "access-control-allow-origin" not in evil.headers


def test_a_client_leaving_mid_stream_neither_stops_nor_leaks_the_run(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "naps.log"
    monkeypatch.setenv("ACTLOOP_TEST_LOG", str(log))
    url = serve(create_app(make_executor()))
    with httpx.stream("POST", f"{url}/agent/stream", json={"input": {"input": "slow 10"}}) as s:
        lines = s.iter_lines()
        while not next(lines).startswith("event: data"):
            pass  # the first chunk (the first nap's action) arrived; now leave
    assert httpx.get(f"{url}/health").json()["active_runs"] == 1
    deadline = time.monotonic() + 30
    while httpx.get(f"{url}/health").json()["active_runs"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert httpx.get(f"{url}/health").json() == {"status": "ok", "active_runs": 0}
    assert log.read_text() == "nap done\n" * 10
    assert os.environ["ACTLOOP_TEST_LOG"] == str(log)
