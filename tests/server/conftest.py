"""A real uvicorn server on a free loopback port, serving an app built by the test; a real
headless Chromium and a tab in it for the page tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from support.serve import Serve, free_port

from .browser import launch, new_tab


@pytest.fixture
def serve() -> Iterator[Serve]:
    """`serve(app)` starts uvicorn for `app` in a thread and returns its base URL."""
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(app: Any) -> str:
        port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        servers.append((server, thread))
        return f"http://127.0.0.1:{port}"

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    """Playwright (sync API), one per module: it cannot run twice at once."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(driver: Any) -> Iterator[Any]:
    chromium = launch(driver)
    yield chromium
    chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    tab = new_tab(browser)
    yield tab
    tab.context.close()
