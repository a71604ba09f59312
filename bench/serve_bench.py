#!/usr/bin/env python3
"""`actloop serve` against LangServe serving LangChain's AgentExecutor: concurrent streaming runs.

Each server runs in its own process (uvicorn, one worker) and serves a tool-calling agent whose
scripted chat model answers after `--latency` seconds (asyncio.sleep): run i asks about `run-i`,
the model calls `lookup(key="run-i")`, then answers with the tool's result, so every output names
its input. LangServe runs in its own venv (`bench/.venv-langserve`, made on first use: its server
extra pins sse-starlette<2, which the dev venv's mcp 2.x excludes).

The client is a pool of processes (`--clients`, default: one per CPU), each driving its share of
the concurrent streams with its own event loop, so one client's parsing does not cap the server.
Every client process starts at the same wall-clock instant, which the parent sends once each
one is ready (imported, its HTTP client made: a client slow to start on a busy machine does not
count); per run it records the time to the first event of the stream (from that instant, so
queueing counts) and whether the run ended with exactly its own answer. A row: concurrency,
throughput (runs that ended with their own answer, per second of wall time: a refused or failed
run does not count), the server's CPU seconds per run (measured around the runs, after a
warm-up), p50/p99 time to first event, runs with their own answer, the client processes' CPU per
run, and the load average before and after. It measures and reports; it asserts nothing. The
clients cost more CPU a run than actloop's server, and on the shared 2-core machine a row's
throughput moves with the load: with `--repeat N` each row is N bursts against one server (their
medians, and each burst's runs/s); `--no-reference` skips LangServe's rows (to compare two
versions of actloop: run this file from each tree, alternating).

Each protocol `actloop serve` speaks is a row of its own (`--protocols`): the same agent over
LangServe's `/agent/stream` and the others; LangServe's row is the reference for all of them.
actloop's server is started with `--max-threads` at least the row's concurrency (`serve
--max-threads N`), so every durable stream of the 1,000-stream row has its thread's log.

    .venv/bin/python bench/serve_bench.py --concurrency 50,200,1000 --latency 0.05
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
LANGSERVE_VENV = BENCH / ".venv-langserve"
LANGSERVE_REQS = [
    "langserve[server]==0.3.3",
    "langchain-classic==1.0.8",
    "langchain-core==1.8.3",
    "uvicorn>=0.30",
]


# ---------------------------------------------------------------- the servers


def actloop_app(latency: float, max_threads: int = 200) -> Any:
    from actloop import AgentExecutor
    from actloop.checkpoint.memory import InMemorySaver
    from actloop.messages import AIMessage, HumanMessage, ToolMessage
    from actloop.prompts import ChatPromptTemplate
    from actloop.server import create_app
    from actloop.testing import FunctionChatModel
    from actloop.tool_calling import create_tool_calling_agent
    from actloop.tools import tool

    @tool
    async def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    async def reply(messages: list[Any]) -> Any:
        await asyncio.sleep(latency)
        results = [m.text for m in messages if isinstance(m, ToolMessage)]
        if results:
            return results[-1]
        key = next(m.text for m in messages if isinstance(m, HumanMessage))
        return AIMessage("", tool_calls=[{"name": "lookup", "args": {"key": key}, "id": "c1"}])

    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = create_tool_calling_agent(FunctionChatModel(reply), [lookup], prompt)
    executor = AgentExecutor(agent=agent, tools=[lookup], name="agent")
    executor.checkpointer = InMemorySaver()  # the protocols' threads; LangServe's route ignores it
    return create_app(executor, max_batch=10_000, max_threads=max_threads)


def langserve_app(latency: float) -> Any:
    from fastapi import FastAPI
    from langchain_classic.agents import AgentExecutor, create_tool_calling_agent
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.tools import tool
    from langserve import add_routes
    from pydantic import BaseModel

    @tool
    async def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    def answer(messages: list[Any]) -> AIMessage:
        results = [m.content for m in messages if isinstance(m, ToolMessage)]
        if results:
            return AIMessage(content=results[-1])
        key = next(m.content for m in messages if isinstance(m, HumanMessage))
        return AIMessage(
            content="", tool_calls=[{"name": "lookup", "args": {"key": key}, "id": "c1"}]
        )

    class Scripted(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Any:
            time.sleep(latency)
            return ChatResult(generations=[ChatGeneration(message=answer(messages))])

        async def _agenerate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Any:
            await asyncio.sleep(latency)
            return ChatResult(generations=[ChatGeneration(message=answer(messages))])

    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = create_tool_calling_agent(Scripted(), [lookup], prompt)
    app = FastAPI()
    executor = AgentExecutor(agent=agent, tools=[lookup])

    class Question(BaseModel):
        input: str

    # LangServe validates input against the runnable's schema, and a RunnableAgent declares no
    # input keys: without this (LangServe's documented fix) it drops "input".
    add_routes(app, executor.with_types(input_type=Question), path="/agent")
    return app


def serve(lib: str, port: int, latency: float, max_threads: int) -> None:
    import uvicorn

    if lib == "actloop":
        from actloop.server._process import pace_collector

        app = actloop_app(latency, max_threads)
        pace_collector()  # as `actloop serve` does
    else:
        app = langserve_app(latency)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", backlog=4096)


def langserve_python() -> str:
    """The LangServe venv's interpreter, made on first use."""
    python = LANGSERVE_VENV / "bin" / "python"
    stamp = LANGSERVE_VENV / ".installed"
    if not stamp.exists() or stamp.read_text() != json.dumps(LANGSERVE_REQS):
        print(f"serve_bench: installing LangServe's server into {LANGSERVE_VENV}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(LANGSERVE_VENV)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, *LANGSERVE_REQS], check=True)
        stamp.write_text(json.dumps(LANGSERVE_REQS))
    return str(python)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---------------------------------------------------------------- the protocols' requests

Request = tuple[str, str, dict[str, Any]]
"""(method, path, JSON body) of one streaming run."""


def _langserve_request(i: int) -> Request:
    return "POST", "/agent/stream", {"input": {"input": f"run-{i}"}, "config": {}, "kwargs": {}}


def _langserve_output(name: str, data: Any) -> Any:
    return data.get("output") if name == "data" and isinstance(data, dict) else None


def _agent_protocol_request(i: int) -> Request:
    body = {"assistant_id": "agent", "input": {"input": f"run-{i}"}, "stream_mode": ["values"]}
    return "POST", "/runs/stream", body


def _agent_protocol_output(name: str, data: Any) -> Any:
    return data.get("output") if name == "values" and isinstance(data, dict) else None


def _responses_request(i: int) -> Request:
    return "POST", "/v1/responses", {"model": "agent", "input": f"run-{i}", "stream": True}


def _responses_output(name: str, data: Any) -> Any:
    return data.get("text") if name == "response.output_text.done" else None


def _agui_request(i: int) -> Request:
    message = {"id": "m1", "role": "user", "content": f"run-{i}"}
    body = {
        "threadId": f"bench-{i}-{uuid.uuid4().hex[:8]}",
        "runId": "r1",
        "messages": [message],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    return "POST", "/ag-ui", body


def _agui_output(name: str, data: Any) -> Any:
    if not isinstance(data, dict) or data.get("type") != "RUN_FINISHED":
        return None
    result = data.get("result")
    return result.get("output") if isinstance(result, dict) else result


def _a2a_request(i: int) -> Request:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": f"run-{i}"}]}
    body = {
        "jsonrpc": "2.0",
        "id": i,
        "method": "SendStreamingMessage",
        "params": {"message": message},
    }
    return "POST", "/a2a", body


def _a2a_output(name: str, data: Any) -> Any:
    update = data.get("result", {}).get("artifactUpdate") if isinstance(data, dict) else None
    return update["artifact"]["parts"][0].get("text") if update else None


PROTOCOLS: dict[str, tuple[Callable[[int], Request], Callable[[str, Any], Any]]] = {
    "langserve": (_langserve_request, _langserve_output),
    "agent-protocol": (_agent_protocol_request, _agent_protocol_output),
    "responses": (_responses_request, _responses_output),
    "ag-ui": (_agui_request, _agui_output),
    "a2a": (_a2a_request, _a2a_output),
}
"""Each protocol's request for run i, and how to read the final answer from one SSE event
(name, decoded data): None until the event that carries it."""


async def _one(client: Any, protocol: str, i: int, start: float) -> tuple[float, bool]:
    """(seconds from `start` to the stream's first event, whether it ended with its answer)."""
    request, output_of = PROTOCOLS[protocol]
    method, path, body = request(i)
    first, answer = -1.0, None
    async with client.stream(method, path, json=body) as response:
        name = "message"
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                if first < 0:
                    first = time.time() - start
                text = line[5:].strip()
                data = json.loads(text) if text.startswith(("{", "[")) else text
                answer = output_of(name, data) or answer
            elif not line:
                name = "message"
    return first, answer == f"value of run-{i}"


def _client(url: str, protocol: str, indices: list[int], link: Any) -> None:
    """One client process: its share of the runs, all launched at the wall-clock instant the
    parent sends once every client said it is ready (imports done, its HTTP client made), so a
    client process slow to start on a busy machine never counts as the server's time."""
    import httpx

    async def drive() -> list[tuple[float, bool, float]]:
        n = max(len(indices), 1)
        limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=600) as client:
            link.send("ready")
            start: float = link.recv()
            await asyncio.sleep(max(0.0, start - time.time()))

            async def timed(i: int) -> tuple[float, bool, float]:
                first, right = await _one(client, protocol, i, start)
                return first, right, time.time() - start

            results = await asyncio.gather(*(timed(i) for i in indices), return_exceptions=True)
        return [r if not isinstance(r, BaseException) else (-1.0, False, -1.0) for r in results]

    cpu = time.process_time()
    results = asyncio.run(drive())
    link.send((results, time.process_time() - cpu))
    link.close()


def drive(url: str, protocol: str, runs: int, clients: int) -> dict[str, Any]:
    """`runs` concurrent streams from `clients` processes; the row's client-side numbers."""
    ctx = multiprocessing.get_context("spawn")
    procs, pipes = [], []
    for k in range(clients):
        mine = list(range(k, runs, clients))
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_client, args=(url, protocol, mine, child))
        proc.start()
        child.close()  # so a client process that dies is an EOFError here, not a hang
        procs.append(proc)
        pipes.append(parent)
    for pipe, proc in zip(pipes, procs, strict=True):
        try:
            pipe.recv()  # "ready"
        except EOFError:
            raise RuntimeError(f"client process {proc.pid} died") from None
    start = time.time() + 0.2  # every client is waiting for it: a common instant
    for pipe in pipes:
        pipe.send(start)
    results: list[tuple[float, bool, float]] = []
    client_cpu = 0.0
    for pipe, proc in zip(pipes, procs, strict=True):
        try:
            mine, cpu = pipe.recv()
            results += mine
            client_cpu += cpu
        except EOFError:
            raise RuntimeError(f"client process {proc.pid} died") from None
        finally:
            proc.join()
    done = [r for r in results if r[2] >= 0]
    firsts = sorted(r[0] for r in done if r[0] >= 0)
    wall = max((r[2] for r in done), default=float("nan"))
    return {
        "completed": len(done),
        "own_answer": sum(1 for r in done if r[1]),
        "wall_s": round(wall, 3),
        "runs_per_s": round(sum(1 for r in done if r[1]) / wall, 1) if done else None,
        "first_event_p50_ms": round(1000 * statistics.median(firsts), 1) if firsts else None,
        "first_event_p99_ms": round(1000 * firsts[int(0.99 * (len(firsts) - 1))], 1)
        if firsts
        else None,
        "client_cpu_ms_per_run": round(1000 * client_cpu / max(runs, 1), 2),
    }


# ---------------------------------------------------------------- one row


def _start_server(lib: str, latency: float, runs: int) -> tuple[subprocess.Popen[bytes], str]:
    """A fresh server of `lib`; actloop's keeps the event logs of `runs` live threads (at least
    its default 200), as a server sized for that many concurrent threaded runs is."""
    import httpx

    port = free_port()
    python = sys.executable if lib == "actloop" else langserve_python()
    cmd = [python, __file__, "--server", lib, "--port", str(port), "--latency", str(latency)]
    cmd += ["--max-threads", str(max(200, runs))]
    env = {**os.environ, "PYTHONPATH": str(BENCH.parent / "src")} if lib == "actloop" else None
    proc = subprocess.Popen(cmd, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{url}/agent/input_schema").status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError(f"{lib} server did not start")
        time.sleep(0.1)


def measure(
    lib: str, protocol: str, runs: int, clients: int, latency: float, repeat: int = 1
) -> dict[str, Any]:
    """One row: `runs` concurrent streams of `protocol` against a fresh server of `lib`, `repeat`
    bursts one after the other (the row holds their medians, and each burst's runs/s: a burst of
    200 streams lasts about a second, so one pause elsewhere on the machine moves it 2-3x)."""
    import psutil

    proc, url = _start_server(lib, latency, runs)
    try:
        drive(url, protocol, min(20, runs), 1)  # warm-up: imports, first requests
        server = psutil.Process(proc.pid)
        load_before = os.getloadavg()[0]
        cpu_before = sum(server.cpu_times()[:2])
        row = {"lib": lib, "protocol": protocol, "concurrency": runs, "clients": clients}
        bursts = [drive(url, protocol, runs, clients) for _ in range(repeat)]
        row.update(_medians(bursts))
        row["server_cpu_ms_per_run"] = round(
            1000 * (sum(server.cpu_times()[:2]) - cpu_before) / (runs * repeat), 2
        )
        row["load_before_after"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
        if repeat > 1:
            row["runs_per_s_each"] = [b["runs_per_s"] for b in bursts]
    finally:
        proc.terminate()
        proc.wait(30)
    return row


def _medians(bursts: list[dict[str, Any]]) -> dict[str, Any]:
    """The bursts' numbers as one row: each measure's median; the runs that completed and that
    ended with their own answer, the fewest of any burst."""
    row: dict[str, Any] = {}
    for key in bursts[0]:
        values = [b[key] for b in bursts if b[key] is not None]
        if key in ("completed", "own_answer"):
            row[key] = min(values)
        else:
            row[key] = round(statistics.median(values), 2) if values else None
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrency", default="50,200,1000")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--clients", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    parser.add_argument("--out", help="also write the rows as a JSON list to this file")
    parser.add_argument(
        "--repeat", type=int, default=1, help="bursts per row, against one server (medians)"
    )
    parser.add_argument("--server", choices=["actloop", "langserve"])
    parser.add_argument("--port", type=int)
    parser.add_argument("--max-threads", type=int, default=200)
    parser.add_argument(
        "--no-reference",
        action="store_true",
        help="skip LangServe's row (actloop's protocols alone, e.g. to compare two versions)",
    )
    args = parser.parse_args()
    if args.server:
        serve(args.server, args.port, args.latency, args.max_threads)
        return
    rows: list[dict[str, Any]] = []
    for runs in (int(n) for n in args.concurrency.split(",")):
        reference: dict[str, Any] = {}
        if not args.no_reference:
            reference = measure(
                "langserve", "langserve", runs, args.clients, args.latency, args.repeat
            )
            rows.append(reference)
            print(json.dumps(reference), flush=True)
        for protocol in args.protocols.split(","):
            row = measure("actloop", protocol, runs, args.clients, args.latency, args.repeat)
            if reference.get("runs_per_s") and row["runs_per_s"]:
                row["throughput_vs_langserve"] = round(
                    row["runs_per_s"] / reference["runs_per_s"], 2
                )
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
