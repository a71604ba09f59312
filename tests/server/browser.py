"""Debian's headless Chromium driven by Playwright, for the page tests (`browser` and `page` are
fixtures in conftest)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

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


def launch(playwright: Any, *extra: str) -> Any:
    """A headless Chromium with the flags above and `extra`."""
    ensure_chromium()
    return playwright.chromium.launch(executable_path=CHROMIUM, args=[*FLAGS, *extra])


def expect(locator: Any) -> Any:
    """Playwright's `expect` with a 30 s timeout (the machine is shared and slow)."""
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=30_000)
    return playwright_expect(locator)


def new_tab(browser: Any) -> Any:
    """A tab in a fresh context (no shared storage), 30 s timeouts."""
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    return tab
