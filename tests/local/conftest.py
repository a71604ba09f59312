"""A real llama.cpp OpenAI-compatible server on loopback, started from the project's model file."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator

import pytest

from actloop.models.local import default_model_path
from support.serve import free_port


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """`python -m llama_cpp.server` serving the embedded GGUF; yields its base URL (…/v1)."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(default_model_path()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--n_threads",
        "1",
        "--n_threads_batch",
        "1",
    ]
    # The server logs every request: send it to a file (a pipe nobody reads would fill and block).
    log = tempfile.TemporaryFile()
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                err = log.read().decode(errors="replace")
                raise RuntimeError(f"llama_cpp.server did not start: {err[-2000:]}")
            time.sleep(0.25)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(autouse=True, scope="session")
def _private_kv_cache() -> Iterator[None]:
    """Prefix KV states go to a temp dir (subprocesses inherit it), not the user's cache."""
    import os

    with tempfile.TemporaryDirectory() as folder:
        old = os.environ.get("ACTLOOP_CACHE_DIR")
        os.environ["ACTLOOP_CACHE_DIR"] = folder
        try:
            yield
        finally:
            if old is None:
                del os.environ["ACTLOOP_CACHE_DIR"]
            else:
                os.environ["ACTLOOP_CACHE_DIR"] = old
