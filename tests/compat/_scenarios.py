"""Executor scenarios written once as data, built in LangChain classic and in actloop.

A scenario is an agent's scripted decisions (`Act`, a list of `Act` for a multi-action step,
`Finish`, `ParseError`), the tools it may call and the executor's options. `build(lib, scenario)`
turns it into an executor of that library; the `run_*` helpers run it in one mode and return
plain JSON (each library's own `dumpd`) of the output, of what the agent saw at every `plan`,
and of the callbacks fired, so the two libraries can be compared with `==`.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import langchain_core.agents as lc_agents
import langchain_core.callbacks as lc_callbacks
import langchain_core.exceptions as lc_exceptions
import langchain_core.language_models as lc_chat_models
import langchain_core.load as lc_load
import langchain_core.messages as lc_messages
import langchain_core.outputs as lc_outputs
import langchain_core.prompts as lc_prompts
import langchain_core.runnables as lc_runnables
import langchain_core.tools as lc_tools
import langchain_core.utils.function_calling as lc_function_calling

import actloop
import actloop.messages
import actloop.prompts
import actloop.serialization
import actloop.tool_calling
from actloop.testing import ScriptedChatModel

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langchain_classic.agents import AgentExecutor as LcAgentExecutor
    from langchain_classic.agents import BaseMultiActionAgent as LcBaseMultiActionAgent
    from langchain_classic.agents import BaseSingleActionAgent as LcBaseSingleActionAgent
    from langchain_classic.agents import create_tool_calling_agent as lc_create_tool_calling_agent

# -- the scripted decisions ----------------------------------------------------------------------


@dataclass(frozen=True)
class Act:
    """The agent asks for one tool call."""

    tool: str
    tool_input: Any
    log: str = ""


@dataclass(frozen=True)
class Finish:
    """The agent gives its final answer."""

    return_values: dict[str, Any]
    log: str = ""


@dataclass(frozen=True)
class ParseError:
    """The agent's output parser fails (an OutputParserException is raised from `plan`)."""

    message: str
    observation: str | None = None
    llm_output: str | None = None
    send_to_llm: bool = False


Decision = Act | list[Act] | Finish | ParseError


def _search(query: str) -> str:
    return f"results for {query}"


def _lookup(query: str) -> str:
    return f"entry {query}"


def _answer(query: str) -> str:
    return f"direct {query}"


def _data(query: str) -> dict[str, Any]:
    return {"query": query, "hits": [1, 2], "note": "café"}


def _broken(query: str) -> str:
    raise RuntimeError(f"tool broke on {query}")


TOOLS: dict[str, tuple[Callable[[str], Any], bool]] = {
    "search": (_search, False),
    "lookup": (_lookup, False),
    "answer": (_answer, True),
    "data": (_data, False),
    "broken": (_broken, False),
}
"""Tool name -> (function, return_direct)."""


@dataclass(frozen=True)
class Scenario:
    """One executor run: the agent's decisions, its tools and the executor's options."""

    name: str
    script: tuple[Decision, ...]
    options: dict[str, Any] = field(default_factory=lambda: {})
    tools: tuple[str, ...] = ("search", "lookup")
    multi: bool = False
    """The agent is a multi-action agent (its forced stop text differs)."""
    runnable: bool = False
    """The agent is a RunnableLambda (wrapped by the executor) instead of an agent subclass."""
    inputs: dict[str, Any] = field(default_factory=lambda: {"input": "question"})

    @property
    def has_multi_step(self) -> bool:
        """Some step runs several tools (their async callback order is not fixed)."""
        return any(isinstance(d, list) and len(d) > 1 for d in self.script)


# -- the two libraries ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Lib:
    """The names a scenario needs, from one library."""

    name: str
    AgentAction: Any
    AgentFinish: Any
    AgentStep: Any
    AgentExecutor: Any
    Tool: Any
    OutputParserException: Any
    RunnableLambda: Any
    BaseCallbackHandler: Any
    single_agent: Any
    multi_agent: Any
    dumpd: Callable[[Any], Any]


class Script:
    """Plays back the decisions as one library's objects; records (steps, inputs) of every plan."""

    def __init__(self, lib: Lib, decisions: tuple[Decision, ...]) -> None:
        self.lib = lib
        self.decisions = list(decisions)
        self.seen: list[Any] = []
        self.returned: list[Any] = []

    def next(self, steps: Any, inputs: dict[str, Any]) -> Any:
        self.seen.append({"steps": plain(self.lib, steps), "inputs": plain(self.lib, inputs)})
        decision = self.decisions.pop(0)
        if isinstance(decision, ParseError):
            raise self.lib.OutputParserException(
                decision.message,
                observation=decision.observation,
                llm_output=decision.llm_output,
                send_to_llm=decision.send_to_llm,
            )
        output = _decide(self.lib, decision)
        self.returned.append(output)
        return output


def _decide(lib: Lib, decision: Act | list[Act] | Finish) -> Any:
    if isinstance(decision, Act):
        return lib.AgentAction(decision.tool, decision.tool_input, decision.log)
    if isinstance(decision, Finish):
        return lib.AgentFinish(dict(decision.return_values), decision.log)
    return [_decide(lib, act) for act in decision]


class _Scripted:
    """`plan`/`aplan` from a Script; mixed into each library's agent base classes."""

    script: Any

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        return self.script.next(intermediate_steps, kwargs)

    async def aplan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        return self.script.next(intermediate_steps, kwargs)


class LcSingleAgent(_Scripted, LcBaseSingleActionAgent):  # type: ignore[misc]
    script: Any


class LcMultiAgent(_Scripted, LcBaseMultiActionAgent):  # type: ignore[misc]
    script: Any


class AlSingleAgent(_Scripted, actloop.BaseSingleActionAgent):
    pass


class AlMultiAgent(_Scripted, actloop.BaseMultiActionAgent):
    pass


LC = Lib(
    name="langchain",
    AgentAction=lc_agents.AgentAction,
    AgentFinish=lc_agents.AgentFinish,
    AgentStep=lc_agents.AgentStep,
    AgentExecutor=LcAgentExecutor,
    Tool=lc_tools.Tool,
    OutputParserException=lc_exceptions.OutputParserException,
    RunnableLambda=lc_runnables.RunnableLambda,
    BaseCallbackHandler=lc_callbacks.BaseCallbackHandler,
    single_agent=LcSingleAgent,
    multi_agent=LcMultiAgent,
    dumpd=lc_load.dumpd,
)
AL = Lib(
    name="actloop",
    AgentAction=actloop.AgentAction,
    AgentFinish=actloop.AgentFinish,
    AgentStep=actloop.AgentStep,
    AgentExecutor=actloop.AgentExecutor,
    Tool=actloop.Tool,
    OutputParserException=actloop.OutputParserException,
    RunnableLambda=actloop.RunnableLambda,
    BaseCallbackHandler=actloop.BaseCallbackHandler,
    single_agent=AlSingleAgent,
    multi_agent=AlMultiAgent,
    dumpd=actloop.serialization.dumpd,
)


def plain(lib: Lib, value: Any) -> Any:
    """`value` as JSON through the library's `dumpd`; an AgentStep as `{"step": [action, obs]}`."""
    if isinstance(value, lib.AgentStep):
        return {"step": [plain(lib, value.action), plain(lib, value.observation)]}
    if isinstance(value, dict):
        return {str(k): plain(lib, v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, (list, tuple)):
        return [plain(lib, v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return lib.dumpd(value)


# -- building ------------------------------------------------------------------------------------


def make_tool(lib: Lib, name: str) -> Any:
    func, return_direct = TOOLS[name]
    return lib.Tool(name=name, func=func, description=f"{name} tool", return_direct=return_direct)


def _runnable_agent(lib: Lib, script: Script, multi: bool) -> Any:
    def scripted_agent(inputs: dict[str, Any]) -> Any:
        rest = {k: v for k, v in inputs.items() if k != "intermediate_steps"}
        return script.next(inputs["intermediate_steps"], rest)

    # The executor wraps a Runnable as a multi-action agent iff its OutputType says so.
    returns = (
        list[lib.AgentAction] | lib.AgentFinish if multi else lib.AgentAction | lib.AgentFinish
    )
    scripted_agent.__annotations__ = {"inputs": dict, "return": returns}
    return lib.RunnableLambda(scripted_agent)


def build(lib: Lib, scenario: Scenario) -> tuple[Any, Script]:
    """The scenario's executor in `lib`, and the script its agent plays."""
    script = Script(lib, scenario.script)
    if scenario.runnable:
        agent = _runnable_agent(lib, script, scenario.multi)
    else:
        agent_cls = lib.multi_agent if scenario.multi else lib.single_agent
        agent = agent_cls(script=script)
    tools = [make_tool(lib, name) for name in scenario.tools]
    executor = lib.AgentExecutor(agent=agent, tools=tools, **scenario.options)
    return executor, script


# -- recording callbacks -------------------------------------------------------------------------


class _Recording:
    """Hooks that record `(hook, depth, details...)`; mixed into each library's handler class."""

    run_inline = True
    lib: Lib

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.depths: dict[UUID, int] = {}

    def _add(self, hook: str, kw: dict[str, Any], *details: Any) -> None:
        run_id, parent = kw["run_id"], kw.get("parent_run_id")
        if run_id not in self.depths:
            self.depths[run_id] = self.depths.get(parent, -1) + 1 if parent else 0
        self.events.append((hook, self.depths[run_id], *(plain(self.lib, d) for d in details)))

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        self._add("on_chain_start", kw, kw.get("name"), inputs)

    def on_chain_end(self, outputs: Any, **kw: Any) -> None:
        self._add("on_chain_end", kw, outputs)

    def on_chain_error(self, error: BaseException, **kw: Any) -> None:
        self._add("on_chain_error", kw, type(error).__name__, str(error))

    def on_tool_start(self, serialized: Any, input_str: str, **kw: Any) -> None:
        self._add("on_tool_start", kw, serialized["name"], input_str, kw.get("inputs"))

    def on_tool_end(self, output: Any, **kw: Any) -> None:
        self._add("on_tool_end", kw, output)

    def on_tool_error(self, error: BaseException, **kw: Any) -> None:
        self._add("on_tool_error", kw, type(error).__name__, str(error))

    def on_agent_action(self, action: Any, **kw: Any) -> None:
        self._add("on_agent_action", kw, action)

    def on_agent_finish(self, finish: Any, **kw: Any) -> None:
        self._add("on_agent_finish", kw, finish)

    def on_text(self, text: str, **kw: Any) -> None:
        self._add("on_text", kw, text)


def recorder(lib: Lib) -> Any:
    """A callback handler of `lib` recording `(hook, depth, details...)`; depth 0 is the executor.

    Details are the chain name and inputs, the tool name (`serialized["name"]`) and input, and
    outputs, actions and finishes as JSON.
    """
    cls = type("Recorder", (_Recording, lib.BaseCallbackHandler), {"lib": lib})
    return cls()


# -- running -------------------------------------------------------------------------------------

SYNC_MODES = ("invoke", "stream", "iter")
ASYNC_MODES = ("ainvoke", "astream", "aiter")


def _error(exc: Exception) -> dict[str, Any]:
    return {"error": [type(exc).__name__, str(exc)]}


def run_sync(
    lib: Lib, scenario: Scenario, mode: str, config: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Run the scenario in `mode` ("invoke", "stream" or "iter"); output, plans and callbacks."""
    executor, script = build(lib, scenario)
    handler = recorder(lib)
    config = {"callbacks": [handler], **(config or {})}
    output: Any
    try:
        if mode == "invoke":
            output = executor.invoke(dict(scenario.inputs), config)
        elif mode == "stream":
            output = list(executor.stream(dict(scenario.inputs), config))
        else:
            output = list(executor.iter(dict(scenario.inputs), callbacks=[handler]))
    except Exception as exc:
        output = _error(exc)
    return {"output": plain(lib, output), "seen": script.seen, "callbacks": handler.events}


async def run_async(
    lib: Lib, scenario: Scenario, mode: str, config: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Async twin of `run_sync` ("ainvoke", "astream" or "aiter")."""
    executor, script = build(lib, scenario)
    handler = recorder(lib)
    config = {"callbacks": [handler], **(config or {})}
    output: Any
    try:
        if mode == "ainvoke":
            output = await executor.ainvoke(dict(scenario.inputs), config)
        elif mode == "astream":
            output = [chunk async for chunk in executor.astream(dict(scenario.inputs), config)]
        else:
            iterator = executor.iter(dict(scenario.inputs), callbacks=[handler])
            output = [chunk async for chunk in iterator]
    except Exception as exc:
        output = _error(exc)
    return {"output": plain(lib, output), "seen": script.seen, "callbacks": handler.events}


# -- a tool-calling agent on a scripted chat model -----------------------------------------------


class LcScriptedChatModel(lc_chat_models.BaseChatModel):
    """langchain-core twin of `actloop.testing.ScriptedChatModel`: same name, same chunks."""

    responses: list[Any]
    index: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        return name or "ScriptedChatModel"

    def _next(self) -> Any:
        self.index += 1
        return self.responses[self.index - 1]

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        return lc_outputs.ChatResult(generations=[lc_outputs.ChatGeneration(message=self._next())])

    def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        """Words with their leading spaces, tool calls in the last chunk (as actloop's fake)."""
        reply = self._next()
        pieces = re.findall(r"\s*\S+|\s+", reply.content) or [reply.content]
        calls = [
            {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
            for i, c in enumerate(reply.tool_calls)
        ]
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            message = lc_messages.AIMessageChunk(
                content=piece,
                tool_call_chunks=calls if last else [],
                chunk_position="last" if last else None,
            )
            chunk = lc_outputs.ChatGenerationChunk(message=message)
            if run_manager is not None:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        schemas = [lc_function_calling.convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=schemas, **kwargs)


@dataclass(frozen=True)
class Reply:
    """One scripted model reply: text and `(tool, args, call id)` tool calls."""

    content: str = ""
    calls: tuple[tuple[str, dict[str, Any], str], ...] = ()


def _tool_calling_executor(
    lib: Lib, replies: tuple[Reply, ...], tools: list[Any] | None = None, **options: Any
) -> Any:
    if tools is None:
        tools = [make_tool(lib, name) for name in ("search", "lookup")]
    if lib is LC:
        messages_mod, prompts_mod = lc_messages, lc_prompts
        create = lc_create_tool_calling_agent
    else:
        messages_mod, prompts_mod = actloop.messages, actloop.prompts
        create = actloop.tool_calling.create_tool_calling_agent
    scripted = [
        messages_mod.AIMessage(
            content=r.content,
            tool_calls=[
                {"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in r.calls
            ],
        )
        for r in replies
    ]
    model = LcScriptedChatModel(responses=scripted) if lib is LC else ScriptedChatModel(scripted)
    prompt = prompts_mod.ChatPromptTemplate.from_messages(
        [
            ("system", "You are a helpful assistant."),
            ("human", "{input}"),
            prompts_mod.MessagesPlaceholder("agent_scratchpad"),
        ]
    )
    agent = create(model, tools, prompt)
    return lib.AgentExecutor(agent=agent, tools=tools, **options)


def tool_calling_executor(
    lib: Lib, replies: tuple[Reply, ...], tools: list[Any] | None = None, **options: Any
) -> Any:
    """`create_tool_calling_agent` on a scripted chat model, with `tools` (by default the search
    and lookup tools)."""
    return _tool_calling_executor(lib, replies, tools, **options)


def without_run_ids(value: Any) -> Any:
    """JSON without langchain-core's generated message ids (`lc_run-...`; actloop keeps None)."""
    if isinstance(value, dict):
        return {
            k: without_run_ids(v)
            for k, v in value.items()  # pyright: ignore[reportUnknownVariableType]
            if not (k == "id" and isinstance(v, str) and v.startswith("lc_run-"))
        }
    if isinstance(value, (list, tuple)):
        items = [without_run_ids(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return tuple(items) if isinstance(value, tuple) else items
    return value
