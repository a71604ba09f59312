"""`ModelRouterMiddleware` and `ModelChoice` (LangChain 1.5's, ported; beta there): a decision
model picks one of the named models once per run, from the latest human message, and every
model call of the run goes to it.

The classifier is a LangChain decision model (`langchain_core.decisions.BaseDecisionModel`,
new in langchain-core 1.8), accepted as it is; the routing question is langchain-core's
`Choice` and the answer kept in the state (`model_route`) its `ChoiceAnswer`. So this module
imports langchain-core (and pydantic, which validates the options as LangChain's do) when a
router is built, never at `import actloop`. As LangChain's, the first router built warns
`LangChainBetaWarning`. The classifier gets actloop's messages (the latest `HumanMessage`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from typing_extensions import NotRequired

from actloop.agents.middleware._chat_models import init_chat_model
from actloop.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
)
from actloop.messages import HumanMessage

__all__ = ["ModelChoice", "ModelRouterMiddleware"]

_QUESTION_ID = "model_route"
_NO_HUMAN = "ModelRouterMiddleware requires a HumanMessage in the agent state to route on."


@dataclass(frozen=True)
class ModelChoice:
    """A model available to the router (an instance or a `"provider:name"` string) and the
    criterion for selecting it (text or any JSON value)."""

    model: Any
    criteria: Any


@functools.cache
def _config_type() -> Any:
    """The pydantic model validating a router's options (LangChain's `_ModelRouterConfig`)."""
    from langchain_core.decisions import Content
    from pydantic import BaseModel, Field, InstanceOf

    return type(
        "_ModelRouterConfig",
        (BaseModel,),
        {
            "__doc__": "Validated model-router configuration.",
            "__module__": __name__,
            "__annotations__": {
                "choices": dict[str, InstanceOf[ModelChoice]],
                "instructions": Content,
            },
            "choices": Field(min_length=1),
        },
    )


def _routing_questions(config: Any) -> dict[str, Any]:
    """The routing question (langchain-core's `Choice`) of validated options."""
    from langchain_core.decisions import Choice

    criteria = {route: choice.criteria for route, choice in config.choices.items()}
    return {_QUESTION_ID: Choice(instructions=config.instructions, criteria=criteria)}


class _ModelRouterState(AgentState):
    """The agent state with the routing answer."""

    model_route: NotRequired[Any]


_warned = False


def _warn_beta() -> None:
    """LangChain's beta warning, once a process (as its `@beta` decorator warns)."""
    global _warned
    if _warned:
        return
    _warned = True
    api = importlib.import_module("langchain_core._api.beta_decorator")
    api.warn_beta(name="ModelRouterMiddleware", obj_type="middleware")


class ModelRouterMiddleware(AgentMiddleware):
    """Select an agent's model with a decision model's `Choice` answer.

    Before the run, the latest human message is classified once; the whole `ChoiceAnswer`
    goes in the state (`model_route`) and its label picks the model of every model call in the
    run. A classifier failure propagates and ends the run.
    """

    state_schema = _ModelRouterState

    def __init__(
        self, *, choices: Mapping[str, ModelChoice], instructions: Any, classifier: Any
    ) -> None:
        """`choices`: the named models; `instructions`: what the classifier should follow;
        `classifier`: a LangChain decision model.

        Raises:
            pydantic.ValidationError: If no model choices are given.
        """
        if type(self) is ModelRouterMiddleware:
            _warn_beta()
        self.config = _config_type().model_validate(
            {"choices": choices, "instructions": instructions}
        )
        self.models = {
            route: init_chat_model(choice.model) if isinstance(choice.model, str) else choice.model
            for route, choice in self.config.choices.items()
        }
        self.classifier = classifier

    @staticmethod
    def _latest_human_message(state: Mapping[str, Any]) -> HumanMessage:
        """The latest human message of the state.

        Raises:
            ValueError: If the state holds no human message.
        """
        for message in reversed(state["messages"]):
            if isinstance(message, HumanMessage):
                return message
        raise ValueError(_NO_HUMAN)

    def _request(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """The classifier's input: the latest human message and the routing question."""
        return {
            "state": self._latest_human_message(state),
            "questions": _routing_questions(self.config),
        }

    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        """Classify the latest task and keep the whole routing answer."""
        response = self.classifier.invoke(self._request(state))
        return {"model_route": response.choices[_QUESTION_ID]}

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        """`before_agent` on the async path."""
        response = await self.classifier.ainvoke(self._request(state))
        return {"model_route": response.choices[_QUESTION_ID]}

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Send the model call to the selected model."""
        return handler(request.override(model=self.models[request.state["model_route"].choice]))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        """`wrap_model_call` on the async path."""
        model = self.models[request.state["model_route"].choice]
        return await handler(request.override(model=model))
