"""LangChain's deprecated Chain call API on the executor: `executor(inputs)`, `run`, `acall`,
`arun`. Each warns as LangChain does and calls `invoke`/`ainvoke`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from actloop.callbacks import Callbacks
from actloop.callbacks._manager import new_run_id
from actloop.exceptions import warn_deprecated
from actloop.runnables._config import RunnableConfig

__all__ = ["RUN_KEY", "ChainCallAPI", "RunInfo"]

RUN_KEY = "__run"
"""Key of the `RunInfo` in outputs when `include_run_info=True`."""


def _deprecated(method: str, stacklevel: int = 4) -> None:
    """LangChain's warning for a deprecated Chain method, once a process for each method."""
    warn_deprecated(
        f"Chain.{method}",
        f"The method `Chain.{method}` was deprecated in langchain-classic 0.1.0 and will be "
        "removed in 2.0.0. Use `invoke` instead.",
        stacklevel=stacklevel,
    )


def _config(
    callbacks: Callbacks,
    tags: list[str] | None,
    metadata: dict[str, Any] | None,
    run_name: str | None,
    with_run_id: bool = False,
) -> RunnableConfig:
    config: dict[str, Any] = {"callbacks": callbacks}
    if with_run_id:
        config["run_id"] = new_run_id()
    if tags:
        config["tags"] = tags
    if metadata:
        config["metadata"] = metadata
    if run_name:
        config["run_name"] = run_name
    return config  # pyright: ignore[reportReturnType]


class RunInfo:
    """What `include_run_info=True` adds under `RUN_KEY`: the run's id."""

    __slots__ = ("run_id",)

    def __init__(self, run_id: Any) -> None:
        self.run_id = run_id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunInfo) and other.run_id == self.run_id

    __hash__ = None  # pyright: ignore[reportAssignmentType]

    def __repr__(self) -> str:
        return f"RunInfo(run_id={self.run_id!r})"


class ChainCallAPI:
    """`__call__`/`acall`/`run`/`arun` over `invoke`/`ainvoke` (the executor supplies those)."""

    if TYPE_CHECKING:

        def invoke(
            self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
        ) -> Any: ...

        async def ainvoke(
            self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
        ) -> Any: ...

        @property
        def output_keys(self) -> list[str]: ...

    def __call__(
        self,
        inputs: Any,
        return_only_outputs: bool = False,
        callbacks: Callbacks = None,
        *,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        run_name: str | None = None,
        include_run_info: bool = False,
    ) -> dict[str, Any]:
        """Deprecated: `invoke` with LangChain's Chain call keywords."""
        _deprecated("__call__")
        config = _config(callbacks, tags, metadata, run_name, include_run_info)
        return self._with_run_info(
            self.invoke(inputs, config, return_only_outputs=return_only_outputs),
            config,
            include_run_info,
        )

    async def acall(
        self,
        inputs: Any,
        return_only_outputs: bool = False,
        callbacks: Callbacks = None,
        *,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        run_name: str | None = None,
        include_run_info: bool = False,
    ) -> dict[str, Any]:
        """Deprecated: `ainvoke` with LangChain's Chain call keywords."""
        _deprecated("acall")
        config = _config(callbacks, tags, metadata, run_name, include_run_info)
        outputs = await self.ainvoke(inputs, config, return_only_outputs=return_only_outputs)
        return self._with_run_info(outputs, config, include_run_info)

    def _with_run_info(
        self, outputs: dict[str, Any], config: RunnableConfig, include_run_info: bool
    ) -> dict[str, Any]:
        if include_run_info:
            outputs[RUN_KEY] = RunInfo(config.get("run_id"))
        return outputs

    def _only_output(self, outputs: dict[str, Any]) -> Any:
        keys = self.output_keys
        if len(keys) != 1:
            raise ValueError(
                f"`run` not supported when there is not exactly one output key. Got {keys}."
            )
        return outputs[keys[0]]

    def run(
        self,
        *args: Any,
        callbacks: Callbacks = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Deprecated: the one output for one positional input (or keyword inputs)."""
        _deprecated("run")
        inputs = _run_inputs(args, kwargs)
        config = _config(callbacks, tags, metadata, None)
        return self._only_output(self.invoke(inputs, config))

    async def arun(
        self,
        *args: Any,
        callbacks: Callbacks = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Deprecated: async `run`."""
        _deprecated("arun")
        inputs = _run_inputs(args, kwargs)
        config = _config(callbacks, tags, metadata, None)
        return self._only_output(await self.ainvoke(inputs, config))


def _run_inputs(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if args and not kwargs:
        if len(args) != 1:
            raise ValueError("`run` supports only one positional argument.")
        return args[0]
    if kwargs and not args:
        return kwargs
    raise ValueError(
        "`run` supported with either positional arguments or keyword arguments, "
        f"but not both. Got args: {args} and kwargs: {kwargs}."
    )
