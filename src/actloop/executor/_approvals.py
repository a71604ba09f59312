"""A durable run's step as a person sees it: which calls wait for a decision (an approval, or an
unsafe repeat after a crash) or for a person's answers (a tool that asked, `_input`), which
decisions and answers a `Resume` input may bring, and what a known or decided call returns
without running. No I/O: the durable run (`_durable`) journals what is
decided here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from actloop.checkpoint._entries import TOO_DEEP, Decision, call_id, normalized_answers, too_deep
from actloop.exceptions import CheckpointError
from actloop.executor._input import (
    Answered,
    Asked,
    asking_item,
    input_call,
    pending_item,
    waiting_for_answer,
)
from actloop.executor._journal import Replayed, rejection
from actloop.executor._loop import ToolCall
from actloop.executor._resume import Resume

if TYPE_CHECKING:
    from collections.abc import Sequence

    from actloop.tools._input import InputCall

__all__ = ["Approvals", "Paused"]


class Paused(Exception):
    """Raised by `gate` when a step waits for approval; the run turns it into its result."""

    def __init__(self, pending: list[dict[str, Any]]) -> None:
        super().__init__(f"{len(pending)} tool call(s) wait for approval")
        self.pending = pending


def _idempotent(call: ToolCall) -> bool:
    return bool(getattr(call.tool, "idempotent", True))


def _needs_approval(call: ToolCall) -> bool:
    return bool(getattr(call.tool, "requires_approval", False))


class Approvals:
    """The decisions of one thread's run, and the results its current step already has."""

    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        self.tail_act = 0
        """The step a replay stopped in (its results and starts below belong to it)."""
        self.results: dict[int, Any] = {}
        """Observations the journal has of that step's calls, by call index."""
        self.starts: dict[int, int] = {}
        """Seq of the "start" entry of each of its calls that started and did not finish."""
        self.decisions: dict[tuple[int, int], Decision] = {}
        """Every decision journaled, by (step, call index)."""
        self.asks: dict[int, Asked] = {}
        """The latest question of each call of that step that asked for a person's input."""
        self.answers: dict[int, Answered] = {}
        """The latest answers to them, by call index."""

    def restore(self, tail: Replayed) -> None:
        """Take what replay found."""
        self.tail_act, self.results, self.starts = tail.act, tail.known, tail.starts
        self.decisions = tail.decisions

    def plain(self, act: int, calls: Sequence[ToolCall]) -> bool:
        """Whether step `act` has nothing to decide or look up: no result, start, question or
        decision journaled for it, and no call that needs approval, a "start" entry or a refusal
        (`settled`). Such a step runs its calls as they are; `gate`, `known`, `settled` and
        `needs_start` would all say so, at more cost per call."""
        if act == self.tail_act and (self.results or self.starts or self.asks):
            return False
        decisions = self.decisions
        for i, call in enumerate(calls):
            tool, tool_input = call.tool, call.action.tool_input
            if getattr(tool, "requires_approval", False) or not getattr(tool, "idempotent", True):
                return False
            if (decisions and (act, i) in decisions) or (
                type(tool_input) is str and tool_input == TOO_DEEP
            ):
                return False
        return True

    def waiting(self, act: int, calls: Sequence[ToolCall]) -> tuple[list[int], list[int]]:
        """Indices of the step's calls that need a decision: (unfinished unsafe, unapproved)."""
        unsafe: list[int] = []
        unapproved: list[int] = []
        for i, call in enumerate(calls):
            if act == self.tail_act and i in self.results:
                continue
            decision = self.decisions.get((act, i))
            started = self.starts.get(i) if act == self.tail_act else None
            asked = self.asks.get(i) if act == self.tail_act else None
            if started is not None and asked is not None and asked.seq > started:
                started = None  # it ended by asking for input: not cut short
            if started is not None and not _idempotent(call):
                if decision is None or decision.seq < started:
                    unsafe.append(i)
            elif decision is None and _needs_approval(call):
                unapproved.append(i)
        return unsafe, unapproved

    def asking(self, act: int, count: int) -> list[int]:
        """Indices of the step's calls whose latest question has no answer yet."""
        if act != self.tail_act:
            return []
        asks, answers = self.asks, self.answers
        return [i for i in range(count) if waiting_for_answer(asks.get(i), answers.get(i))]

    def answered(
        self, act: int, calls: Sequence[ToolCall], resume: Resume
    ) -> list[tuple[int, dict[str, Any]]]:
        """The answers `resume` brings, by call index, each checked against its call's
        questions (CheckpointError for a call that asks nothing or a malformed answer)."""
        asking = {call_id(act, i): i for i in self.asking(act, len(calls))}
        unknown = sorted(set(resume.answer) - set(asking))
        if unknown:
            raise CheckpointError(
                f"thread {self.thread_id!r} has no call waiting for an answer with id "
                f"{', '.join(unknown)}; waiting: {sorted(asking) or 'none'}"
            )
        return [
            (asking[ident], normalized_answers(ident, self.asks[asking[ident]].questions, given))
            for ident, given in resume.answer.items()
        ]

    def input_for(self, act: int, index: int) -> InputCall:
        """What call `index` runs with: the answers to its question, or nothing asked yet."""
        if act != self.tail_act:
            return input_call(None, None)
        return input_call(self.asks.get(index), self.answers.get(index))

    def choose(
        self, act: int, calls: Sequence[ToolCall], resume: Resume
    ) -> list[tuple[int, Decision]]:
        """The decisions `resume` brings, by call index, after checking each names a waiting
        call of step `act` and none is decided twice (CheckpointError otherwise)."""
        unsafe, unapproved = self.waiting(act, calls)
        waiting = {call_id(act, i): i for i in [*unsafe, *unapproved]}
        approve = resume.approve
        if approve is True:
            approve = frozenset(waiting) - set(resume.reject) - set(resume.edit)
        chosen: list[tuple[str, Decision]] = [
            *((i, Decision("approve")) for i in (approve or frozenset[str]())),
            *((i, Decision("reject", resume.reject[i])) for i in resume.reject),
            *((i, Decision("edit", None, resume.edit[i])) for i in resume.edit),
        ]
        ids = [i for i, _ in chosen]
        unknown = sorted(set(ids) - set(waiting))
        if unknown:
            raise CheckpointError(
                f"thread {self.thread_id!r} has no call waiting for a decision with id "
                f"{', '.join(unknown)}; waiting: {sorted(waiting) or 'none'}"
            )
        if len(set(ids)) < len(ids):
            raise CheckpointError(f"a call got more than one decision: {sorted(ids)}")
        return [(waiting[ident], decision) for ident, decision in chosen]

    def gate(self, act: int, calls: list[ToolCall]) -> list[ToolCall]:
        """Before step `act`'s tools run: CheckpointError for an unsafe repeat, `Paused` for
        calls that wait for approval; else the calls."""
        unsafe, unapproved = self.waiting(act, calls)
        if unsafe:
            ident = call_id(act, unsafe[0])
            raise CheckpointError(
                f"tool {calls[unsafe[0]].action.tool!r} (call {ident}) was running when thread "
                f"{self.thread_id!r} stopped, and it is not safe to repeat (idempotent=False). "
                f"Check whether it took effect, then resume with approve=[{ident!r}] to run it "
                f"again, or reject={{{ident!r}: 'what happened'}} to go on without it"
            )
        asking = self.asking(act, len(calls))
        if unapproved or asking:
            pending = [pending_item(act, i, calls[i]) for i in unapproved]
            pending += [asking_item(act, i, calls[i], self.asks[i].questions) for i in asking]
            raise Paused(pending)
        return calls

    def known(self, act: int, index: int) -> tuple[bool, Any]:
        """(True, observation) when the journal already has this call's result."""
        if act == self.tail_act and index in self.results:
            return True, self.results[index]
        return False, None

    def settled(self, act: int, index: int, call: ToolCall) -> str | None:
        """The observation of a call that is answered without running (rejected by a person,
        or with arguments too deep to save), else None."""
        decision = self.decisions.get((act, index))
        if decision is not None and decision.kind == "reject":
            return rejection(call.action.tool, decision.reason)
        if isinstance(call.action.tool_input, str) and call.action.tool_input == TOO_DEEP:
            return too_deep(call.action.tool)
        return None

    @staticmethod
    def needs_start(call: ToolCall) -> bool:
        """Whether a "start" entry must precede the call (a tool not safe to repeat)."""
        return not _idempotent(call)
