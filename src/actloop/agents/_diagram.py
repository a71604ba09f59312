"""A `create_agent` agent drawn as LangGraph draws it: `CompiledAgent.get_graph()`.

`graph_of(spec)` lays out the nodes and edges LangChain's `create_agent` adds to its
`StateGraph` for the same `GraphSpec` (entry, loop entry, loop exit and exit nodes; a hook's
`can_jump_to` as conditional edges; the tools node's way out with `return_direct` tools or
structured output tools) in the order LangGraph's `draw_graph` gives them: nodes as added, edges
sorted, fixed edges to `__end__` last. `HumanInTheLoopMiddleware` is drawn as LangChain's (an
`after_model` node), though actloop's pauses on the durable approvals instead. `Graph` has
langchain-core's drawing API: `nodes`, `edges`, `draw_mermaid()` (the same text,
`tests/create_agent/test_diagram_compat.py` compares), `draw_ascii()` (through langchain-core
and grandalf when installed). PNG needs a renderer actloop does not ship (mermaid.ink over the
network, pyppeteer, graphviz): a clear error.
"""

from __future__ import annotations

import itertools
import string
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from actloop.agents.middleware.human_in_the_loop import HumanInTheLoopMiddleware
from actloop.agents.middleware.types import AgentMiddleware, can_jump_to

if TYPE_CHECKING:
    from actloop.agents._graph import GraphSpec

__all__ = ["Edge", "Graph", "Node", "NodeStyles", "graph_of"]

START = "__start__"
END = "__end__"
HOOKS = ("before_agent", "before_model", "after_model", "after_agent")
MARKDOWN_SPECIAL_CHARS = "*_`"
LABEL_ESCAPES = {
    "[": "#91;",
    "]": "#93;",
    "(": "#40;",
    ")": "#41;",
    "{": "#123;",
    "}": "#125;",
    '"': "#quot;",
    "<": "#60;",
    ">": "#62;",
    "|": "#124;",
}


def safe_id(label: str) -> str:
    """A Mermaid-safe node id: characters other than [a-zA-Z0-9_-] as backslash + hex code."""
    allowed = string.ascii_letters + string.digits + "_-"
    return "".join(ch if ch in allowed else "\\" + format(ord(ch), "x") for ch in label)


def escape_label(text: str) -> str:
    """A metadata line with Mermaid's entity codes for the characters it would parse."""
    text = text.replace("#", "#35;")
    for char, entity in LABEL_ESCAPES.items():
        text = text.replace(char, entity)
    return text


def metadata_lines(metadata: dict[str, Any]) -> list[str]:
    """`key = value` lines of a node's metadata (scalars and lists of scalars only)."""
    scalars = (str, int, float, bool)
    lines: list[str] = []
    for key, value in metadata.items():
        if isinstance(value, scalars):
            text = str(value)
        elif isinstance(value, (list, tuple, set)):
            members = list(cast("list[Any] | tuple[Any, ...] | set[Any]", value))
            if not all(isinstance(item, scalars) for item in members):
                continue
            items = [str(item) for item in members]
            text = ", ".join(sorted(items) if isinstance(value, set) else items)
        else:
            continue
        lines.append(escape_label(f"{key} = {text}"))
    return lines


NO_PNG = (
    "actloop draws a graph as Mermaid text only: a PNG needs a Mermaid renderer (LangGraph's "
    "default asks mermaid.ink over the network). Render `get_graph().draw_mermaid()` with "
    "Mermaid's own tools (mermaid-cli, mermaid.live) instead."
)


class Node(NamedTuple):
    """A node of the drawing (langchain-core's `Node` fields); `data` is None: actloop's nodes
    are no runnables."""

    id: str
    name: str
    data: Any
    metadata: dict[str, Any] | None


class Edge(NamedTuple):
    """An edge of the drawing (langchain-core's `Edge` fields)."""

    source: str
    target: str
    data: Any = None
    conditional: bool = False


@dataclass
class NodeStyles:
    """The Mermaid classes of nodes (langchain-core's `NodeStyles` defaults)."""

    default: str = "fill:#f2f0ff,line-height:1.2"
    first: str = "fill-opacity:0"
    last: str = "fill:#bfb6fc"


@dataclass
class Graph:
    """The drawable graph: nodes by id and edges, with langchain-core's `Graph` drawing API."""

    nodes: dict[str, Node] = field(default_factory=lambda: {})
    edges: list[Edge] = field(default_factory=lambda: [])

    def first_node(self) -> Node | None:
        """The one node no edge leads to (None if none or several)."""
        targets = {e.target for e in self.edges}
        found = [n for n in self.nodes.values() if n.id not in targets]
        return found[0] if len(found) == 1 else None

    def last_node(self) -> Node | None:
        """The one node no edge leaves (None if none or several)."""
        sources = {e.source for e in self.edges}
        found = [n for n in self.nodes.values() if n.id not in sources]
        return found[0] if len(found) == 1 else None

    def draw_mermaid(
        self,
        *,
        with_styles: bool = True,
        curve_style: Any = "linear",
        node_colors: Any = None,
        wrap_label_n_words: int = 9,
        frontmatter_config: dict[str, Any] | None = None,
    ) -> str:
        """The graph in Mermaid syntax, as langchain-core's `Graph.draw_mermaid` writes it
        (`curve_style` a name or langchain-core's `CurveStyle`; no edge has a label to wrap)."""
        curve = str(getattr(curve_style, "value", curve_style))
        styles = node_colors if node_colors is not None else NodeStyles()
        return _draw_mermaid(
            self,
            with_styles=with_styles,
            header=_frontmatter(curve, frontmatter_config),
            styles=_styles(styles),
        )

    def draw_ascii(self) -> str:
        """The graph as ASCII art: langchain-core's drawing (it lays the graph out with
        grandalf), so both must be installed."""
        try:
            from langchain_core.runnables.graph_ascii import draw_ascii
        except ImportError as exc:
            raise ImportError(
                "draw_ascii needs langchain-core and grandalf: "
                "`pip install langchain-core grandalf`."
            ) from exc
        return draw_ascii({n.id: n.name for n in self.nodes.values()}, self.edges)  # pyright: ignore[reportArgumentType]

    def print_ascii(self) -> None:
        """Print `draw_ascii()`."""
        print(self.draw_ascii())

    def draw_mermaid_png(self, **_: Any) -> bytes:
        """Not drawn here: see `NO_PNG`."""
        raise NotImplementedError(NO_PNG)

    def draw_png(self, *_: Any, **__: Any) -> bytes:
        """Not drawn here: see `NO_PNG`."""
        raise NotImplementedError(NO_PNG)


def _frontmatter(curve: str, config: dict[str, Any] | None) -> str:
    """The YAML front matter: the curve style in `config.flowchart`, merged into `config`
    (langchain-core dumps it with PyYAML, keys sorted; the default needs no PyYAML)."""
    config = config or {}
    flowchart = {**config.get("config", {}).get("flowchart", {}), "curve": curve}
    merged = {**config, "config": {**config.get("config", {}), "flowchart": flowchart}}
    if merged == {"config": {"flowchart": {"curve": curve}}} and curve.isalnum():
        return f"config:\n  flowchart:\n    curve: {curve}\n"
    import yaml  # a custom front matter is dumped as langchain-core dumps it

    return yaml.dump(merged, default_flow_style=False)


def _styles(styles: Any) -> str:
    """The `classDef` lines of the node styles (a dataclass such as `NodeStyles`)."""
    return "".join(f"\tclassDef {name} {style}\n" for name, style in asdict(styles).items())


# -- Mermaid text (langchain-core's `graph_mermaid.draw_mermaid`) -------------------------------


def _node_line(node: Node, formats: dict[str, str]) -> str:
    """A node's line: its id, its label (with metadata lines), its class."""
    label = node.name
    special = tuple(MARKDOWN_SPECIAL_CHARS)
    if label.startswith(special) and label.endswith(special):
        label = f"<p>{label}</p>"
    lines = metadata_lines(node.metadata or {})
    if lines:
        label = f"{label}<hr/><small><em>" + "\n".join(lines) + "</em></small>"
    return "\t" + formats.get(node.id, "{0}({1})").format(safe_id(node.id), label) + "\n"


def _draw_mermaid(graph: Graph, *, with_styles: bool, header: str, styles: str) -> str:
    """The whole text: front matter (`header`), nodes, edges, the `classDef` lines (`styles`).
    A create_agent graph's edges have no labels and its node ids no `:` (LangGraph's subgraph
    separator, refused in node names), so neither is drawn here."""
    formats: dict[str, str] = {}
    first, last = graph.first_node(), graph.last_node()
    if first is not None:
        formats[first.id] = "{0}([{1}]):::first"
    if last is not None:
        formats[last.id] = "{0}([{1}]):::last"
    if not with_styles:
        text = "graph TD;\n"
    else:
        text = f"---\n{header}---\ngraph TD;\n"
        text += "".join(_node_line(n, formats) for n in graph.nodes.values())
    # langchain-core groups edges by the common prefix of their ends: a node's edge to itself
    # is a group of its own, drawn after the others
    edges = [e for e in graph.edges if e.source != e.target]
    for edge in [*edges, *(e for e in graph.edges if e.source == e.target)]:
        arrow = " -.-> " if edge.conditional else " --> "
        text += f"\t{safe_id(edge.source)}{arrow}{safe_id(edge.target)};\n"
    return text + styles if with_styles else text


# -- what create_agent adds to its StateGraph -------------------------------------------------


@dataclass
class _Ends:
    """The four joints of `create_agent`'s graph, and where a jump from a hook goes."""

    entry: str
    loop_entry: str
    loop_exit: str
    exit: str


def _ends(hooks: dict[str, list[AgentMiddleware]]) -> _Ends:
    before_agent, before_model = hooks["before_agent"], hooks["before_model"]
    after_model, after_agent = hooks["after_model"], hooks["after_agent"]
    loop_entry = f"{before_model[0].name}.before_model" if before_model else "model"
    entry = f"{before_agent[0].name}.before_agent" if before_agent else loop_entry
    loop_exit = f"{after_model[0].name}.after_model" if after_model else "model"
    exit_ = f"{after_agent[-1].name}.after_agent" if after_agent else END
    return _Ends(entry, loop_entry, loop_exit, exit_)


@dataclass
class _Shape:
    """What the drawing reads of a `GraphSpec`: LangChain's node hooks and tools node for it."""

    spec: GraphSpec
    hooks: dict[str, list[AgentMiddleware]]
    has_tool_node: bool


def _shape(spec: GraphSpec) -> _Shape:
    """The spec as LangChain builds its graph. actloop's `HumanInTheLoopMiddleware` pauses on
    the durable approvals where LangChain's is an `after_model` node that also wraps tool calls
    (so it has a tools node): drawn as LangChain's."""
    hitl = [m for m in spec.middleware if isinstance(m, HumanInTheLoopMiddleware)]
    after_model = [m for m in spec.middleware if m in spec.hooks["after_model"] or m in hitl]
    return _Shape(
        spec, {**spec.hooks, "after_model": after_model}, spec.has_tool_node or bool(hitl)
    )


Declared = list[tuple[str, str, bool]]
"""Edges as `create_agent` adds them: (source, target, conditional)."""


def _hook_edge(
    out: Declared,
    ends: _Ends,
    middleware: AgentMiddleware,
    hook: str,
    default: str,
    has_tools: bool,
) -> None:
    """`create_agent`'s `_add_middleware_edge`: a fixed edge, or the hook's jumps."""
    name = f"{middleware.name}.{hook}"
    jumps = can_jump_to(middleware, hook)
    if not jumps:
        out.append((name, default, False))
        return
    targets = [default]
    if "end" in jumps:
        targets.append(ends.exit)
    if "tools" in jumps:
        if not has_tools:
            raise ValueError(f"At '{name}' node, 'jump_edge' branch found unknown target 'tools'")
        targets.append("tools")
    if "model" in jumps and name != ends.loop_entry:
        targets.append(ends.loop_entry)
    out.extend((name, target, True) for target in targets)


def _loop_edges(shape: _Shape, ends: _Ends) -> Declared:
    """The edges out of the loop: the tools node's, the loop exit's (model or after_model)."""
    hooks = shape.hooks
    structured_tools = bool(shape.spec.structured.tools)
    if shape.has_tool_node:
        direct = any(getattr(t, "return_direct", False) for t in shape.spec.tools.values())
        from_tools = [ends.loop_entry, *([ends.exit] if direct or structured_tools else [])]
        to_tools = ["tools", ends.exit]
        if shape.spec.structured.active or ends.loop_exit != "model" or shape.spec.model_wrappers:
            to_tools.append(ends.loop_entry)
        return [("tools", t, True) for t in from_tools] + [
            (ends.loop_exit, t, True) for t in to_tools
        ]
    if structured_tools:
        return [(ends.loop_exit, t, True) for t in (ends.loop_entry, ends.exit)]
    if ends.loop_exit == "model":
        return [("model", ends.exit, False)]
    out: Declared = []
    _hook_edge(out, ends, hooks["after_model"][0], "after_model", ends.exit, False)
    return out


def _chain(
    out: Declared,
    shape: _Shape,
    ends: _Ends,
    hook: str,
    order: list[AgentMiddleware],
    last: str | None,
) -> None:
    """A hook's nodes one after another in `order`, the last going to `last` (if given)."""
    for one, two in itertools.pairwise(order):
        _hook_edge(out, ends, one, hook, f"{two.name}.{hook}", shape.has_tool_node)
    if order and last is not None:
        _hook_edge(out, ends, order[-1], hook, last, shape.has_tool_node)


def declared_edges(spec: GraphSpec) -> Declared:
    """Every edge `create_agent` adds for `spec`, in its order."""
    shape = _shape(spec)
    hooks = shape.hooks
    ends = _ends(hooks)
    out: Declared = [(START, ends.entry, False), *_loop_edges(shape, ends)]
    _chain(out, shape, ends, "before_agent", hooks["before_agent"], ends.loop_entry)
    _chain(out, shape, ends, "before_model", hooks["before_model"], "model")
    after_model = hooks["after_model"]
    if after_model:
        out.append(("model", f"{after_model[-1].name}.after_model", False))
        _chain(out, shape, ends, "after_model", after_model[::-1], None)  # the last: `_loop_edges`
    _chain(out, shape, ends, "after_agent", hooks["after_agent"][::-1], END)
    return out


def _tool_names(spec: GraphSpec) -> list[str]:
    """The tools node's tool names in LangChain's order: middleware's tools, then the agent's."""
    names = [
        getattr(t, "name", None) or getattr(t, "__name__", "")
        for m in spec.middleware
        for t in m.tools
    ]
    return list(dict.fromkeys([*names, *spec.tools]))


def _metadata(spec: GraphSpec, name: str) -> dict[str, Any] | None:
    """A node's metadata as LangGraph draws it: its static interrupts, the tools node's tools."""
    metadata: dict[str, Any] = {}
    before, after = name in spec.interrupt_before, name in spec.interrupt_after
    if before or after:
        metadata["__interrupt"] = ",".join(
            w for w, on in (("before", before), ("after", after)) if on
        )
    if name == "tools" and (tools := _tool_names(spec)):
        metadata["__tools"] = tools
    return metadata or None


def _put_node(graph: Graph, id: str, metadata: dict[str, Any] | None = None) -> None:
    """Add the node `id` to `graph`."""
    graph.nodes[id] = Node(id=id, name=id, data=None, metadata=metadata)


def _put_edge(graph: Graph, source: str, target: str, *, conditional: bool = False) -> None:
    """Add an edge unless one joins the same nodes (LangGraph's `add_edge` of a drawing);
    `__end__` comes in with its first edge."""
    if any(e.source == source and e.target == target for e in graph.edges):
        return
    if target == END and END not in graph.nodes:
        _put_node(graph, END)
    for end in (source, target):
        if end not in graph.nodes:
            raise ValueError(f"Node {end} not in graph")
    graph.edges.append(Edge(source, target, None, conditional))


def graph_of(spec: GraphSpec) -> Graph:
    """The drawing of the agent `spec` (a `GraphSpec`) as LangGraph's `get_graph()` gives it."""
    graph, shape = Graph(), _shape(spec)
    names = [START, "model", *(["tools"] if shape.has_tool_node else [])]
    names += [f"{m.name}.{h}" for m in spec.middleware for h in HOOKS if m in shape.hooks[h]]
    for name in names:
        _put_node(graph, name, None if name == START else _metadata(spec, name))
    # LangGraph finds the edges by running the graph's writes; a fixed edge to the end is no
    # write, it comes last, from each node with edges in but none out
    found = {e for e in declared_edges(spec) if e[1] != END or e[2]}
    for source, target, conditional in sorted(found):
        _put_edge(graph, source, target, conditional=conditional)
    sources = {s for s, _, _ in found}
    for source in sorted({t for _, t, _ in found if t != END} - sources):
        _put_edge(graph, source, END)
    return graph
