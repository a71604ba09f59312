"""The CLI's configuration errors: one clear line on stderr, exit code 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "actloop", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=full_env,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["run", "hi", "--model", "gpt9"],
            "actloop: error: unknown model 'gpt9'; use 'local' or 'openai:MODEL'\n",
        ),
        (
            ["run", "hi", "--model", "openai:gpt-4o-mini"],
            "actloop: error: missing API key: set OPENAI_API_KEY or pass --api-key "
            "(or --base-url for a local server)\n",
        ),
        (
            ["run", "hi", "--tools", "calculator,python"],
            "actloop: error: unknown tool 'python'; "
            "choose from calculator, clock, list_dir, read_file\n",
        ),
        (
            ["run", "hi", "--base-url", "http://127.0.0.1:9/v1"],
            "actloop: error: --base-url needs --model openai:MODEL "
            "(the local model is in-process)\n",
        ),
        (["run", "hi", "--tools", " , "], "actloop: error: --tools needs at least one tool\n"),
    ],
)
def test_configuration_errors(args: list[str], message: str) -> None:
    done = run_cli(*args)
    assert done.returncode == 2
    assert done.stderr == message
    assert done.stdout == ""


def test_verbose_configuration_error_shows_traceback() -> None:
    done = run_cli("run", "hi", "--model", "gpt9", "--verbose")
    assert done.returncode == 2
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.endswith(
        "actloop: error: unknown model 'gpt9'; use 'local' or 'openai:MODEL'\n"
    )
