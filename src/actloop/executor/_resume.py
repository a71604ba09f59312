"""The input of a run that goes on with a saved thread (`Resume`), and the key of a paused run's
result. Public names of `actloop.executor`, so this module is loaded by `import actloop`: it holds
nothing else (the durable run's machinery loads with the first durable run).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

__all__ = ["PAUSED_KEY", "Resume"]

PAUSED_KEY = "pending_approvals"
"""Key of a paused run's result that lists the calls waiting for a decision."""


class Resume(NamedTuple):
    """The input of a run that goes on with a saved thread, and a person's decisions on the calls
    waiting in it: `executor.invoke(Resume(approve=True), {"configurable": {"thread_id": t}})` is
    `executor.resume(t, approve=True)`.

    `approve`: call ids to approve, or True for every waiting call; `reject`: ids (or {id:
    reason}); `edit`: {id: new tool input}; `answer`: {id: answer} for calls that asked a person
    for input (the form's content, "decline" or "cancel"). A single string is one id.
    """

    approve: bool | frozenset[str] = frozenset()
    reject: Mapping[str, str | None] = {}
    edit: Mapping[str, Any] = {}
    answer: Mapping[str, Any] = {}

    @classmethod
    def of(
        cls,
        approve: bool | Iterable[str] | None = None,
        reject: Mapping[str, str | None] | Iterable[str] | None = None,
        edit: Mapping[str, Any] | None = None,
        answer: Mapping[str, Any] | None = None,
    ) -> Resume:
        """A Resume from `resume()`'s arguments (None: nothing of that kind)."""
        return cls(_approvals(approve), _rejections(reject), dict(edit or {}), dict(answer or {}))


def _approvals(approve: bool | Iterable[str] | None) -> bool | frozenset[str]:
    if approve is True:
        return True
    if not approve:
        return frozenset()
    return frozenset([approve] if isinstance(approve, str) else approve)


def _rejections(reject: Mapping[str, str | None] | Iterable[str] | None) -> dict[str, str | None]:
    if reject is None:
        return {}
    if isinstance(reject, str):
        return {reject: None}
    if isinstance(reject, Mapping):
        return dict(reject)  # pyright: ignore[reportUnknownArgumentType]
    return dict.fromkeys(reject)
