#!/usr/bin/env python3
"""`actloop serve` vs LangServe serving LangChain's AgentExecutor: many concurrent streaming runs.

Each server runs in its own process (uvicorn, one worker) and serves a tool-calling agent whose
scripted chat model answers after `--latency` seconds (asyncio.sleep): run i asks about `run-i`,
the model calls `lookup(key="run-i")`, then answers with the tool's result, so every output names
its input. One client process starts `--runs` streaming requests (`POST /agent/stream`) at once and
records, per run, the time to the first `data` event (from the moment all requests are launched, so
it includes queueing) and the final output. It reports throughput (runs per second of wall time),
p50/p99 time to first event, how many runs ended with exactly their own answer, and the CPU seconds
of the server process and of the client (the client's share is large: one httpx process parsing
every stream). It measures and reports; it asserts nothing.

Run with the repository's dev venv (it has langserve, fastapi, sse-starlette, langchain-classic):
`.venv/bin/python bench/serve_bench.py --runs 1000 --latency 0.05`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent


def actloop_app(latency: float) -> Any:
    from actloop import AgentExecutor
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
    return create_app(AgentExecutor(agent=agent, tools=[lookup]), max_batch=10_000)


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


def serve(lib: str, port: int, latency: float) -> None:
    import uvicorn

    app = actloop_app(latency) if lib == "actloop" else langserve_app(latency)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", backlog=4096)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def one(client: Any, i: int, start: float) -> tuple[float, str | None]:
    """(seconds to the first data event, the final output) of run i."""
    first, output = -1.0, None
    body = {"input": {"input": f"run-{i}"}, "config": {}, "kwargs": {}}
    async with client.stream("POST", "/agent/stream", json=body) as response:
        name = ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name == "data":
                if first < 0:
                    first = time.perf_counter() - start
                chunk = json.loads(line[6:])
                if "output" in chunk:
                    output = chunk["output"]
    return first, output


async def drive(url: str, runs: int) -> dict[str, Any]:
    import httpx

    limits = httpx.Limits(max_connections=runs, max_keepalive_connections=runs)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=300) as client:
        await one(client, -1, time.perf_counter())  # warm-up
        start = time.perf_counter()
        tasks = [one(client, i, start) for i in range(runs)]
        results = await asyncio.gather(*tasks, return_exceptions=True)
        wall = time.perf_counter() - start
    ok = [r for r in results if not isinstance(r, BaseException)]
    right = sum(
        1
        for i, r in enumerate(results)
        if not isinstance(r, BaseException) and r[1] == f"value of run-{i}"
    )
    firsts = sorted(f for f, _ in ok if f >= 0)
    return {
        "runs": runs,
        "completed": len(ok),
        "own_answer": right,
        "wall_s": round(wall, 3),
        "runs_per_s": round(runs / wall, 1),
        "first_event_p50_ms": round(1000 * statistics.median(firsts), 1) if firsts else None,
        "first_event_p99_ms": round(1000 * firsts[int(0.99 * (len(firsts) - 1))], 1)
        if firsts
        else None,
    }


def measure(lib: str, runs: int, latency: float) -> dict[str, Any]:
    import httpx

    port = free_port()
    cmd = [
        sys.executable,
        __file__,
        "--server",
        lib,
        "--port",
        str(port),
        "--latency",
        str(latency),
    ]
    proc = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": str(BENCH.parent / "src")})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/agent/input_schema").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"{lib} server did not start")
            time.sleep(0.1)
        before = resource.getrusage(resource.RUSAGE_SELF)
        row = {"lib": lib, **asyncio.run(drive(url, runs))}
        after = resource.getrusage(resource.RUSAGE_SELF)
        row["client_cpu_s"] = round(
            after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1
        )
    finally:
        proc.terminate()
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0
    row["server_cpu_s"] = round(usage.ru_utime + usage.ru_stime, 1)  # startup included
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--server", choices=["actloop", "langserve"])
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    if args.server:
        serve(args.server, args.port, args.latency)
        return
    rows = [measure(lib, args.runs, args.latency) for lib in ("actloop", "langserve")]
    for row in rows:
        print(json.dumps(row))
    a, b = rows
    print(f"throughput ratio actloop/langserve: {a['runs_per_s'] / b['runs_per_s']:.2f}x")


if __name__ == "__main__":
    main()
