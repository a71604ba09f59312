"""The `run_manager` a model's own hooks receive (`_call`, `_generate`, `_stream`), as in
langchain-core: it reports streamed tokens of the open model run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uuid import UUID

    from actloop.callbacks._manager import CallbackManager, RunManager

__all__ = ["AsyncCallbackManagerForLLMRun", "CallbackManagerForLLMRun"]


class _LLMRunBase:
    __slots__ = ("_run",)

    def __init__(self, run: RunManager) -> None:
        self._run = run

    @property
    def run_id(self) -> UUID:
        """Id of the model run."""
        return self._run.run_id

    @property
    def tags(self) -> list[str]:
        """Tags of the model run."""
        return self._run.tags

    @property
    def metadata(self) -> dict[str, Any]:
        """Metadata of the model run."""
        return self._run.metadata

    def get_child(self, tag: str | None = None) -> CallbackManager:
        """The manager for runs started inside the model run."""
        return self._run.get_child(tag)


class CallbackManagerForLLMRun(_LLMRunBase):
    """Sync model hooks report tokens with `on_llm_new_token(token, chunk=...)`."""

    __slots__ = ()

    def on_llm_new_token(self, token: str, *, chunk: Any = None, **kwargs: Any) -> None:
        """Report a streamed token to the run's handlers."""
        self._run.fire("on_llm_new_token", token, chunk=chunk, **kwargs)

    def on_text(self, text: str, **kwargs: Any) -> None:
        """Report free text to the run's handlers."""
        self._run.fire("on_text", text, **kwargs)


class AsyncCallbackManagerForLLMRun(_LLMRunBase):
    """Async model hooks `await run_manager.on_llm_new_token(token, chunk=...)`."""

    __slots__ = ()

    async def on_llm_new_token(self, token: str, *, chunk: Any = None, **kwargs: Any) -> None:
        """Report a streamed token to the run's handlers."""
        await self._run.afire("on_llm_new_token", token, chunk=chunk, **kwargs)

    async def on_text(self, text: str, **kwargs: Any) -> None:
        """Report free text to the run's handlers."""
        await self._run.afire("on_text", text, **kwargs)

    def get_sync(self) -> CallbackManagerForLLMRun:
        """The sync manager of the same run (for a sync hook called from an async one)."""
        return CallbackManagerForLLMRun(self._run)
