"""`AgentExecutor`: runs an agent's think-act-observe loop with LangChain classic's API.

The loop itself lives once in `_loop`; this module turns a run (`_run.AgentRun`) into a public
call (`invoke`, `ainvoke`, `stream`, `astream`, `iter`, `batch`, `astream_events`) by consuming
the events of a sync or async driver (`_drivers`). When an exception escapes a run it keeps its
type and carries the steps finished so far as `exc.intermediate_steps`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from actloop.callbacks import Callbacks
from actloop.executor._agents import (
    BaseMultiActionAgent,
    BaseSingleActionAgent,
    RunnableAgent,
    RunnableMultiActionAgent,
)
from actloop.executor._chain_api import ChainCallAPI
from actloop.executor._iterator import AgentExecutorIterator
from actloop.executor._resume import PAUSED_KEY, Resume
from actloop.executor._run import AgentRun, astart_inputs, start_inputs
from actloop.runnables._base import Runnable
from actloop.runnables._compose import AddableDict
from actloop.runnables._config import RunnableConfig, ensure_config
from actloop.runnables._foreign import adopt
from actloop.steps import AgentAction, AgentFinish

if TYPE_CHECKING:
    from actloop.checkpoint import BaseCheckpointer

__all__ = [
    "AgentExecutor",
    "AgentExecutorIterator",
    "BaseMultiActionAgent",
    "BaseSingleActionAgent",
    "Resume",
    "RunnableAgent",
    "RunnableMultiActionAgent",
]

Agent = BaseSingleActionAgent | BaseMultiActionAgent


def _wrap_runnable(agent: Runnable[Any, Any], stream_runnable: bool) -> Agent:
    """Wrap a Runnable as LangChain does: multi-action iff its OutputType is exactly that union."""
    try:
        multi = agent.OutputType == list[AgentAction] | AgentFinish
    except Exception:
        multi = False
    cls = RunnableMultiActionAgent if multi else RunnableAgent
    return cls(agent, stream_runnable=stream_runnable)


def _on_thread(config: RunnableConfig | None, thread_id: str) -> RunnableConfig:
    """`config` with `configurable.thread_id` set to `thread_id`."""
    base: dict[str, Any] = dict(ensure_config(config))
    base["configurable"] = {**base.get("configurable", {}), "thread_id": thread_id}
    return cast(RunnableConfig, base)


class AgentExecutor(ChainCallAPI, Runnable[dict[str, Any], dict[str, Any]]):
    """Runs an agent with tools until it finishes or a limit stops it."""

    def __init__(
        self,
        *,
        agent: Agent | Runnable[Any, Any],
        tools: Sequence[Any],
        return_intermediate_steps: bool = False,
        max_iterations: int | None = 15,
        max_execution_time: float | None = None,
        early_stopping_method: str = "force",
        handle_parsing_errors: bool | str | Callable[[Any], str] = False,
        trim_intermediate_steps: int | Callable[[list[Any]], list[Any]] = -1,
        callbacks: Callbacks = None,
        verbose: bool = False,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        stream_runnable: bool = True,
        checkpointer: BaseCheckpointer | None = None,
        name: str | None = None,
        memory: Any = None,
    ) -> None:
        if isinstance(agent, Runnable):
            agent = _wrap_runnable(agent, stream_runnable)
        self.agent: Agent = agent
        self.tools = [adopt(t) for t in tools]  # LangChain tools are wrapped
        self.return_intermediate_steps = return_intermediate_steps
        self.max_iterations = max_iterations
        self.max_execution_time = max_execution_time
        self.early_stopping_method = early_stopping_method
        self.handle_parsing_errors = handle_parsing_errors
        self.trim_intermediate_steps = trim_intermediate_steps
        self.callbacks = callbacks
        self.verbose = verbose
        self.tags = list(tags) if tags is not None else None
        self.metadata = dict(metadata or {})
        self.checkpointer = checkpointer
        self.name = name
        self.memory = memory
        """Loaded into each run's inputs before it, saved after it (`actloop.memory`; a
        LangChain memory works too). A durable run saves its inputs with the memory's variables
        in them, so a resumed run sees what the first attempt saw."""
        self._check_tools()

    def _check_tools(self) -> None:
        allowed = self.agent.get_allowed_tools()
        names = [tool.name for tool in self.tools]
        if allowed is not None and set(allowed) != set(names):
            raise ValueError(f"Allowed tools ({allowed}) different than provided tools ({names})")

    @classmethod
    def from_agent_and_tools(
        cls,
        agent: Agent | Runnable[Any, Any],
        tools: Sequence[Any],
        callbacks: Callbacks = None,
        **kwargs: Any,
    ) -> AgentExecutor:
        """Build an executor from an agent and tools (LangChain's constructor)."""
        return cls(agent=agent, tools=tools, callbacks=callbacks, **kwargs)

    @property
    def _action_agent(self) -> Agent:
        return self.agent

    @property
    def input_keys(self) -> list[str]:
        """The agent's input keys."""
        return self.agent.input_keys

    @property
    def output_keys(self) -> list[str]:
        """The agent's return values, plus `intermediate_steps` when returned."""
        keys = list(self.agent.return_values)
        return [*keys, "intermediate_steps"] if self.return_intermediate_steps else keys

    def lookup_tool(self, name: str) -> Any:
        """The tool called `name` (KeyError if none)."""
        return {tool.name: tool for tool in self.tools}[name]

    # -- run plumbing --------------------------------------------------------------------------

    def prep_inputs(self, input: Any) -> dict[str, Any]:
        """The run's inputs as a dict (a bare value needs exactly one input key that memory does
        not fill), with the memory's variables merged in."""
        inputs = self._as_dict(input)
        if self.memory is None:
            return inputs
        from actloop.memory._runs import load_into  # loaded with the first memory

        return load_into(self.memory, inputs)

    async def aprep_inputs(self, input: Any) -> dict[str, Any]:
        """Async `prep_inputs` (the memory loads with its async method)."""
        inputs = self._as_dict(input)
        if self.memory is None:
            return inputs
        from actloop.memory._runs import aload_into

        return await aload_into(self.memory, inputs)

    def _plain_inputs(self, input: Any) -> dict[str, Any] | None:
        """`start_inputs` in short, for the usual input: a dict to an executor without memory
        (what `prep_inputs` would only copy); None for any other (`start_inputs` takes it)."""
        if self.memory is None and type(input) is dict:
            return dict(cast("dict[str, Any]", input))
        return None

    def _as_dict(self, input: Any) -> dict[str, Any]:
        if isinstance(input, dict):
            return dict(cast("dict[str, Any]", input))
        from actloop.memory._runs import one_input_key

        return {one_input_key(self.input_keys, self.memory): input}

    def save_memory(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """The memory saves a finished run (not a paused one: it saves when it finishes)."""
        if self.memory is not None and PAUSED_KEY not in outputs:
            from actloop.memory._runs import save_run

            save_run(self.memory, inputs, outputs)

    async def asave_memory(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Async `save_memory`."""
        if self.memory is not None and PAUSED_KEY not in outputs:
            from actloop.memory._runs import asave_run

            await asave_run(self.memory, inputs, outputs)

    # -- public calls --------------------------------------------------------------------------

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run the agent to the end; returns `{**inputs, **outputs}`. A `Resume` input goes on
        with the saved thread `config["configurable"]["thread_id"]`."""
        config = ensure_config(config)
        resume: Resume | None = None
        inputs = self._plain_inputs(input)
        if inputs is None:
            inputs, resume = start_inputs(self, input, config)
        run = AgentRun(self, inputs, config, resume=resume)
        manager = run.manager
        try:
            if manager is not None:
                manager.flush()
            outputs = run.outputs(run.finish())
            if self.memory is not None:  # after the durable run's finish is written
                self.save_memory(inputs, outputs)
        except BaseException as exc:
            run.failed(exc)
            if manager is not None:
                manager.fire("on_chain_error", exc)
            raise
        if manager is not None:
            try:
                manager.fire("on_chain_end", outputs)
            except BaseException as exc:  # a raise_error handler: the steps stay on its error
                run.failed(exc)
                raise
        return outputs if kwargs.get("return_only_outputs") else {**inputs, **outputs}

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run the agent to the end on the event loop; returns `{**inputs, **outputs}`."""
        config = ensure_config(config)
        resume: Resume | None = None
        inputs = self._plain_inputs(input)
        if inputs is None:  # no coroutine for a plain input
            inputs, resume = await astart_inputs(self, input, config)
        run = AgentRun(self, inputs, config, resume=resume)
        manager = run.manager
        try:
            if manager is not None:
                await manager.aflush()
            outputs = run.outputs(await run.afinish())
            if self.memory is not None:  # after the durable run's finish is written
                await self.asave_memory(inputs, outputs)
        except BaseException as exc:
            run.failed(exc)
            if manager is not None:
                await manager.afire("on_chain_error", exc)
            raise
        if manager is not None:
            try:
                await manager.afire("on_chain_end", outputs)
            except BaseException as exc:  # a raise_error handler: the steps stay on its error
                run.failed(exc)
                raise
        return outputs if kwargs.get("return_only_outputs") else {**inputs, **outputs}

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[AddableDict]:
        """Yield `{"actions"}` before tools run, `{"steps"}` after, then the final output."""
        return iter(AgentExecutorIterator(self, input, config=config, yield_actions=True))

    def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[AddableDict]:
        """Async twin of `stream`."""
        return AgentExecutorIterator(self, input, config=config, yield_actions=True).__aiter__()

    def resume(
        self,
        thread_id: str,
        *,
        approve: bool | Iterable[str] | None = None,
        reject: Mapping[str, str | None] | Iterable[str] | None = None,
        edit: Mapping[str, Any] | None = None,
        answer: Mapping[str, Any] | None = None,
        config: RunnableConfig | None = None,
    ) -> dict[str, Any]:
        """Go on with the unfinished durable run `thread_id`; returns what `invoke` would.

        For a paused run: `approve` ids (or True for all), `reject` ids (or {id: reason}) and
        `edit` {id: new tool input} decide the calls in its `pending_approvals`; `answer` {id:
        answer} answers those that asked a person for input (their `questions`: the form's
        content, "decline" or "cancel"). The same as `invoke(Resume.of(approve, reject, edit,
        answer), config)` with `thread_id` in the config.
        """
        resume = Resume.of(approve, reject, edit, answer)
        return self.invoke(resume, _on_thread(config, thread_id))

    async def aresume(
        self,
        thread_id: str,
        *,
        approve: bool | Iterable[str] | None = None,
        reject: Mapping[str, str | None] | Iterable[str] | None = None,
        edit: Mapping[str, Any] | None = None,
        answer: Mapping[str, Any] | None = None,
        config: RunnableConfig | None = None,
    ) -> dict[str, Any]:
        """Async twin of `resume`."""
        resume = Resume.of(approve, reject, edit, answer)
        return await self.ainvoke(resume, _on_thread(config, thread_id))

    def iter(
        self,
        inputs: Any,
        callbacks: Callbacks = None,
        *,
        include_run_info: bool = False,
        async_: bool = False,
    ) -> AgentExecutorIterator:
        """Step through a run: `{"intermediate_step": [...]}` per step, then the final output."""
        return AgentExecutorIterator(
            self, inputs, callbacks, tags=self.tags, include_run_info=include_run_info
        )
