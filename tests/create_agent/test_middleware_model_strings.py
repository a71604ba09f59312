"""Model strings in middleware options (`LLMToolEmulator(model=...)`, `ModelChoice(model=...)`):
actloop's providers build them; any other provider goes to LangChain's `init_chat_model`."""

from __future__ import annotations

import pytest
from langchain_core.decisions import BaseDecisionModel, ClassifierResponse, Question, State

from actloop.agents.middleware import LLMToolEmulator, ModelChoice, ModelRouterMiddleware
from actloop.models import ChatOpenAI

pytestmark = pytest.mark.filterwarnings(
    "ignore::langchain_core._api.beta_decorator.LangChainBetaWarning"
)


class Unused(BaseDecisionModel):
    """A decision model these tests never ask."""

    model: str = "unused"

    @property
    def _provider(self) -> str:
        return "none"

    def _classify(self, state: State, questions: dict[str, Question]) -> ClassifierResponse:
        raise AssertionError("not asked")


def test_openai_strings_build_chat_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    emulator = LLMToolEmulator(tools=["weather"], model="openai:gpt-5-mini")
    assert isinstance(emulator.model, ChatOpenAI)
    assert (emulator.model.model_name, emulator.model.temperature) == ("gpt-5-mini", 1)
    router = ModelRouterMiddleware(
        choices={"fast": ModelChoice(model="openai:gpt-5-nano", criteria="Simple tasks.")},
        instructions="Choose a route.",
        classifier=Unused(),
    )
    fast = router.models["fast"]
    assert isinstance(fast, ChatOpenAI)
    assert (fast.model_name, fast.temperature) == ("gpt-5-nano", None)


def test_other_providers_go_to_langchain() -> None:
    with pytest.raises(ImportError) as caught:
        LLMToolEmulator(tools=["weather"], model="anthropic:claude-sonnet-4-5-20250929")
    assert str(caught.value) == (
        "Initializing ChatAnthropic requires the langchain-anthropic package. "
        "Please install it with `pip install langchain-anthropic`"
    )


def test_default_emulator_model_warns_and_names_the_package() -> None:
    with (
        pytest.warns(DeprecationWarning) as warned,
        pytest.raises(ImportError, match="requires `langchain-anthropic`"),
    ):
        LLMToolEmulator(tools=["weather"])
    assert str(warned[0].message) == (
        "LLMToolEmulator's default model ('anthropic:claude-sonnet-4-5-20250929') is deprecated "
        "and will be removed in a future release. Pass `model` explicitly instead."
    )
