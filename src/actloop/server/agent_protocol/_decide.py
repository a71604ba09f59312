"""A run's input and the resume value of `command={"resume": ...}`, checked before anything runs.

The resume value decides the calls waiting for approval (their ids are the interrupt's
`action_requests[].id`, the journal's call ids):

- actloop's shape: `{"approve": true | [ids], "reject": [ids] | {id: reason}, "edit": {id: input},
  "answer": {id: answer}}` (any of them; `true` alone approves every waiting call; `null` or `{}`
  goes on with a failed or stopped run). `answer` answers a call that asked a person for input
  (its action request has `questions`): the form's content, `"decline"` or `"cancel"`;
- LangChain's human-in-the-loop shape: `{"decisions": [{"type": "approve"}, {"type": "reject",
  "message": reason}, {"type": "edit", "edited_action": {"name", "args"}}, {"type": "answer",
  "answer": answer}]}`, one per waiting call in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from actloop.server._http import HttpError

if TYPE_CHECKING:
    from actloop.executor import AgentExecutor

__all__ = ["decisions", "run_input"]


def decisions(resume: Any, pending: list[dict[str, Any]]) -> dict[str, Any]:
    """The `ThreadService.resume` keywords for a resume value; 422 for a malformed one."""
    if resume is None:
        return {}
    if resume is True:
        return {"approve": True}
    if not isinstance(resume, dict):
        raise HttpError(422, "'resume' must be true, null or an object")
    resume = cast(dict[str, Any], resume)
    if "decisions" in resume:
        return _listed(resume["decisions"], [str(p.get("id")) for p in pending])
    unknown = sorted(set(resume) - {"approve", "reject", "edit", "answer"})
    if unknown:
        raise HttpError(
            422,
            f"unknown resume key {unknown[0][:40]!r} (approve, reject, edit, answer, decisions)",
        )
    checked = _checked(resume.get("approve"), resume.get("reject"), resume.get("edit"))
    return {**checked, "answer": resume.get("answer")}


def _checked(approve: Any, reject: Any, edit: Any) -> dict[str, Any]:
    if approve is not None and approve is not True and not _strings(approve):
        raise HttpError(422, "'approve' must be true or a list of call ids")
    if reject is not None and not _strings(reject) and not isinstance(reject, dict):
        raise HttpError(422, "'reject' must be a list of call ids or {id: reason}")
    if edit is not None and not isinstance(edit, dict):
        raise HttpError(422, "'edit' must be {id: new tool input}")
    return {"approve": approve, "reject": reject, "edit": edit}


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in cast(list[Any], value))


def _listed(given: Any, waiting: list[str]) -> dict[str, Any]:
    """LangChain's `decisions` list, one per waiting call in order."""
    if not isinstance(given, list) or len(cast(list[Any], given)) != len(waiting):
        raise HttpError(
            422, f"'decisions' must be a list of {len(waiting)} decision(s), one per waiting call"
        )
    approve: list[str] = []
    reject: dict[str, Any] = {}
    edit: dict[str, Any] = {}
    answer: dict[str, Any] = {}
    for call, decision in zip(waiting, cast(list[Any], given), strict=True):
        kind = cast(dict[str, Any], decision).get("type") if isinstance(decision, dict) else None
        if kind == "approve":
            approve.append(call)
        elif kind == "reject":
            message = cast(dict[str, Any], decision).get("message")
            reject[call] = message if isinstance(message, str) else None
        elif kind == "edit":
            action = cast(dict[str, Any], decision).get("edited_action")
            if not isinstance(action, dict) or "args" not in action:
                raise HttpError(422, "an edit decision needs 'edited_action': {name, args}")
            edit[call] = cast(dict[str, Any], action)["args"]
        elif kind == "answer":
            answer[call] = cast(dict[str, Any], decision).get("answer")
        else:
            raise HttpError(422, "each decision's 'type' must be approve, reject, edit or answer")
    return {
        "approve": approve or None,
        "reject": reject or None,
        "edit": edit or None,
        "answer": answer or None,
    }


def run_input(executor: AgentExecutor, value: Any) -> Any:
    """A run's `input` as the executor takes it: LangGraph's `{"messages": [...]}` (what chat
    front ends send) gives its last human message as `input` when the agent has no `messages`
    input; anything else goes as it is (`ThreadService.start` checks it)."""
    if not isinstance(value, dict) or "messages" in executor.input_keys:
        return cast(Any, value)
    value = cast(dict[str, Any], value)
    if "messages" not in value or "input" in value:
        return value
    rest = {k: v for k, v in value.items() if k != "messages"}
    question = _last_human(value["messages"])
    if question is None:
        raise HttpError(422, "'messages' holds no human message")
    return {**rest, "input": question}


def _last_human(messages: Any) -> str | None:
    if not isinstance(messages, list):
        return None
    for message in reversed(cast(list[Any], messages)):
        if isinstance(message, str):
            return message
        if not isinstance(message, dict):
            continue
        message = cast(dict[str, Any], message)
        if message.get("type", message.get("role")) in ("human", "user"):
            return _content(message.get("content"))
    return None


def _block_text(block: Any) -> str:
    if isinstance(block, dict):
        return str(cast(dict[str, Any], block).get("text", ""))
    return str(block)


def _content(content: Any) -> str:
    if isinstance(content, list):
        blocks = cast(list[Any], content)
        return "".join(_block_text(b) for b in blocks)
    return "" if content is None else str(content)
