"""`ModelRefusalMiddleware` against LangChain 1.5's: the providers' refusal shapes raise the
same `ModelRefusalError` text, other replies pass, and a fallback model answers a refusal."""

from __future__ import annotations

import asyncio
from typing import Any

import langchain.agents.middleware as lc_mw
import pytest
from _both import agents, al_model, lc_model, reply, state_fields

import actloop.agents.middleware as al_mw


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


FIRST = reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1")
"""A tool call before the refusal, so the refusal comes on the second model call."""

REFUSALS: dict[str, dict[str, Any]] = {
    "anthropic stop reason": {
        "content": "I cannot help.",
        "response_metadata": {
            "model_provider": "anthropic",
            "stop_reason": "refusal",
            "stop_details": {"explanation": "policy", "category": "cyber"},
        },
    },
    "anthropic block": {
        "content": [{"type": "refusal", "refusal": "no", "extras": {"category": "bio"}}],
        "response_metadata": {"model_provider": "anthropic"},
    },
    "openai field": {
        "content": "",
        "additional_kwargs": {"refusal": "I can't assist with that."},
        "response_metadata": {"model_provider": "openai"},
    },
    "openai responses block": {
        "content": [{"type": "refusal", "refusal": "nope", "id": "msg_1", "reason": "x"}],
        "response_metadata": {"model_provider": "openai"},
    },
    "gemini safety": {
        "content": "",
        "response_metadata": {"model_provider": "google_genai", "finish_reason": "SAFETY"},
    },
    "v1 block": {
        "content": [{"type": "refusal", "refusal": "blocked"}],
        "response_metadata": {"output_version": "v1"},
    },
    "block without a provider": {"content": [{"type": "refusal", "refusal": "blocked"}]},
}

PASSING: dict[str, dict[str, Any]] = {
    "text": {"content": "I cannot help with that question."},
    "openai without refusal": {"content": "ok", "response_metadata": {"model_provider": "openai"}},
    "gemini stop": {
        "content": "ok",
        "response_metadata": {"model_provider": "google_genai", "finish_reason": "STOP"},
    },
    "refusal block of a groq reply": {
        "content": [{"type": "refusal", "refusal": "x"}],
        "response_metadata": {"model_provider": "groq"},
    },
}


def outcome(agent: Any, *, use_async: bool = False) -> Any:
    """The final state as fields, or the raised error as (type name, text, raw message)."""
    inputs = {"messages": [("user", "go")]}
    try:
        if use_async:
            return state_fields(asyncio.run(agent.ainvoke(inputs)))
        return state_fields(agent.invoke(inputs))
    except Exception as exc:
        raw = getattr(exc, "raw_message", None)
        return (type(exc).__name__, str(exc), None if raw is None else raw.content)


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refusals_raise_the_same_error(name: str, use_async: bool) -> None:
    replies = [FIRST, {**REFUSALS[name], "id": "r2"}]
    lc, al = agents(
        replies,
        [add],
        lc_middleware=[lc_mw.ModelRefusalMiddleware()],
        al_middleware=[al_mw.ModelRefusalMiddleware()],
    )
    expected = outcome(lc, use_async=use_async)
    assert outcome(al, use_async=use_async) == expected
    assert expected[0] == "ModelRefusalError"


@pytest.mark.parametrize("name", sorted(PASSING))
def test_other_replies_pass(name: str) -> None:
    replies = [FIRST, {**PASSING[name], "id": "r2"}]
    lc, al = agents(
        replies,
        [add],
        lc_middleware=[lc_mw.ModelRefusalMiddleware()],
        al_middleware=[al_mw.ModelRefusalMiddleware()],
    )
    expected = outcome(lc)
    assert outcome(al) == expected
    assert expected["messages"][-1]["id"] == "r2"


def test_error_message_names_category_and_text() -> None:
    replies = [FIRST, {**REFUSALS["anthropic stop reason"], "id": "r2"}]
    lc, al = agents(
        replies,
        [add],
        lc_middleware=[lc_mw.ModelRefusalMiddleware()],
        al_middleware=[al_mw.ModelRefusalMiddleware()],
    )
    expected = outcome(lc)
    assert outcome(al) == expected
    assert expected[:2] == (
        "ModelRefusalError",
        "Model refused to produce the requested output (category='cyber'): policy",
    )


@pytest.mark.parametrize("use_async", [False, True])
def test_a_fallback_model_answers_a_refusal(use_async: bool) -> None:
    replies = [FIRST, {**REFUSALS["openai field"], "id": "r2"}]
    fallback = [reply("fallback answer", id="f1")]
    lc, al = agents(
        replies,
        [add],
        lc_middleware=[
            lc_mw.ModelFallbackMiddleware(lc_model(fallback)),
            lc_mw.ModelRefusalMiddleware(),
        ],
        al_middleware=[
            al_mw.ModelFallbackMiddleware(al_model(fallback)),
            al_mw.ModelRefusalMiddleware(),
        ],
    )
    expected = outcome(lc, use_async=use_async)
    assert outcome(al, use_async=use_async) == expected
    assert expected["messages"][-1]["content"] == "fallback answer"
