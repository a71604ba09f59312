"""`CompiledAgent.get_graph()` against LangGraph's drawing of the same agent (LangChain 1.5).

Each shape is built on both sides (middleware written once against a library's middleware
module); the nodes (ids, names, metadata), the edges (in order) and the Mermaid text must be
equal (the ASCII art: `test_ascii_art`). Shapes: no tools, tools, `return_direct` tools, each
hook kind alone and in chains, jumps from each hook, `wrap_model_call` and `wrap_tool_call`
middleware, middleware tools, each built-in middleware, structured output (tool, provider and
auto strategies), static interrupts, and a seeded random sweep over all of these.
"""

from __future__ import annotations

import asyncio
import random
import re
from typing import Any

import langchain.agents.middleware as lc_mw
import langchain.agents.structured_output as lc_so
import langchain_core.tools as lc_tools
import pytest
from _both import lc_model
from langchain.agents import create_agent as lc_create_agent
from langchain_core.runnables.graph import CurveStyle
from langchain_core.runnables.graph import NodeStyles as LcNodeStyles
from pydantic import BaseModel

import actloop.agents.middleware as al_mw
import actloop.agents.structured_output as al_so
from actloop.agents import create_agent as al_create_agent
from actloop.agents._diagram import NodeStyles
from actloop.testing import ScriptedChatModel
from actloop.tools import tool as al_tool

HOOKS = ("before_agent", "before_model", "after_model", "after_agent")
JUMPS = ("end", "model", "tools")


class Weather(BaseModel):
    """The weather of a city."""

    city: str
    degrees: int


def look(city: str) -> str:
    """Look a city up."""
    return city


def leave(city: str) -> str:
    """Leave a city."""
    return city


def helper(text: str) -> str:
    """A middleware's own tool."""
    return text


def middleware(
    mw: Any,
    name: str,
    hooks: dict[str, list[str] | None] | None = None,
    *,
    wrap_model: bool = False,
    wrap_tool: bool = False,
    asynchronous: bool = False,
    tools: list[Any] | None = None,
) -> Any:
    """A middleware class of library `mw` with `hooks` (each with its `can_jump_to`, None for
    none), built and instantiated."""
    attrs: dict[str, Any] = {}
    for hook, jumps in (hooks or {}).items():
        if asynchronous:

            async def fn(self: Any, state: Any, runtime: Any) -> None:
                return None

        else:

            def fn(self: Any, state: Any, runtime: Any) -> None:
                return None

        if jumps is not None:
            fn = mw.hook_config(can_jump_to=jumps)(fn)
        attrs[("a" + hook) if asynchronous else hook] = fn
    if wrap_model:
        attrs["wrap_model_call"] = lambda self, request, handler: handler(request)
    if wrap_tool:
        attrs["wrap_tool_call"] = lambda self, request, handler: handler(request)
    instance = type(name, (mw.AgentMiddleware,), attrs)()
    if tools:
        instance.tools = tools
    return instance


def build(
    tools: list[tuple[Any, bool]] = (),  # type: ignore[assignment]
    mws: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
    *,
    response_format: str | None = None,
    **kwargs: Any,
) -> tuple[Any, Any]:
    """The agent in LangChain and in actloop: `tools` as (function, return_direct), `mws` as
    (class name, `middleware` keyword arguments), `response_format` "tool"/"provider"/"auto"."""
    sides: list[Any] = []
    for mw, so, make_tool, create in (
        (lc_mw, lc_so, lc_tools.tool, lc_create_agent),
        (al_mw, al_so, al_tool, al_create_agent),
    ):
        made = [make_tool(return_direct=direct)(fn) for fn, direct in tools]
        middle: list[Any] = []
        for name, spec in mws:
            spec = dict(spec)
            if spec.pop("own_tool", False):
                spec["tools"] = [make_tool(helper)]
            middle.append(middleware(mw, name, **spec))
        formats = {
            None: None,
            "tool": so.ToolStrategy(Weather),
            "provider": so.ProviderStrategy(Weather),
            "auto": Weather,
        }
        model = lc_model([]) if create is lc_create_agent else ScriptedChatModel([])
        agent = create(
            model, made, middleware=middle, response_format=formats[response_format], **kwargs
        )
        sides.append(agent)
    return sides[0], sides[1]


def assert_same_drawing(lc: Any, al: Any) -> None:
    """The two drawings are the same: nodes, edges, Mermaid text (styled, plain, curved),
    ASCII art."""
    lg, ag = lc.get_graph(), al.get_graph()
    assert [(n.id, n.name, n.metadata) for n in ag.nodes.values()] == [
        (n.id, n.name, n.metadata) for n in lg.nodes.values()
    ]
    assert [tuple(e) for e in ag.edges] == [tuple(e) for e in lg.edges]
    assert ag.draw_mermaid() == lg.draw_mermaid()
    assert ag.draw_mermaid(with_styles=False) == lg.draw_mermaid(with_styles=False)
    basis = CurveStyle.BASIS
    assert ag.draw_mermaid(curve_style=basis) == lg.draw_mermaid(curve_style=basis)


def test_no_tools_draws_model_only() -> None:
    lc, al = build()
    assert_same_drawing(lc, al)
    assert al.get_graph().draw_mermaid() == (
        "---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;\n"
        "\t__start__([<p>__start__</p>]):::first\n"
        "\tmodel(model)\n"
        "\t__end__([<p>__end__</p>]):::last\n"
        "\t__start__ --> model;\n"
        "\tmodel --> __end__;\n"
        "\tclassDef default fill:#f2f0ff,line-height:1.2\n"
        "\tclassDef first fill-opacity:0\n"
        "\tclassDef last fill:#bfb6fc\n"
    )


@pytest.mark.parametrize(
    "tools",
    [
        [(look, False)],
        [(look, True)],
        [(look, True), (leave, False)],
        [(look, False), (leave, False)],
    ],
    ids=["tool", "return_direct", "mixed", "two"],
)
def test_tools(tools: list[tuple[Any, bool]]) -> None:
    assert_same_drawing(*build(tools))


@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize("with_tools", [False, True], ids=["no_tools", "tools"])
def test_each_hook_alone_and_chained(hook: str, with_tools: bool) -> None:
    tools = [(look, False)] if with_tools else []
    assert_same_drawing(*build(tools, [("One", {"hooks": {hook: None}})]))
    chain = [(name, {"hooks": {hook: None}}) for name in ("One", "Two", "Three")]
    assert_same_drawing(*build(tools, chain))


@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize("jumps", [["end"], ["model"], ["tools"], ["end", "model", "tools"]])
def test_jumps_from_each_hook(hook: str, jumps: list[str]) -> None:
    mws = [("Jumper", {"hooks": {hook: jumps}}), ("Other", {"hooks": {hook: None}})]
    assert_same_drawing(*build([(look, False)], mws))
    assert_same_drawing(*build([(look, False)], mws[::-1]))
    if "tools" not in jumps:  # LangGraph refuses a jump to a tools node there is not
        assert_same_drawing(*build([], mws))


def test_jump_to_tools_without_tools_is_refused_as_langgraph_refuses_it() -> None:
    hooks: dict[str, Any] = {"before_model": ["tools"]}
    with pytest.raises(ValueError, match="unknown target 'tools'") as lc_error:
        lc_create_agent(lc_model([]), [], middleware=[middleware(lc_mw, "Jumper", hooks)])
    jumper = middleware(al_mw, "Jumper", hooks)
    agent = al_create_agent(ScriptedChatModel([]), [], middleware=[jumper])
    with pytest.raises(ValueError) as al_error:
        agent.get_graph()
    assert str(al_error.value) == str(lc_error.value)


def test_after_agent_jumping_to_end_loops_on_itself() -> None:
    assert_same_drawing(*build([(look, False)], [("Last", {"hooks": {"after_agent": ["end"]}})]))


def test_wrappers_and_middleware_tools() -> None:
    assert_same_drawing(*build([], [("Wrap", {"wrap_model": True})]))
    assert_same_drawing(*build([(look, False)], [("Wrap", {"wrap_model": True})]))
    assert_same_drawing(*build([], [("ToolWrap", {"wrap_tool": True})]))  # a tools node, no tools
    assert_same_drawing(*build([(look, False)], [("Own", {"own_tool": True})]))
    assert_same_drawing(*build([], [("Own", {"own_tool": True, "hooks": {"after_model": None}})]))


def test_async_only_hooks() -> None:
    hooks: dict[str, Any] = {"before_model": ["end"], "after_agent": None}
    mws = [("Async", {"hooks": hooks, "asynchronous": True})]
    assert_same_drawing(*build([(look, False)], mws))


@pytest.mark.parametrize("strategy", ["tool", "provider", "auto"])
@pytest.mark.parametrize("with_tools", [False, True], ids=["no_tools", "tools"])
def test_structured_output(strategy: str, with_tools: bool) -> None:
    tools = [(look, False)] if with_tools else []
    assert_same_drawing(*build(tools, response_format=strategy))
    mws = [("After", {"hooks": {"after_model": ["model"], "after_agent": None}})]
    assert_same_drawing(*build(tools, mws, response_format=strategy))


@pytest.mark.parametrize(
    ("before", "after"),
    [(["model"], None), (None, ["tools"]), (["tools"], ["model", "tools"])],
)
def test_static_interrupts_are_node_metadata(before: Any, after: Any) -> None:
    assert_same_drawing(*build([(look, False)], interrupt_before=before, interrupt_after=after))


def test_ascii_art() -> None:
    """A chain's ASCII art is LangGraph's; grandalf's layout of a graph with branches varies
    from call to call (LangGraph's too, and it fails on some loops): there every node is boxed."""
    lc, al = build()
    assert al.get_graph().draw_ascii() == lc.get_graph().draw_ascii()
    lc, al = build([(look, False)])
    boxed = re.findall(r"\| (\S+) \|", al.get_graph().draw_ascii())
    assert (
        sorted(boxed) == sorted(lc.get_graph().nodes) == ["__end__", "__start__", "model", "tools"]
    )


def test_custom_front_matter_and_node_colors() -> None:
    lc, al = build([(look, False)])
    config = {"config": {"theme": "neutral", "themeVariables": {"primaryColor": "#e2e2e2"}}}
    assert al.get_graph().draw_mermaid(frontmatter_config=config) == lc.get_graph().draw_mermaid(
        frontmatter_config=config
    )
    colors = {"default": "fill:#fff", "first": "fill:#000", "last": "fill:#111"}
    assert al.get_graph().draw_mermaid(node_colors=NodeStyles(**colors)) == (
        lc.get_graph().draw_mermaid(node_colors=LcNodeStyles(**colors))
    )


def test_png_is_a_clear_error_and_aget_graph_is_get_graph() -> None:
    _, al = build([(look, False)])
    with pytest.raises(NotImplementedError, match="Mermaid text only"):
        al.get_graph().draw_mermaid_png()
    with pytest.raises(NotImplementedError, match="Mermaid text only"):
        al.get_graph().draw_png()
    assert asyncio.run(al.aget_graph()) == al.get_graph()


BUILTINS: dict[str, Any] = {
    "human_in_the_loop": lambda mw, model: mw.HumanInTheLoopMiddleware(interrupt_on={"look": True}),
    "model_call_limit": lambda mw, model: mw.ModelCallLimitMiddleware(run_limit=2),
    "tool_call_limit": lambda mw, model: mw.ToolCallLimitMiddleware(tool_name="look", run_limit=2),
    "model_retry": lambda mw, model: mw.ModelRetryMiddleware(),
    "tool_retry": lambda mw, model: mw.ToolRetryMiddleware(),
    "model_fallback": lambda mw, model: mw.ModelFallbackMiddleware(model),
    "todo": lambda mw, model: mw.TodoListMiddleware(),
    "context_editing": lambda mw, model: mw.ContextEditingMiddleware(),
    "pii": lambda mw, model: mw.PIIMiddleware("email", apply_to_output=True),
    "summarization": lambda mw, model: mw.SummarizationMiddleware(model, trigger=("messages", 9)),
    "tool_selection": lambda mw, model: mw.LLMToolSelectorMiddleware(model=model, max_tools=1),
}


@pytest.mark.parametrize("name", list(BUILTINS))
@pytest.mark.parametrize("with_tools", [False, True], ids=["no_tools", "tools"])
def test_builtin_middleware(name: str, with_tools: bool) -> None:
    """Each built-in middleware has LangChain's nodes; actloop's `HumanInTheLoopMiddleware`,
    which pauses on the durable approvals, is drawn as LangChain's `after_model` node."""
    tools = [look] if with_tools else []
    hooks: dict[str, Any] = {"before_model": ["end"], "after_model": None}
    lc_mws = [middleware(lc_mw, "Mine", hooks), BUILTINS[name](lc_mw, lc_model([]))]
    al_mws = [middleware(al_mw, "Mine", hooks), BUILTINS[name](al_mw, ScriptedChatModel([]))]
    lc = lc_create_agent(lc_model([]), [lc_tools.tool(t) for t in tools], middleware=lc_mws)
    al = al_create_agent(ScriptedChatModel([]), [al_tool(t) for t in tools], middleware=al_mws)
    assert_same_drawing(lc, al)


def random_shape(rng: random.Random) -> tuple[list[tuple[Any, bool]], list[Any], dict[str, Any]]:
    """A random agent: tools, two to four middleware with random hooks and jumps, maybe a
    response format and interrupts."""
    tools = [(fn, rng.random() < 0.3) for fn in (look, leave) if rng.random() < 0.5]
    has_tool_node = bool(tools)
    mws: list[Any] = []
    for i in range(rng.randint(0, 4)):
        hooks: dict[str, Any] = {}
        for hook in HOOKS:
            if rng.random() < 0.5:
                jumps = [j for j in JUMPS if rng.random() < 0.4]
                hooks[hook] = jumps or None
        spec: dict[str, Any] = {"hooks": hooks, "wrap_model": rng.random() < 0.2}
        if rng.random() < 0.15:
            spec["wrap_tool"] = has_tool_node = True
        if rng.random() < 0.15:
            spec["own_tool"] = has_tool_node = True
        mws.append((f"M{i}", spec))
    if not has_tool_node:  # LangGraph refuses jumps to a tools node there is not
        for _, spec in mws:
            hooks = spec["hooks"]
            spec["hooks"] = {
                h: [j for j in js or [] if j != "tools"] or None for h, js in hooks.items()
            }
    kwargs: dict[str, Any] = {"response_format": rng.choice([None, None, "tool", "provider"])}
    if rng.random() < 0.2:
        kwargs["interrupt_before"] = ["model"]
    return tools, mws, kwargs


@pytest.mark.parametrize("seed", range(40))
def test_random_shapes(seed: int) -> None:
    tools, mws, kwargs = random_shape(random.Random(seed))
    assert_same_drawing(*build(tools, mws, **kwargs))
