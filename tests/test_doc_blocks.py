"""Every Python and shell block of README.md and docs/*.md runs as written.

Each block runs in a fresh process in its own empty folder (holding a copy of README.md and a
`.venv` link, as a clone has them), with the project's sources first on the path and
`OPENAI_BASE_URL` pointing at `actloop fake-openai`, the loopback stand-in the README tells a
reader to start (started here as a reader starts it). A Python block runs with `python`; a shell
block with `bash -e`, in its own process group, which is ended afterwards (a block may start a
server in the background). A block must exit 0.

A block whose info string says `norun` (```` ```python norun ````) is not run: it needs what a
test cannot bring up here (a PostgreSQL host, a Ray cluster, a server that runs until stopped,
`make` itself). Fences with another language (`text`, `json`, none) are not code to run.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
_RUNNERS = {"python": "python", "py": "python", "sh": "shell", "bash": "shell", "shell": "shell"}
MAX_NORUN = 8
"""At most this many blocks may opt out: a reader should be able to run nearly every example."""


class Block(NamedTuple):
    path: Path
    line: int
    language: str
    runner: str | None
    norun: bool
    code: str

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.line}"


def blocks() -> list[Block]:
    found: list[Block] = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            info = match.group(1).split()
            language = info[0] if info else ""
            line = text.count("\n", 0, match.start()) + 1
            runner = _RUNNERS.get(language)
            found.append(Block(path, line, language, runner, "norun" in info, match.group(2)))
    return found


RUNNABLE = [b for b in blocks() if b.runner and not b.norun]


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    """`actloop fake-openai --port 0`, as a reader starts it; yields its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "actloop", "fake-openai", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    yield url
    proc.terminate()
    proc.wait(timeout=30)
    proc.stdout.close()


def _env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT / "src")
    env.update(OPENAI_BASE_URL=url, OPENAI_API_KEY="not-needed", PYTHONWARNINGS="ignore")
    return env


def test_the_blocks_are_found_and_few_opt_out() -> None:
    found = blocks()
    assert len([b for b in found if b.path.name == "README.md" and b.runner]) >= 15
    opted_out = [b.name for b in found if b.norun]
    assert len(opted_out) <= MAX_NORUN, opted_out


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.name for b in RUNNABLE])
def test_block_runs_as_written(block: Block, stand_in: str, tmp_path: Path) -> None:
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    (tmp_path / "README.md").write_bytes((ROOT / "README.md").read_bytes())
    if block.runner == "python":
        command = [sys.executable, "-c", block.code]
    else:
        command = ["bash", "-e", "-c", block.code]
    log = tmp_path / "output.log"  # a file, not a pipe: a background server keeps a pipe open
    with log.open("w") as out:
        proc = subprocess.Popen(
            command,
            cwd=tmp_path,
            env=_env(stand_in),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        timed_out = False
        try:
            proc.wait(timeout=240)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # what the block left running
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)  # reaped: no "still running" warning in a later test
    output = log.read_text()
    assert not timed_out, f"{block.name} did not end within 240 s:\n{output}"
    assert proc.returncode == 0, f"{block.name} exited {proc.returncode}:\n{output}"
