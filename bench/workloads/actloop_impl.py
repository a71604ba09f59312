"""actloop side of the LangChain-API workloads (same code as langchain_ref, actloop imports).

Names are looked up on the package first, then on the modules named in docs/ARCHITECTURE.md, so
the harness keeps working while the public surface settles. Importing this module fails (and the
harness reports "n/a: not importable") until actloop exists.
"""

from __future__ import annotations

import importlib
import os
from types import SimpleNamespace
from typing import Any

import actloop

if getattr(actloop, "__file__", None) is None:
    raise ImportError("actloop is only a namespace package so far (no actloop/__init__.py)")

from workloads import _lc_style as lc
from workloads.common import now

UNSUPPORTED: dict[str, str] = {}
NOTES = {"stream": "AgentExecutor.stream(): first chunk (the first `actions` chunk)"}

_HOMES = (
    "actloop",
    "actloop.executor",
    "actloop.agents",
    "actloop.tools",
    "actloop.prompts",
    "actloop.messages",
    "actloop.testing",
    "actloop.agents_factory",
    "actloop.tool_calling",
)


def _find(name: str) -> Any:
    if hasattr(actloop, name):
        return getattr(actloop, name)
    for home in _HOMES[1:]:
        try:
            mod = importlib.import_module(home)
        except ImportError:
            continue
        if hasattr(mod, name):
            return getattr(mod, name)
    raise ImportError(f"actloop has no {name} (looked in {', '.join(_HOMES)})")


class _LazyApi(SimpleNamespace):
    """Resolves each name on first use, so a missing name fails only the workloads that need it."""

    def __getattr__(self, name: str) -> Any:
        if name == "make_chat_model":
            scripted = _find("ScriptedChatModel")
            value: Any = lambda responses: scripted(responses=responses)  # noqa: E731
        else:
            value = _find(name)
        setattr(self, name, value)
        return value


API = _LazyApi()


def loop_sync(n: int) -> float:
    return lc.loop_sync(API, n)


async def loop_async(n: int) -> float:
    return await lc.loop_async(API, n)


async def loop_async_synctool(n: int) -> float:
    return await lc.loop_async(API, n, with_async=False)


def agent_sync(n: int) -> float:
    return lc.agent_sync(API, n)


async def agent_async(n: int) -> float:
    return await lc.agent_async(API, n)


def stream_first(n: int) -> float:
    return lc.stream_first(API, n)


def parallel_sync() -> float:
    return lc.parallel_sync(API)


async def parallel_async() -> float:
    return await lc.parallel_async(API)


def hung_sync() -> tuple[float, str]:
    return lc.hung_sync(API)


async def hung_async() -> tuple[float, str]:
    return await lc.hung_async(API)


def mem_case(kind: str) -> Any:
    return lc.mem_case(API, kind)


async def many_async(count: int, steps: int) -> dict[str, Any]:
    return await lc.many_async(API, count, steps)


# ---------------------------------------------------------------- local model hook

LOCAL_MODEL_ENV = "ACTLOOP_BENCH_GGUF"


def local_model(steps: int = 3) -> dict[str, Any]:
    """Tokens/s and seconds per agent step with the embedded llama.cpp model (actloop.models.local).

    Needs ``ACTLOOP_BENCH_GGUF=/path/to/model.gguf``; the class is looked up by its likely names
    until the local provider lands. Returns ``{"skipped": reason}`` when it cannot run.
    """
    path = os.environ.get(LOCAL_MODEL_ENV)
    if not path:
        return {"skipped": f"set {LOCAL_MODEL_ENV}=/path/to/model.gguf"}
    try:
        local = importlib.import_module("actloop.models.local")
    except ImportError as e:
        return {"skipped": f"actloop.models.local not importable: {e}"}
    cls = next(
        (
            getattr(local, n)
            for n in ("ChatLlamaCpp", "LocalChatModel", "ChatLocal")
            if hasattr(local, n)
        ),
        None,
    )
    if cls is None:
        return {"skipped": "no chat model class found in actloop.models.local"}
    llm = cls(model_path=path)
    msg = API.HumanMessage(content="Write one sentence about the sea.")
    t0 = now()
    reply = llm.invoke([msg])
    gen_s = now() - t0
    tokens = (getattr(reply, "usage_metadata", None) or {}).get("output_tokens") or max(
        1, len(str(reply.content).split())
    )
    tool = lc.noop_tool(API)
    prompt = API.ChatPromptTemplate.from_messages(
        [
            ("system", "Call the noop tool once, then answer 'done'."),
            ("human", "{input}"),
            API.MessagesPlaceholder("agent_scratchpad"),
        ]
    )
    agent = API.create_tool_calling_agent(llm, [tool], prompt)
    ex = API.AgentExecutor(
        agent=agent, tools=[tool], max_iterations=steps, return_intermediate_steps=True
    )
    t0 = now()
    out = ex.invoke({"input": "go"})
    run_s = now() - t0
    n_steps = 1 + len(out.get("intermediate_steps", []))
    return {"tokens_per_s": tokens / gen_s, "s_per_step": run_s / n_steps, "steps": n_steps}
