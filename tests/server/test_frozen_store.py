"""`actloop serve` on a PostgreSQL store that stops answering mid-run (every server process
SIGSTOPped): the server goes on answering everything that does not need the store, its own store
reads answer 503 in bounded time, the thread's run ends at its deadline, and once the store is
back the thread resumes to the uninterrupted result without running a saved call again."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from actloop.checkpoint import PostgresCheckpointer
from support.postgres import PostgresServer
from support.serve import start_serve, stop_serve
from support.waits import released

DEADLINE = 4.0
NAPS = 20
STORE_WAIT = 5.0  # actloop.server's bound on its own store reads


class Follower:
    """Follows a thread's events (SSE, served from memory) on a thread of its own, noting when
    the stream ended and how."""

    def __init__(self, url: str, thread: str, after: int = -1) -> None:
        self.url, self.path, self.after = url, f"/threads/{thread}/events", after
        self.events: list[tuple[int, str, str]] = []
        self.ended_at: float | None = None
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        headers = {"Last-Event-ID": str(self.after)}
        with (
            httpx.Client(base_url=self.url, timeout=60) as client,
            client.stream("GET", self.path, headers=headers) as stream,
        ):
            ident, name = -1, ""
            for line in stream.iter_lines():
                if line.startswith("id: "):
                    ident = int(line[4:])
                elif line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    self.events.append((ident, name, line[6:]))
        self.ended_at = time.monotonic()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)
        assert self.ended_at is not None, f"{self.path} did not end within {timeout} s"


def saved_naps(store: PostgresCheckpointer, thread: str) -> int:
    return sum(1 for e in store.entries(thread) if e.kind == "obs")


def test_a_frozen_store_slows_only_its_own_runs(
    frozen_server: PostgresServer, tmp_path: Path
) -> None:
    db = frozen_server.create_database()
    naps = tmp_path / "naps.log"
    naps.touch()
    env = {"ACTLOOP_TEST_DEADLINE": str(DEADLINE), "ACTLOOP_TEST_LOG": str(naps)}
    proc, url = start_serve("--executor", "server.agents:make_executor", "--db", db, env=env)
    store = PostgresCheckpointer(db, lease_ttl=None)
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            body = {"assistant_id": "agent", "input": {"input": f"slow {NAPS}"}}
            started = time.monotonic()
            assert client.post("/threads", json={"thread_id": "f"}).status_code == 200
            assert client.post("/threads/f/runs", json=body).status_code == 200
            follower = Follower(url, "f")
            while saved_naps(store, "f") < 2:
                time.sleep(0.01)
            frozen_server.freeze()
            try:
                checked = _serves_while_frozen(client, follower, started)
                follower.join(timeout=30)
                ran = follower.ended_at - started  # type: ignore[operator]
                state_while_frozen = client.get("/threads/f", timeout=STORE_WAIT + 5)
            finally:
                frozen_server.thaw()
            assert checked >= 10  # /health, the page and a run without a store, many times over
            assert follower.events[-1][1:] == ("error", _ERROR)  # the run failed...
            assert DEADLINE <= ran < DEADLINE + 2.0  # ...at its deadline
            assert state_while_frozen.status_code == 503
            assert state_while_frozen.json() == {
                "error": "the checkpoint store did not answer in time; try again"
            }
            _resumes_to_the_uninterrupted_result(client, store, url, naps, follower)
    finally:
        stop_serve(proc)
        store.close()


_ERROR = '{"status_code":500,"message":"Internal Server Error"}'


def _serves_while_frozen(client: httpx.Client, follower: Follower, started: float) -> int:
    """Until the frozen thread's run ends: `/health` within 1 s every time, the page, and a run
    of the LangServe route, which needs no store. Returns how many rounds were checked."""
    rounds = 0
    while follower.ended_at is None and time.monotonic() - started < DEADLINE + 10:
        sent = time.monotonic()
        health = client.get("/health", timeout=1.0)
        assert health.status_code == 200 and time.monotonic() - sent < 1.0
        assert client.get("/", timeout=1.0).status_code == 200
        answer = client.post("/agent/invoke", json={"input": {"input": "add 2 3"}}, timeout=5.0)
        assert answer.json()["output"]["output"] == "The sum is 5."
        rounds += 1
        time.sleep(0.05)
    return rounds


def _resumes_to_the_uninterrupted_result(
    client: httpx.Client, store: PostgresCheckpointer, url: str, naps: Path, first: Follower
) -> None:
    """After the thaw: the lease comes back, the resume finishes the thread, and only a nap
    that ran but was never saved runs again."""
    assert released(store, "f", within=60)
    record = store.get("f")
    assert record is not None and record.status == "running"  # not marked failed
    ran_before = naps.read_text().count("nap done")
    saved_before = saved_naps(store, "f")
    assert client.get("/threads/f").json()["status"] == "interrupted"  # stopped midway
    resume = {"assistant_id": "agent", "command": {"resume": None}}
    resumed = client.post("/threads/f/runs", json=resume)
    assert resumed.status_code == 200
    Follower(url, "f", after=first.events[-1][0]).join(timeout=60)
    thread = client.get("/threads/f").json()
    values = thread["values"]
    assert (thread["status"], values["output"]) == ("idle", f"Napped {NAPS} times.")
    observations = [m["content"] for m in values["messages"] if m["type"] == "tool"]
    assert observations == ["rested"] * NAPS
    assert naps.read_text().count("nap done") == NAPS + (ran_before - saved_before)
