"""The page at `/` in a real headless Chromium (Debian's, driven by Playwright): a run's steps
appear in order, a paused call is approved, hostile model output stays inert text."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actloop.checkpoint import SqliteCheckpointer
from actloop.server import create_app
from support.serve import Serve

from .agents import HOSTILE, make_executor

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def ensure_chromium() -> None:
    """Install Debian's chromium when it is missing (the test bootstrap; never a download of
    Playwright's own browsers)."""
    if Path(CHROMIUM).exists():
        return
    apt = shutil.which("apt-get")
    assert apt, "chromium is missing and apt-get is not available to install it"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [apt, "install", "-y", "-q", "chromium"]
    if subprocess.run(install, env=env, timeout=1200).returncode != 0:  # stale package lists
        subprocess.run([apt, "update", "-q"], check=True, env=env, timeout=600)
        subprocess.run(install, check=True, env=env, timeout=1200)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    ensure_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield chromium
        chromium.close()


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=30_000)
    return playwright_expect(locator)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    yield tab
    context.close()


TOKEN = "page-t0ken"


def open_page(page: Any, serve: Serve, tmp_path: Path) -> None:
    store = SqliteCheckpointer(tmp_path / "runs.sqlite")
    url = serve(create_app(make_executor(store), token=TOKEN))
    page.goto(f"{url}/?token={TOKEN}")
    expect(page.locator("#mode")).to_have_text("durable threads")


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
    expect(page.locator("#threads li")).to_have_text(["finishedadd 2 40"])


def test_approve_a_paused_call_then_see_the_answer(page: Any, serve: Serve, tmp_path: Path) -> None:
    open_page(page, serve, tmp_path)
    ask(page, "send hello")
    page.wait_for_selector(".approval")
    assert page.text_content(".approval .what") == (
        'waiting for approval [0-0]: send({"text":"hello"})'
    )
    expect(page.locator("#threads li")).to_have_text(["pausedsend hello"])
    shot = os.environ.get("ACTLOOP_PAGE_SCREENSHOT")  # the README's picture (docs/serve-page.png)
    if shot:
        page.screenshot(path=shot)
    page.click(".approval button.approve")
    expect(page.locator("#answer")).not_to_be_empty()
    assert page.text_content("#answer") == "Sent: sent 'hello'"
    assert page.locator(".approval").count() == 0
    assert "send \u2192 sent 'hello'" in lines(page)


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


def test_without_db_the_page_streams_events(page: Any, serve: Serve) -> None:
    url = serve(create_app(make_executor()))
    page.goto(url)
    expect(page.locator("#mode")).to_have_text("no --db: runs are not saved")
    ask(page, "add 5 6")
    expect(page.locator("#answer")).to_have_text("The sum is 11.")
    assert lines(page) == ['calling add({"a":5,"b":6})', "add \u2192 11", "The sum is 11."]
    ask(page, "hostile")
    expect(page.locator("#answer")).to_have_text(f"Here: {HOSTILE}")
    assert page.locator("img").count() == 0
    assert page.title() == "actloop"
