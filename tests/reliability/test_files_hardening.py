"""`read_file` / `list_dir` on odd paths (issue 13, item 6): a lone surrogate, file names that are
not UTF-8, a root that is missing or removed. Each is an `Error:` observation or a configuration
error, and every observation is valid UTF-8 text the next model request can carry.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from actloop.exceptions import ConfigurationError
from actloop.tools.builtin import file_tools
from support.openai_server import LoopbackServer, message, running


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


def test_a_lone_surrogate_path_is_an_error_observation(tmp_path: Path) -> None:
    read, listing = file_tools(tmp_path)
    expected = "Error: the path '\\ud800' is not valid text (it holds a lone surrogate)"
    assert read.invoke({"path": "\ud800"}) == expected
    assert listing.invoke({"path": "\ud800"}) == expected
    assert read.invoke({"path": "a/\udce9.txt"}) == (
        "Error: the path 'a/\\udce9.txt' is not valid text (it holds a lone surrogate)"
    )


def test_names_that_are_not_utf8_are_listed_as_valid_text(tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("x")
    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.txt"), "wb") as f:
        f.write(b"x")
    os.mkdir(os.path.join(os.fsencode(tmp_path), b"d\xff\xfe"))
    _, listing = file_tools(tmp_path)
    shown = listing.invoke({"path": "."})
    assert shown == "caf\ufffd.txt\nd\ufffd\ufffd/\nplain.txt"
    assert shown.encode("utf-8").decode("utf-8") == shown


def test_a_removed_root_is_an_error_observation(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("hello")
    read, listing = file_tools(root)
    assert read.invoke({"path": "a.txt"}) == "hello"
    shutil.rmtree(root)
    gone = "Error: the directory you may access no longer exists"
    assert read.invoke({"path": "a.txt"}) == gone
    assert listing.invoke({"path": "."}) == gone
    root.write_text("now a file")  # a file where the directory was
    assert read.invoke({"path": "a.txt"}) == gone


def test_a_missing_root_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as caught:
        file_tools(tmp_path / "missing")
    assert str(caught.value) == (
        f"the file tools' root {str(tmp_path / 'missing')!r} is not an existing directory"
    )


def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [sys.executable, "-m", "actloop", *args], capture_output=True, timeout=120, env=env
    )


def test_the_cli_refuses_a_missing_root(server: LoopbackServer, tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    done = cli("run", "hi", "--tools", "list_dir", "--root", str(missing), "--base-url",
               server.url, "--model", "openai:gpt-test")  # fmt: skip
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode() == (
        f"actloop: error: the file tools' root {str(missing)!r} is not an existing directory\n"
    )
    assert server.requests == []


def test_a_non_utf8_name_reaches_the_next_model_request(
    server: LoopbackServer, tmp_path: Path
) -> None:
    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.txt"), "wb") as f:
        f.write(b"x")
    listing = {"id": "c1", "name": "list_dir", "arguments": json.dumps({"path": "."})}
    server.script(message("", [listing]), message("One file."))
    done = cli("run", "list", "--tools", "list_dir,read_file", "--root", str(tmp_path),
               "--base-url", server.url, "--model", "openai:gpt-test", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    sent = [m for m in server.bodies[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in sent] == ["caf\ufffd.txt"]
