"""`AutoModeMiddleware` against LangChain 1.5's, both given the same LangChain decision model:
the same calls are classified with the same context, risky ones are blocked with the same
message, and the final messages are equal."""

from __future__ import annotations

import asyncio
from typing import Any

import langchain.agents.middleware as lc_mw
import pytest
from _both import agents, fields, reply, state_fields
from langchain_core.decisions import (
    BaseDecisionModel,
    ClassifierResponse,
    NoulAnswer,
    NoulCriteria,
    Question,
    State,
)
from pydantic import Field

import actloop.agents.middleware as al_mw


class Risk(BaseDecisionModel):
    """A decision model rating each tool by name (`risks`), keeping what it was asked."""

    model: str = "fake-risk"
    risks: dict[str, float] = Field(default_factory=lambda: {})
    requests: list[Any] = Field(default_factory=lambda: [])

    @property
    def _provider(self) -> str:
        return "fake"

    def _classify(self, state: State, questions: dict[str, Question]) -> ClassifierResponse:
        assert isinstance(state, dict)
        seen = {**state, "messages": fields(state["messages"])}
        self.requests.append((seen, questions))
        risk = self.risks[state["tool_call"]["name"]]
        return ClassifierResponse(
            model=self.model, answers={"is_risky": NoulAnswer(type="noul", noul=risk)}
        )


def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


def delete_file(path: str) -> str:
    """Delete a file at the supplied path."""
    return f"deleted {path}"


def ping() -> str:
    """Ping."""
    return "pong"


TOOLS = [read_file, delete_file, ping]
REPLIES = [
    reply(
        "",
        ("read_file", {"path": "a.txt"}, "c1"),
        ("delete_file", {"path": "a.txt"}, "c2"),
        ("ping", {}, "c3"),
        id="r1",
    ),
    reply("", ("delete_file", {"path": "b.txt"}, "c4"), id="r2"),
    reply("done", id="r3"),
]
RISKS = {"read_file": 0.1, "delete_file": 0.5}


def by_call(requests: list[Any]) -> list[Any]:
    """The classifier's requests in call-id order (LangGraph runs a step's calls on threads)."""
    return sorted(requests, key=lambda r: r[0]["tool_call"]["id"])


def auto_modes(**options: Any) -> tuple[Any, Any, Risk, Risk]:
    """The middleware of each library, each with its own classifier."""
    lc_risk, al_risk = Risk(risks=RISKS), Risk(risks=RISKS)
    tools = ["read_file", " delete_file "]
    return (
        lc_mw.AutoModeMiddleware(tools=tools, classifier=lc_risk, **options),
        al_mw.AutoModeMiddleware(tools=tools, classifier=al_risk, **options),
        lc_risk,
        al_risk,
    )


def outcome(agent: Any, *, use_async: bool) -> dict[str, Any]:
    """The final state as fields."""
    inputs = {"messages": [("user", "tidy up a.txt")]}
    if use_async:
        return state_fields(asyncio.run(agent.ainvoke(inputs)))
    return state_fields(agent.invoke(inputs))


@pytest.mark.parametrize("use_async", [False, True])
def test_risky_calls_are_blocked_alike(use_async: bool) -> None:
    lc_auto, al_auto, lc_risk, al_risk = auto_modes()
    lc, al = agents(REPLIES, TOOLS, lc_middleware=[lc_auto], al_middleware=[al_auto])
    expected = outcome(lc, use_async=use_async)
    assert outcome(al, use_async=use_async) == expected
    assert by_call(al_risk.requests) == by_call(lc_risk.requests)
    assert [r[0]["tool_call"]["id"] for r in by_call(lc_risk.requests)] == ["c1", "c2", "c4"]
    answers = {m["tool_call_id"]: m for m in expected["messages"] if m["type"] == "tool"}
    assert (answers["c1"]["status"], answers["c3"]["content"]) == ("success", "pong")
    assert answers["c2"]["status"] == "error"
    assert answers["c2"]["content"] == (
        "The tool call `delete_file` was blocked because it was classified as risky "
        "(probability: 0.50). The tool was not executed."
    )


def test_custom_instructions_and_criteria() -> None:
    criteria = NoulCriteria(true="Deletes data.", false="Reads data.")
    lc_auto, al_auto, lc_risk, al_risk = auto_modes(
        instructions="Assess the impact.", criteria=criteria
    )
    lc, al = agents(REPLIES, TOOLS, lc_middleware=[lc_auto], al_middleware=[al_auto])
    expected = outcome(lc, use_async=False)
    assert outcome(al, use_async=False) == expected
    assert by_call(al_risk.requests) == by_call(lc_risk.requests)
    assert lc_risk.requests[0][1]["is_risky"].criteria == criteria
