"""Other web pages against the default server (127.0.0.1, no token), in a real headless
Chromium: a page of another loopback origin cannot run, approve or read anything; a page on a
name rebound to 127.0.0.1 (DNS rebinding) is refused; the server's own page still works."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from actloop.checkpoint import SqliteCheckpointer
from actloop.server import create_app
from support.serve import Serve

from .agents import make_executor
from .browser import expect, launch, new_tab
from .test_page import ask, lines
from .test_threads import events, start

REBIND = "rebind.attacker.example"

# What a hostile page's script does; every request is one a page may send without asking the
# server first (no-cors, or a form), or a read it is not allowed (cors mode, no CORS headers).
ATTACK = """async (victim) => {
  const APPROVE = JSON.stringify({assistant_id: "agent", command: {resume: {approve: true}}});
  const simple = (path, body) => fetch(victim + path, {
    method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body,
  }).then(() => "sent", (e) => "blocked: " + e.name);
  const read = (path, init) => fetch(victim + path, init)
    .then((r) => r.text(), (e) => "unreadable: " + e.name);
  const results = {
    invoke: await simple("/agent/invoke", JSON.stringify({input: {input: "slow 1"}})),
    start: await simple("/runs", JSON.stringify({assistant_id: "agent", input: {input: "slow 1"}})),
    approve: await simple("/threads/t1/runs", APPROVE),
    list: await read("/threads/search", {method: "POST"}),
    state: await read("/threads/t1/state", {}),
    json_post: await read("/threads/t1/runs", {
      method: "POST", headers: {"Content-Type": "application/json"}, body: APPROVE,
    }),
  };
  // the classic one: a form posting text/plain that looks like JSON, into a hidden frame
  const frame = document.createElement("iframe");
  frame.name = "sink";
  document.body.appendChild(frame);
  const form = document.createElement("form");
  form.method = "POST";
  form.enctype = "text/plain";
  form.target = "sink";
  form.action = victim + "/threads/t1/runs";
  const field = document.createElement("input");
  field.name = '{"assistant_id": "agent", "command": {"resume": true}, "x": "';
  field.value = '"}';
  form.appendChild(field);
  document.body.appendChild(form);
  await new Promise((done) => { frame.onload = done; form.submit(); });
  return results;
}"""


class Recorder:
    """Notes each request the server answers: (method, path, status, Origin). An observer
    around the real app, changing nothing."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[tuple[str, str, int, str]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        origin = dict(scope["headers"]).get(b"origin", b"").decode()

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.seen.append((scope["method"], scope["path"], message["status"], origin))
            await send(message)

        await self.app(scope, receive, noting)


def attacker_app() -> Starlette:
    """A page of another origin (another loopback port): nothing but a body to script in."""

    async def home(request: Request) -> Response:
        return HTMLResponse("<!doctype html><title>elsewhere</title><body>elsewhere</body>")

    return Starlette(routes=[Route("/", home)])


@pytest.fixture
def recorder(tmp_path: Path) -> Recorder:
    """The default server's app (durable, no token), observed."""
    return Recorder(create_app(make_executor(SqliteCheckpointer(tmp_path / "runs.sqlite"))))


@pytest.fixture
def victim(
    serve: Serve, recorder: Recorder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """The default server's URL, with thread t1 paused on `send hello`."""
    monkeypatch.setenv("ACTLOOP_TEST_LOG", str(tmp_path / "naps.log"))
    url = serve(recorder)
    with httpx.Client(base_url=url, timeout=30) as client:
        start(client, "send hello", "t1")
        assert events(client, "t1")[-2][2]["status"] == "paused"
    return url


def untouched(url: str, tmp_path: Path) -> None:
    """Nothing ran: t1 still waits for its approval, no other thread, no tool call."""
    with httpx.Client(base_url=url, timeout=30) as client:
        assert client.get("/health").json() == {"status": "ok", "active_runs": 0}
        assert [t["thread_id"] for t in client.post("/threads/search", json={}).json()] == ["t1"]
        thread = client.get("/threads/t1").json()
        kinds = [m["type"] for m in thread["values"]["messages"]]
        assert (thread["status"], kinds) == ("interrupted", ["human", "ai"])  # no tool message
    assert not (tmp_path / "naps.log").exists()


def test_a_page_of_another_origin_can_neither_run_approve_nor_read(
    page: Any, serve: Serve, victim: str, recorder: Recorder, tmp_path: Path
) -> None:
    elsewhere = serve(attacker_app())
    page.goto(elsewhere)
    results = page.evaluate(ATTACK, victim)
    assert results == {  # sent (the guard refuses them), and the answers are hidden from the page
        "invoke": "blocked: TypeError",  # (Cross-Origin-Resource-Policy: even an opaque one)
        "start": "blocked: TypeError",
        "approve": "blocked: TypeError",
        "list": "unreadable: TypeError",
        "state": "unreadable: TypeError",
        "json_post": "unreadable: TypeError",  # the preflight fails: never sent
    }
    assert [seen for seen in recorder.seen if seen[3] == elsewhere] == [
        ("POST", "/agent/invoke", 403, elsewhere),
        ("POST", "/runs", 403, elsewhere),
        ("POST", "/threads/t1/runs", 403, elsewhere),
        ("POST", "/threads/search", 403, elsewhere),
        ("GET", "/threads/t1/state", 403, elsewhere),
        ("OPTIONS", "/threads/t1/runs", 403, elsewhere),  # the preflight: no POST follows
        ("POST", "/threads/t1/runs", 403, elsewhere),  # the form
    ]
    untouched(victim, tmp_path)


@pytest.fixture
def rebinding_browser(driver: Any) -> Iterator[Any]:
    """A Chromium whose resolver maps the attacker's name to 127.0.0.1, as a rebinding DNS
    server does once the attacker's page has loaded."""
    chromium = launch(driver, f"--host-resolver-rules=MAP {REBIND} 127.0.0.1")
    yield chromium
    chromium.close()


def test_a_rebound_name_gets_nothing(rebinding_browser: Any, victim: str, tmp_path: Path) -> None:
    tab = new_tab(rebinding_browser)
    port = victim.rsplit(":", 1)[1]
    rebound = f"http://{REBIND}:{port}"
    first = tab.goto(f"{rebound}/")
    assert first is not None and first.status == 421
    same_origin = """async () => {
      const json = {"Content-Type": "application/json"};
      const answers = await Promise.all([
        fetch("/threads/search", {method: "POST", headers: json, body: "{}"}),
        fetch("/threads/t1/state"),
        fetch("/agent/invoke", {method: "POST", headers: json, body: '{"input": "slow 1"}'}),
        fetch("/threads/t1/runs", {method: "POST", headers: json, body: '{"command": {}}'}),
      ]);
      return answers.map((r) => r.status);
    }"""
    assert tab.evaluate(same_origin) == [421, 421, 421, 421]
    tab.context.close()
    untouched(victim, tmp_path)


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost"])
def test_the_page_itself_still_works_without_a_token(
    page: Any, victim: str, tmp_path: Path, name: str
) -> None:
    page.goto(victim.replace("127.0.0.1", name) + "/")
    expect(page.locator("#mode")).to_have_text("durable threads")
    page.click("#threads li >> text=send hello")
    page.wait_for_selector(".approval")
    page.click(".approval button.approve")
    expect(page.locator("#answer")).to_have_text("Sent: sent 'hello'")
    assert lines(page) == [
        "question: send hello",
        'calling send({"text":"hello"})',
        "send \u2192 sent 'hello'",
        "Sent: sent 'hello'",
    ]
    ask(page, "add 2 3")
    expect(page.locator("#answer")).to_have_text("The sum is 5.")
