"""Hierarchical tool selection for large tool sets: the model picks a category, then a tool in it.

`ToolCategories` turns `{"math": [add, multiply], "text": [upper, count_words]}` into one
`CategoryTool` per category. Calling one opens its category: the observation lists the
category's tools (enough for a text agent such as ReAct), and a model wrapped by
`ToolCategories.wrap` is bound, at each step, to the category tools plus the tools of the open
category only. Which category is open is read from the messages the model is shown (the latest
reply that called a category tool), so no state is kept outside the run and trimming stays
consistent: a step trimmed away closes its category again. The executor gets every tool
(`ToolCategories.tools`) and runs the one loop as for any agent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, cast

from actloop.exceptions import ConfigurationError
from actloop.runnables._base import Runnable, amerge_chunks, merge_chunks
from actloop.runnables._config import RunnableConfig
from actloop.tools._base import BaseTool
from actloop.tools.render import render_text_description

__all__ = ["CategorizedModel", "CategoryTool", "ToolCategories"]


class CategoryTool(BaseTool):
    """Opens one category: its observation lists the category's tools. Takes no arguments (any
    input, such as a ReAct `Action Input`, is ignored)."""

    args_schema = {"type": "object", "properties": {}}  # noqa: RUF012 - read-only
    tools: Sequence[BaseTool] = ()
    """The tools this category holds."""

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (), {}

    def _run(self, *args: Any, **kwargs: Any) -> str:
        return f"Category {self.name!r} is open. Its tools:\n{render_text_description(self.tools)}"

    async def _arun(self, *args: Any, **kwargs: Any) -> str:
        return self._run()


class ToolCategories:
    """Tools grouped by category, for a model that should see one category's tools at a time.

    - `category_tools`: one `CategoryTool` per category, named by its key; for a text agent's
      prompt (`create_react_agent(llm, toolset.category_tools, prompt)`).
    - `tools`: the category tools then every tool, for `AgentExecutor(tools=...)` and for
      `create_tool_calling_agent(toolset.wrap(llm), toolset.tools, prompt)`.

    A category's description is `descriptions[name]`, else `"Open the <name> tools: a, b."`.
    Names must be unique across categories and tools. A call to a tool of a closed category
    still runs (the executor knows every tool): a model that names a tool right loses nothing.
    """

    def __init__(
        self,
        categories: Mapping[str, Sequence[BaseTool]],
        *,
        descriptions: Mapping[str, str] | None = None,
    ) -> None:
        descriptions = dict(descriptions or {})
        _check(categories, descriptions)
        self.category_tools: list[CategoryTool] = [
            CategoryTool(
                name=name,
                description=descriptions.get(name)
                or f"Open the {name} tools: {', '.join(t.name for t in tools)}.",
                tools=list(tools),
            )
            for name, tools in categories.items()
        ]
        self.tools: list[BaseTool] = [
            *self.category_tools,
            *(t for tools in categories.values() for t in tools),
        ]
        self._category_of = {t.name: name for name, tools in categories.items() for t in tools}

    def __repr__(self) -> str:
        return f"ToolCategories({[c.name for c in self.category_tools]!r})"

    def opened(self, messages: Sequence[Any]) -> list[str]:
        """The open categories after `messages`: those called by the latest model reply that
        called any category tool (in call order); none before that."""
        names = {c.name for c in self.category_tools}
        for message in reversed(messages):
            calls: Any = getattr(message, "tool_calls", None) or ()
            opened = [c["name"] for c in calls if c["name"] in names]
            if opened:
                return list(dict.fromkeys(opened))
        return []

    def visible(self, tools: Sequence[Any], opened: Sequence[str]) -> list[Any]:
        """The `tools` a model sees with `opened` open: all but the tools of closed categories."""

        def shown(tool: Any) -> bool:
            category = self._category_of.get(str(getattr(tool, "name", "")))
            return category is None or category in opened

        return [t for t in tools if shown(t)]

    def wrap(self, model: Any) -> CategorizedModel:
        """`model` bound at each call to the visible part of `tools` (and to whatever `bind_tools`
        is later given instead); `model` must have `bind_tools`."""
        if not callable(getattr(model, "bind_tools", None)):
            raise ConfigurationError(
                f"ToolCategories.wrap needs a chat model with bind_tools(); got {model!r}"
            )
        return CategorizedModel(self, model, self.tools, {})


def _check(categories: Mapping[str, Sequence[BaseTool]], descriptions: Mapping[str, str]) -> None:
    """Developer mistakes raise at construction, naming the category or tool."""
    if not categories:
        raise ConfigurationError("ToolCategories needs at least one category: {'name': [tools]}")
    seen: set[str] = set()
    for name, tools in categories.items():
        if not tools:
            raise ConfigurationError(f"category {name!r} has no tools; give it at least one")
        for tool_name in [name, *(t.name for t in tools)]:
            if tool_name in seen:
                raise ConfigurationError(
                    f"the name {tool_name!r} is used twice; category and tool names must be unique"
                )
            seen.add(tool_name)
    unknown = sorted(set(descriptions) - set(categories))
    if unknown:
        raise ConfigurationError(
            f"descriptions name unknown categories {unknown}; the categories are {list(categories)}"
        )


def _messages(input: Any) -> list[Any]:
    """The messages of a model input: a prompt value's, a list's; none for a plain string."""
    to_messages: Any = getattr(input, "to_messages", None)
    if callable(to_messages):
        return list(cast("Sequence[Any]", to_messages()))
    return list(cast("list[Any]", input)) if isinstance(input, list) else []


class CategorizedModel(Runnable[Any, Any]):
    """A chat model that is shown, at each call, the category tools and the open category's tools.

    Transparent like a `bind_tools` binding: its calls are the model's own runs, nothing more.
    """

    def __init__(
        self,
        categories: ToolCategories,
        model: Any,
        tools: Sequence[Any],
        kwargs: dict[str, Any],
    ) -> None:
        self.categories = categories
        self.model = model
        self.bound_tools = list(tools)
        """The tools given to `bind_tools`; each call binds the visible ones."""
        self.kwargs = kwargs
        self._bound: dict[tuple[str, ...], Runnable[Any, Any]] = {}

    def get_name(self) -> str:
        return self.name or self.model.get_name()

    def __repr__(self) -> str:
        return f"CategorizedModel(model={self.model!r}, categories={self.categories!r})"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> CategorizedModel:
        """The same model shown these tools (filtered by category at each call)."""
        return CategorizedModel(self.categories, self.model, tools, kwargs)

    def for_input(self, input: Any) -> Runnable[Any, Any]:
        """The model bound to the tools visible for this input (cached per set of open
        categories, so the schemas are built once)."""
        opened = tuple(self.categories.opened(_messages(input)))
        bound = self._bound.get(opened)
        if bound is None:
            visible = self.categories.visible(self.bound_tools, opened)
            bound = self._bound[opened] = self.model.bind_tools(visible, **self.kwargs)
        return bound

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self.for_input(input).invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self.for_input(input).ainvoke(input, config, **kwargs)

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        return self.for_input(input).stream(input, config, **kwargs)

    def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        return self.for_input(input).astream(input, config, **kwargs)

    def transform(
        self, chunks: Iterator[Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        final = merge_chunks(chunks)
        yield from self.for_input(final).stream(final, config, **kwargs)

    async def atransform(
        self, chunks: AsyncIterator[Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        final = await amerge_chunks(chunks)
        async for chunk in self.for_input(final).astream(final, config, **kwargs):
            yield chunk
