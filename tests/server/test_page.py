"""The page at `/` in a real headless Chromium (Debian's, driven by Playwright): a run's steps
appear in order, each call once, a paused call is approved, hostile model output stays inert
text, a failed run shows its exception type only, a base64 token works as pasted."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from actloop.checkpoint import SqliteCheckpointer
from actloop.server import create_app
from support.serve import Serve

from .agents import HOSTILE, make_executor
from .browser import expect

TOKEN = "page-t0ken"


def open_page(page: Any, serve: Serve, tmp_path: Path, token: str = TOKEN, query: str = "") -> str:
    """Serve a durable executor with `token` and open the page (`?token=QUERY`, by default the
    token as it is); returns the server's URL."""
    store = SqliteCheckpointer(tmp_path / "runs.sqlite")
    url = serve(create_app(make_executor(store), token=token))
    page.goto(f"{url}/?token={query or token}")
    expect(page.locator("#mode")).to_have_text("durable threads")
    return url


def ask(page: Any, question: str) -> None:
    page.fill("#question", question)
    page.click("#send")


def lines(page: Any) -> list[str]:
    return page.locator("#trajectory li").all_text_contents()


def test_a_run_appears_live_and_the_answer_stands_apart(
    page: Any, serve: Serve, tmp_path: Path
) -> None:
    open_page(page, serve, tmp_path)
    assert "token" not in page.url  # the token left the address bar
    ask(page, "add 2 40")
    expect(page.locator("#answer")).not_to_be_empty()
    assert page.text_content("#answer") == "The sum is 42."
    assert lines(page) == ['calling add({"a":2,"b":40})', "add \u2192 42", "The sum is 42."]
    expect(page.locator("#threads li")).to_have_text(["idleadd 2 40"])


def test_approve_a_paused_call_then_see_the_answer(page: Any, serve: Serve, tmp_path: Path) -> None:
    open_page(page, serve, tmp_path)
    ask(page, "send hello")
    page.wait_for_selector(".approval")
    assert page.text_content(".approval .what") == (
        'waiting for approval [0-0]: send({"text":"hello"})'
    )
    expect(page.locator("#threads li")).to_have_text(["interruptedsend hello"])
    shot = os.environ.get("ACTLOOP_PAGE_SCREENSHOT")  # the README's picture (docs/serve-page.png)
    if shot:
        page.screenshot(path=shot)
    page.click(".approval button.approve")
    expect(page.locator("#answer")).not_to_be_empty()
    assert page.text_content("#answer") == "Sent: sent 'hello'"
    assert page.locator(".approval").count() == 0
    # each call shows once: the resumed run announces the call again, the page does not repeat it
    assert lines(page) == [
        'calling send({"text":"hello"})',
        "send \u2192 sent 'hello'",
        "Sent: sent 'hello'",
    ]


def test_edit_a_paused_call_and_browse_past_threads(
    page: Any, serve: Serve, tmp_path: Path
) -> None:
    open_page(page, serve, tmp_path)
    ask(page, "send helo")
    page.wait_for_selector(".approval")
    page.fill(".approval textarea", '{"text": "hello"}')
    page.click(".approval button.edit")
    expect(page.locator("#answer")).not_to_be_empty()
    assert page.text_content("#answer") == "Sent: sent 'hello'"
    assert lines(page) == [  # the call's line now shows the edited input, once
        'calling send({"text":"hello"})',
        "send \u2192 sent 'hello'",
        "Sent: sent 'hello'",
    ]
    ask(page, "add 1 1")
    expect(page.locator("#answer")).to_have_text("The sum is 2.")
    expect(page.locator("#threads li")).to_have_count(2)
    page.click("#threads li >> text=send helo")
    expect(page.locator("#answer")).to_have_text("Sent: sent 'hello'")
    assert lines(page) == [
        "question: send helo",
        'calling send({"text":"hello"})',
        "send \u2192 sent 'hello'",
    ]


def test_hostile_output_stays_inert_text(page: Any, serve: Serve, tmp_path: Path) -> None:
    open_page(page, serve, tmp_path)
    ask(page, "hostile")
    expect(page.locator("#answer")).not_to_be_empty()
    assert page.text_content("#answer") == f"Here: {HOSTILE}"
    assert page.locator("img").count() == 0
    assert page.locator("#answer script").count() == 0
    assert page.title() == "actloop"


def test_without_db_the_page_runs_threads_in_memory(page: Any, serve: Serve) -> None:
    url = serve(create_app(make_executor()))
    page.goto(url)
    expect(page.locator("#mode")).to_have_text("no --db: threads end with the server")
    ask(page, "add 5 6")
    expect(page.locator("#answer")).to_have_text("The sum is 11.")
    assert lines(page) == ['calling add({"a":5,"b":6})', "add \u2192 11", "The sum is 11."]
    ask(page, "hostile")
    expect(page.locator("#answer")).to_have_text(f"Here: {HOSTILE}")
    assert page.locator("img").count() == 0
    assert page.title() == "actloop"


def test_a_failed_run_shows_its_exception_type_only(
    page: Any, serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = tmp_path / "down"
    flag.touch()
    monkeypatch.setenv("ACTLOOP_TEST_FAIL", str(flag))
    open_page(page, serve, tmp_path)
    ask(page, "flaky x")
    failed = page.locator("#trajectory li.error")
    expect(failed).to_have_text(["the run failed (see the server log)"])
    expect(page.locator("#threads li")).to_have_text(["errorflaky x"])
    page.click("#threads li >> text=flaky x")
    expect(page.locator("#trajectory li.error")).to_have_text(
        ["failed: RuntimeError (details in the server log)"]
    )
    assert "the flaky service is down" not in page.content()


@pytest.mark.parametrize("query", ["q+3/xZ==", "q%2B3%2FxZ%3D%3D"], ids=["pasted", "encoded"])
def test_a_base64_token_works_as_pasted_or_percent_encoded(
    page: Any, serve: Serve, tmp_path: Path, query: str
) -> None:
    open_page(page, serve, tmp_path, token="q+3/xZ==", query=query)  # as openssl rand -base64
    assert "token" not in page.url
    ask(page, "add 2 3")
    expect(page.locator("#answer")).to_have_text("The sum is 5.")
    expect(page.locator("#threads li")).to_have_text(["idleadd 2 3"])
