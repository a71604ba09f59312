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
from workloads.common import now, unrecorded

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
            model = unrecorded(_find("ScriptedChatModel"))  # as langchain_ref's keeps no log
            value: Any = lambda responses: model(responses=responses)  # noqa: E731
        else:
            value = _find(name)
        setattr(self, name, value)
        return value


API = _LazyApi()


# The workloads themselves live once in _lc_style; this library only supplies its API.
globals().update(lc.bind_workloads(API))


# ---------------------------------------------------------------- local model hook

LOCAL_MODEL_ENV = "ACTLOOP_BENCH_GGUF"
"""Optional: another GGUF file to measure instead of the embedded default."""


def local_model(runs: int = 5) -> dict[str, Any]:
    """The embedded model on the demo task: generation tokens/s, seconds per agent step, success.

    Runs the CLI's default agent (structured JSON agent, grammar-constrained, few-shot prompt) on
    "What is 12 * 7 + 5?" with seeds 0..runs-1; a run succeeds when its answer contains 89.
    """
    try:
        local = importlib.import_module("actloop.models.local")
        builtin = importlib.import_module("actloop.tools.builtin")
    except ImportError as e:
        return {"skipped": f"actloop.models.local not importable: {e}"}
    path = os.environ.get(LOCAL_MODEL_ENV) or None
    try:
        llm = local.LocalChatModel(model_path=path, temperature=0.0, max_tokens=48, seed=0)
    except Exception as e:  # the [local] extra is missing
        return {"skipped": f"local model unavailable: {e}"}
    llm.invoke("Warm up.")
    t0 = now()
    reply = llm.invoke("Write one sentence about the sea.")
    gen_s = now() - t0
    tokens = (reply.usage_metadata or {}).get("output_tokens") or 1
    tools = [builtin.calculator, builtin.clock]
    steps = ok = 0
    t0 = now()
    for seed in range(runs):
        agent = local.local_json_agent(local.LocalChatModel(model_path=path, seed=seed), tools)
        ex = API.AgentExecutor(
            agent=agent,
            tools=tools,
            max_iterations=4,
            handle_parsing_errors=True,
            return_intermediate_steps=True,
        )
        out = ex.invoke({"input": "What is 12 * 7 + 5?"})
        steps += 1 + len(out["intermediate_steps"])
        ok += "89" in out["output"]
    run_s = now() - t0
    return {
        "tokens_per_s": tokens / gen_s,
        "s_per_step": run_s / steps,
        "steps": steps,
        "success": f"{ok}/{runs}",
    }
