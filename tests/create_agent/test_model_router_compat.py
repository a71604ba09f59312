"""`ModelRouterMiddleware` against LangChain 1.5's, both given the same LangChain decision model:
the classifier is asked the same question about the same message, every model call goes to the
chosen model, and the final states (with `model_route`) are equal."""

from __future__ import annotations

import asyncio
from typing import Any

import langchain.agents.middleware as lc_mw
import pytest
from _both import agents, al_model, fields, lc_model, reply, state_fields
from langchain_core.decisions import (
    BaseDecisionModel,
    ChoiceAnswer,
    ClassifierResponse,
    Question,
    State,
)
from pydantic import Field

import actloop.agents.middleware as al_mw

pytestmark = pytest.mark.filterwarnings(
    "ignore::langchain_core._api.beta_decorator.LangChainBetaWarning"
)


class Router(BaseDecisionModel):
    """A decision model choosing `route` (or failing with `error`), keeping what it was asked."""

    model: str = "fake-router"
    route: str = "powerful"
    error: str | None = None
    requests: list[Any] = Field(default_factory=lambda: [])

    @property
    def _provider(self) -> str:
        return "fake"

    def _classify(self, state: State, questions: dict[str, Question]) -> ClassifierResponse:
        self.requests.append((fields([state]), questions))
        if self.error is not None:
            raise RuntimeError(self.error)
        answer = ChoiceAnswer(
            type="choice",
            choice=self.route,
            probabilities={"fast": 0.25, "powerful": 0.75},
            confidence=0.5,
        )
        return ClassifierResponse(model=self.model, answers={"model_route": answer})


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


DEFAULT = [reply("from the default model", id="d1")]
ROUTES = {
    "fast": [reply("fast answer", id="f1")],
    "powerful": [
        reply("", ("add", {"a": 2, "b": 3}, "c1"), id="p1"),
        reply("", ("add", {"a": 5, "b": 5}, "c2"), id="p2"),
        reply("powerful answer", id="p3"),
    ],
}


def routers(**options: Any) -> tuple[Any, Any, Router, Router]:
    """The router middleware of each library, each with its own classifier."""
    made: list[Any] = []
    for mw, model in ((lc_mw, lc_model), (al_mw, al_model)):
        classifier = Router(**options)
        choices = {
            "fast": mw.ModelChoice(model=model(ROUTES["fast"]), criteria="Simple tasks."),
            "powerful": mw.ModelChoice(
                model=model(ROUTES["powerful"]), criteria={"use": "Complex tasks.", "cost": 3}
            ),
        }
        made += [
            mw.ModelRouterMiddleware(
                choices=choices, instructions="Choose the cheapest fit.", classifier=classifier
            ),
            classifier,
        ]
    return made[0], made[2], made[1], made[3]


MESSAGES = [("user", "an earlier task"), ("ai", "ready"), ("user", "add 2 and 3, then 5 and 5")]


def outcome(agent: Any, messages: Any, *, use_async: bool) -> Any:
    """The final state as fields, or the raised error as (type name, text)."""
    try:
        if use_async:
            return state_fields(asyncio.run(agent.ainvoke({"messages": messages})))
        return state_fields(agent.invoke({"messages": messages}))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("route", ["fast", "powerful"])
def test_every_model_call_goes_to_the_chosen_model(route: str, use_async: bool) -> None:
    lc_router, al_router, lc_classifier, al_classifier = routers(route=route)
    lc, al = agents(DEFAULT, [add], lc_middleware=[lc_router], al_middleware=[al_router])
    expected = outcome(lc, MESSAGES, use_async=use_async)
    assert outcome(al, MESSAGES, use_async=use_async) == expected
    assert al_classifier.requests == lc_classifier.requests
    assert lc_classifier.requests[0][0][0]["content"] == "add 2 and 3, then 5 and 5"
    assert expected["model_route"].choice == route
    assert expected["messages"][-1]["content"] == f"{route} answer"


@pytest.mark.parametrize(
    ("messages", "options"),
    [([("ai", "ready")], {}), (MESSAGES, {"error": "classifier unavailable"})],
)
def test_failures_end_the_run_alike(messages: Any, options: dict[str, Any]) -> None:
    lc_router, al_router, _, _ = routers(**options)
    lc, al = agents(DEFAULT, [add], lc_middleware=[lc_router], al_middleware=[al_router])
    expected = outcome(lc, messages, use_async=False)
    assert outcome(al, messages, use_async=False) == expected
    assert expected[0] in {"ValueError", "RuntimeError"}
