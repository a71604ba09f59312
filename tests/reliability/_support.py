"""The fuzzed world: random model scripts and tool behaviours, a reference model of the loop, and
runners that drive one scenario through every public entry point.

A scenario is a script of model decisions (tool calls, malformed replies, finishes, provider
errors) plus executor settings. The model is a real agent pipeline (`create_react_agent` or
`create_tool_calling_agent`) over a `FunctionChatModel` that replays the script; the tools are real
actloop tools whose behaviour is spelled in their input (`"ok:7"`, `"rt_err:7"`, ...), so the
expected observations follow from the script alone. `expect()` is a small, independent model of
the loop's rules (SPEC A4, B1, B10) that says what every run must return or raise.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from actloop import AgentExecutor
from actloop.callbacks import BaseCallbackHandler
from actloop.exceptions import ModelError, OutputParserException, ToolException
from actloop.messages import AIMessage, BaseMessage
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder, PromptTemplate
from actloop.react import REACT_PROMPT, create_react_agent
from actloop.testing import FunctionChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import BaseTool, StructuredTool, Tool

LIVENESS = 10.0
"""Seconds a run with a deadline under 1 s may take before we call it hung (its tool or model
hangs for `HANG` s, or forever): a liveness guard, not a speed claim."""
HANG = 30.0
"""How long a hung call blocks (it returns earlier when the test's `release` event is set)."""
STOPPED = "Agent stopped due to iteration limit or time limit."
"""The executor's answer when a limit (iterations or time) stops it with the `force` method."""
REACT_TEMPLATE = PromptTemplate.from_template("{tools} {tool_names} {input} {agent_scratchpad}")
"""The smallest prompt a react agent accepts."""

SEED = int(os.environ.get("ACTLOOP_RELIABILITY_SEED", "20260711"))
"""Seed of every randomized reliability test (hypothesis `@seed`, the load test's RNG)."""

TOOL_NAMES = ("echo", "square", "direct")
BEHAVIOURS = ("ok", "nonstr", "sleep", "tool_err", "rt_err")
WEIGHTED_BEHAVIOURS = ("ok", "ok", "ok", "nonstr", "sleep", "tool_err", "tool_err", "rt_err")
MISSING_ACTION = "Invalid Format: Missing 'Action:' after 'Thought:'"
STOPPED_SINGLE = "Agent stopped due to iteration limit or time limit."
STOPPED_MULTI = "Agent stopped due to max iterations."
PARSE_ERROR_PREFIX = "An output parsing error occurred."
BAD_INT = "field 'n': Input should be a valid integer, unable to parse string as an integer"
HANDLED_TOOL_TEXT = "the tool failed; try something else"
HANDLED_PARSE_TEXT = "Reply in the Action / Action Input format."

# -- scenarios -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One tool call the model asks for; `arg` is the behaviour (square: "good" or "bad")."""

    tool: str
    arg: str
    uid: int


@dataclass(frozen=True)
class Decision:
    """One model reply: "act" (with calls), "malformed", "finish" or "model_error"."""

    kind: str
    uid: int
    calls: tuple[Call, ...] = ()
    error: str = ""
    """For "model_error": "connection" (ConnectionError) or "model" (ModelError)."""


EXHAUSTED = Decision("finish", 0)
"""What the model replies once the script is used up."""


@dataclass(frozen=True)
class Scenario:
    agent: str
    """"react" (single-action, text) or "tools" (multi-action, native tool calls)."""
    script: tuple[Decision, ...]
    max_iterations: int | None
    early_stopping_method: str
    handle_parsing_errors: str
    handle_tool_error: str
    trim: str
    deadline: bool
    """max_execution_time=120: never reached, but every plan and tool call runs under a deadline."""
    max_concurrency: int | None
    callbacks: bool


def _call(draw: st.DrawFn, uid: int) -> Call:
    tool = draw(st.sampled_from(["echo", "echo", "square", "direct", "nope"]))
    if tool == "square":
        return Call(tool, draw(st.sampled_from(["good", "bad"])), uid)
    return Call(tool, draw(st.sampled_from(WEIGHTED_BEHAVIOURS)), uid)


def _decision(draw: st.DrawFn, agent: str, uids: Iterator[int]) -> Decision:
    roll = draw(st.integers(0, 99))
    if roll < 64:
        count = 1 if agent == "react" else draw(st.integers(1, 3))
        calls = tuple(_call(draw, next(uids)) for _ in range(count))
        return Decision("act", next(uids), calls)
    if roll < 80:
        return Decision("malformed", next(uids))
    if roll < 90:
        return Decision("finish", next(uids))
    return Decision("model_error", next(uids), error=draw(st.sampled_from(["connection", "model"])))


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    agent = draw(st.sampled_from(["react", "tools"]))
    uids = iter(range(1, 1000))
    length = draw(st.integers(1, 8))
    return Scenario(
        agent=agent,
        script=tuple(_decision(draw, agent, uids) for _ in range(length)),
        max_iterations=draw(st.sampled_from([None, None, 0, 1, 2, 3, 5])),
        early_stopping_method=draw(st.sampled_from(["force", "generate"])),
        handle_parsing_errors=draw(st.sampled_from(["false", "true", "str", "callable"])),
        handle_tool_error=draw(st.sampled_from(["false", "true", "str", "callable"])),
        trim=draw(st.sampled_from(["none", "last1", "callable"])),
        deadline=draw(st.booleans()),
        max_concurrency=draw(st.sampled_from([None, 1])),
        callbacks=draw(st.booleans()),
    )


# -- the world a run happens in ---------------------------------------------------------------


def _parse_handler(name: str) -> Any:
    return {
        "false": False,
        "true": True,
        "str": HANDLED_PARSE_TEXT,
        "callable": lambda e: f"fix it: {e.observation}",
    }[name]


def _tool_handler(name: str) -> Any:
    return {
        "false": False,
        "true": True,
        "str": HANDLED_TOOL_TEXT,
        "callable": lambda e: f"handled: {e}",
    }[name]


def behave(prefix: str, query: str) -> Any:
    """What the echo/direct tools do for `query` = "<behaviour>:<uid>"."""
    behaviour, _, uid = query.partition(":")
    if behaviour == "nonstr":
        return {"uid": int(uid), "items": [1, 2]}
    if behaviour == "sleep":
        time.sleep(0.002)
        return f"slept {uid}"
    if behaviour == "tool_err":
        raise ToolException(f"tool failed {uid}")
    if behaviour == "rt_err":
        raise RuntimeError(f"boom {uid}")
    return f"{prefix} {uid}"


class ToolLog:
    """Every tool function that returned, as (tool, input, result), in completion order."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, Any, Any]] = []
        self._lock = threading.Lock()

    def wrap(self, name: str, fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def logged(value: Any) -> Any:
            result = fn(value)
            with self._lock:
                self.entries.append((name, str(value), result))
            return result

        return logged


def make_tools(handle_tool_error: Any, log: ToolLog) -> list[BaseTool]:
    square_fn = log.wrap("square", lambda n: int(n) ** 2)

    def square(n: int) -> int:
        """Square a whole number."""
        return square_fn(n)

    return [
        Tool(
            name="echo",
            func=log.wrap("echo", lambda q: behave("echo", q)),
            description="Echo the input.",
            handle_tool_error=handle_tool_error,
        ),
        StructuredTool.from_function(square, handle_tool_error=handle_tool_error),
        Tool(
            name="direct",
            func=log.wrap("direct", lambda q: behave("direct", q)),
            description="Answer directly.",
            return_direct=True,
            handle_tool_error=handle_tool_error,
        ),
    ]


def react_input(c: Call) -> str:
    if c.tool == "square":
        return str(c.uid % 50) if c.arg == "good" else f"x{c.uid}"
    return f"{c.arg}:{c.uid}"


def tools_args(c: Call) -> dict[str, Any]:
    if c.tool == "square":
        return {"n": c.uid % 50 if c.arg == "good" else f"x{c.uid}"}
    return {"__arg1": f"{c.arg}:{c.uid}"}


def react_action_text(d: Decision) -> str:
    c = d.calls[0]
    return f"Thought: step {d.uid}\nAction: {c.tool}\nAction Input: {react_input(c)}"


def react_reply(d: Decision) -> str:
    if d.kind == "act":
        return react_action_text(d)
    if d.kind == "malformed":
        return f"Thought: thinking {d.uid} without acting"
    return f"Thought: done\nFinal Answer: answer {d.uid}"


def tools_reply(d: Decision) -> AIMessage:
    if d.kind == "act":
        calls = [
            {"name": c.tool, "args": tools_args(c), "id": f"call_{c.uid}", "type": "tool_call"}
            for c in d.calls
        ]
        return AIMessage(f"calling {d.uid}", tool_calls=calls)  # type: ignore[arg-type]
    if d.kind == "malformed":
        raw = {"name": "echo", "arguments": "[1, 2]"}
        kwargs = {"tool_calls": [{"id": f"call_{d.uid}", "type": "function", "function": raw}]}
        return AIMessage("", additional_kwargs=kwargs)
    return AIMessage(f"answer {d.uid}")


def model_error(d: Decision) -> Exception:
    if d.error == "connection":
        return ConnectionError(f"network down {d.uid}")
    return ModelError(f"provider failed {d.uid}")


class ScriptPlayer:
    """Plays a scenario's script as the model: call k gets decision k (then EXHAUSTED)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, messages: list[BaseMessage]) -> Any:
        with self._lock:
            k, self.calls = self.calls, self.calls + 1
        script = self.scenario.script
        d = script[k] if k < len(script) else EXHAUSTED
        if d.kind == "model_error":
            raise model_error(d)
        return react_reply(d) if self.scenario.agent == "react" else tools_reply(d)


class Counter(BaseCallbackHandler):
    """Counts chain and tool events."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def _bump(self, name: str) -> None:
        with self._lock:
            self.counts[name] = self.counts.get(name, 0) + 1

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        if kw.get("parent_run_id") is None:
            self._bump("chain_start")

    def on_chain_end(self, outputs: Any, **kw: Any) -> None:
        if kw.get("parent_run_id") is None:
            self._bump("chain_end")

    def on_chain_error(self, error: BaseException, **kw: Any) -> None:
        if kw.get("parent_run_id") is None:
            self._bump("chain_error")

    def on_tool_start(self, serialized: Any, input_str: str, **kw: Any) -> None:
        self._bump("tool_start")

    def on_tool_end(self, output: Any, **kw: Any) -> None:
        self._bump("tool_end")

    def on_tool_error(self, error: BaseException, **kw: Any) -> None:
        self._bump("tool_error")


TOOLS_PROMPT = ChatPromptTemplate.from_messages(
    [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
)


@dataclass
class World:
    """One run's fresh model, tools, executor and records."""

    scenario: Scenario
    player: ScriptPlayer
    model: FunctionChatModel
    log: ToolLog
    executor: AgentExecutor
    counter: Counter | None
    config: dict[str, Any] = field(default_factory=lambda: {})


def build(scenario: Scenario) -> World:
    player = ScriptPlayer(scenario)
    model = FunctionChatModel(player)
    log = ToolLog()
    tools = make_tools(_tool_handler(scenario.handle_tool_error), log)
    if scenario.agent == "react":
        agent: Any = create_react_agent(model, tools, REACT_PROMPT)
    else:
        agent = create_tool_calling_agent(model, tools, TOOLS_PROMPT)
    trim: Any = {"none": -1, "last1": 1, "callable": lambda steps: steps[-2:]}[scenario.trim]
    executor = AgentExecutor(
        agent=agent,
        tools=tools,
        return_intermediate_steps=True,
        max_iterations=scenario.max_iterations,
        max_execution_time=120.0 if scenario.deadline else None,
        early_stopping_method=scenario.early_stopping_method,
        handle_parsing_errors=_parse_handler(scenario.handle_parsing_errors),
        trim_intermediate_steps=trim,
    )
    counter = Counter() if scenario.callbacks else None
    config: dict[str, Any] = {}
    if counter is not None:
        config["callbacks"] = [counter]
    if scenario.max_concurrency is not None:
        config["max_concurrency"] = scenario.max_concurrency
    return World(scenario, player, model, log, executor, counter, config)


# -- the reference model of the loop ----------------------------------------------------------

Step = tuple[str, Any, Any]
"""(tool, tool_input, observation) of one step."""


@dataclass
class Expected:
    steps: list[Step] = field(default_factory=lambda: [])
    output: Any = None
    output_prefix: str | None = None
    """Set when only the start of the output is known (a parse error's text)."""
    errors: dict[type[BaseException], list[str]] = field(default_factory=lambda: {})
    """On failure: the allowed error types and messages (message prefixes for ValueError)."""
    extras: list[Step] = field(default_factory=lambda: [])
    """On a failing step with several calls: sibling steps that may or may not be attached."""
    racy: bool = False
    """The run fails in a step of several calls: which error wins and which siblings are
    attached depend on thread timing."""
    model_calls: int = 0
    ran: list[tuple[str, str]] = field(default_factory=lambda: [])
    """(tool, str(input)) of every tool function that returned, in action order."""

    @property
    def fails(self) -> bool:
        return bool(self.errors)


def _call_input(agent: str, c: Call) -> Any:
    if agent == "react":
        return react_input(c)
    args = tools_args(c)
    return args.get("__arg1", args)


def _tool_outcome(sc: Scenario, c: Call) -> tuple[str, Any]:
    """("ok", observation), ("raise", exception) for one call."""
    if c.tool == "nope":
        return "ok", f"nope is not a valid tool, try one of [{', '.join(TOOL_NAMES)}]."
    if c.tool == "square":
        if c.arg == "bad":
            text = (
                f"Invalid arguments for tool 'square': {BAD_INT}. Fix the arguments and try again."
            )
            return "ok", text
        return "ok", (c.uid % 50) ** 2
    try:
        return "ok", behave(c.tool, f"{c.arg}:{c.uid}") if c.arg != "sleep" else f"slept {c.uid}"
    except ToolException as exc:
        handler = _tool_handler(sc.handle_tool_error)
        if handler is False:
            return "raise", exc
        if handler is True:
            return "ok", str(exc)
        return "ok", handler if isinstance(handler, str) else handler(exc)
    except RuntimeError as exc:
        return "raise", exc


def _parse_error(sc: Scenario, d: Decision) -> OutputParserException:
    if sc.agent == "react":
        text = react_reply(d)
        return OutputParserException(
            f"Could not parse LLM output: `{text}`",
            observation=MISSING_ACTION,
            llm_output=text,
            send_to_llm=True,
        )
    return OutputParserException("Could not parse tool input")


def _parse_observation(sc: Scenario, exc: OutputParserException) -> str:
    handler = _parse_handler(sc.handle_parsing_errors)
    if handler is True:
        return str(exc.observation) if exc.send_to_llm else "Invalid or incomplete response"
    return handler if isinstance(handler, str) else handler(exc)


def _stop_output(sc: Scenario, d: Decision, exp: Expected) -> None:
    if d.kind == "finish":
        exp.output = f"answer {d.uid}"
    elif d.kind == "model_error":
        exp.errors = {type(model_error(d)): [str(model_error(d))]}
    elif sc.agent == "react":
        exp.output = react_reply(d)
    elif d.kind == "act":
        exp.output = f"calling {d.uid}"
    else:
        exp.output_prefix = "Could not parse tool input:"


def expect(sc: Scenario) -> Expected:
    """What a run of `sc` must return or raise, by the loop's documented rules."""
    exp = Expected()
    script = list(sc.script)

    def reply() -> Decision:
        exp.model_calls += 1
        return script.pop(0) if script else EXHAUSTED

    iterations = 0
    while sc.max_iterations is None or iterations < sc.max_iterations:
        d = reply()
        if d.kind == "model_error":
            exp.errors = {type(model_error(d)): [str(model_error(d))]}
            return exp
        if d.kind == "finish":
            exp.output = f"answer {d.uid}"
            return exp
        if d.kind == "malformed":
            if sc.handle_parsing_errors == "false":
                exp.errors = {ValueError: [PARSE_ERROR_PREFIX]}
                return exp
            obs = _parse_observation(sc, _parse_error(sc, d))
            exp.steps.append(("_Exception", obs, obs))
        elif _act(sc, d, exp):
            return exp
        iterations += 1
    if sc.early_stopping_method == "force":
        exp.output = STOPPED_SINGLE if sc.agent == "react" else STOPPED_MULTI
    else:
        _stop_output(sc, reply(), exp)
    return exp


def _act(sc: Scenario, d: Decision, exp: Expected) -> bool:
    """Run one step's calls into `exp`; True when the run ends here."""
    outcomes = [(c, _tool_outcome(sc, c)) for c in d.calls]
    raised = [value for _, (kind, value) in outcomes if kind == "raise"]
    done: list[Step] = []
    for c, (kind, value) in outcomes:
        if kind == "ok":
            done.append((c.tool, _call_input(sc.agent, c), value))
            if (
                c.tool in ("echo", "direct") and c.arg not in ("tool_err", "rt_err")
            ) or c.arg == "good":
                exp.ran.append((c.tool, react_input(c)))
    if raised:
        exp.errors = {}
        for exc in raised:
            exp.errors.setdefault(type(exc), []).append(str(exc))
        exp.extras = done
        exp.racy = len(d.calls) > 1
        return True
    exp.steps.extend(done)
    if len(d.calls) == 1 and d.calls[0].tool == "direct":
        exp.output = done[0][2]
        return True
    return False


# -- running a scenario through the public API ------------------------------------------------


@dataclass
class Outcome:
    """What one run did, in comparable form."""

    mode: str
    output: Any = None
    error: BaseException | None = None
    steps: list[Step] = field(default_factory=lambda: [])
    streamed_steps: list[Step] | None = None
    racy: bool = False
    """The run fails in a step of several calls: which error wins and which siblings are
    attached depend on thread timing."""
    model_calls: int = 0
    ran: list[tuple[str, Any]] = field(default_factory=lambda: [])
    counts: dict[str, int] | None = None


def _flat(steps: Any) -> list[Step]:
    return [(a.tool, a.tool_input, obs) for a, obs in steps]


async def run_mode(scenario: Scenario, mode: str) -> Outcome:
    """Run `scenario` once through `mode` on a fresh world."""
    world = build(scenario)
    out = Outcome(mode)
    inputs = {"input": "question"}
    try:
        if mode == "invoke":
            result = world.executor.invoke(inputs, world.config)  # type: ignore[arg-type]
        elif mode == "ainvoke":
            result = await world.executor.ainvoke(inputs, world.config)  # type: ignore[arg-type]
        elif mode == "stream":
            chunks = list(world.executor.stream(inputs, world.config))  # type: ignore[arg-type]
            result = _from_chunks(chunks, out)
        elif mode == "astream":
            chunks = [c async for c in world.executor.astream(inputs, world.config)]  # type: ignore[arg-type]
            result = _from_chunks(chunks, out)
        else:
            chunks = list(world.executor.iter(inputs, world.config.get("callbacks")))
            result = chunks[-1]
            out.streamed_steps = _flat(s for c in chunks[:-1] for s in c["intermediate_step"])
        out.output = result["output"]
        out.steps = _flat(result["intermediate_steps"])
    except Exception as exc:
        out.error = exc
        out.steps = _flat(getattr(exc, "intermediate_steps", [("missing", None)]))
    out.model_calls = len(world.model.calls)
    out.ran = [(tool, value) for tool, value, _ in world.log.entries]
    if world.counter is not None:
        out.counts = dict(world.counter.counts)
    return out


def _from_chunks(chunks: list[Any], out: Outcome) -> dict[str, Any]:
    out.streamed_steps = [
        (s.action.tool, s.action.tool_input, s.observation)
        for c in chunks
        for s in c.get("steps", [])
    ]
    return chunks[-1]


MODES = ("invoke", "ainvoke", "stream", "astream", "iter")


def run_all_modes(scenario: Scenario) -> list[Outcome]:
    async def main() -> list[Outcome]:
        return [await run_mode(scenario, mode) for mode in MODES]

    return asyncio.run(main())
