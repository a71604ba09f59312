"""The local engine's sampler: grammar asked about the chosen token first, replies unchanged."""

from __future__ import annotations

import json

from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

from actloop.json_agent import json_agent_schema
from actloop.messages import HumanMessage
from actloop.models import LocalChatModel
from actloop.models._local_engine import Sampling, load_engine
from actloop.models._local_sampler import second_seed
from actloop.tools.builtin import calculator, clock


def _engine_and_prompt(text: str) -> tuple[object, list[int]]:
    model = LocalChatModel(temperature=0.0)
    engine = load_engine(model.model_path, model.n_ctx, model.n_threads)
    prompt, _ = engine.tokens([("user", text)])
    return engine, prompt


def test_greedy_reply_equals_llama_cpp_python_own_sampler() -> None:
    """At temperature 0 the grammar-last pick is the grammar-first pick: same tokens as
    llama-cpp-python's stock chain (grammar over the whole vocabulary, then greedy)."""
    schema = json.dumps(json_agent_schema([calculator, clock]))
    grammar = LlamaGrammar.from_string(json_schema_to_gbnf(schema), verbose=False)
    engine, prompt = _engine_and_prompt("What is 12 * 7 + 5? Reply in JSON.")
    ours = engine.complete(prompt, Sampling(0.0, 0, grammar, max_tokens=60))  # type: ignore[attr-defined]
    llm = engine.llm  # type: ignore[attr-defined]
    with engine.lock:  # type: ignore[attr-defined]
        llm.reset()
        reference: list[int] = []
        for token in llm.generate(prompt, temp=0.0, grammar=grammar, reset=True):
            if llm.token_eos() == token or engine._is_end(token) or len(reference) == 60:  # type: ignore[attr-defined]
                break
            reference.append(token)
        expected = llm.detokenize(reference).decode()
        llm.reset()
    assert ours == expected
    assert ours.startswith('{ "action": "calculator"') and len(reference) > 10


def test_a_token_the_grammar_refuses_is_picked_again_under_the_grammar() -> None:
    """The model's own favourite first token is not "4": the grammar forces the reply anyway."""
    model = LocalChatModel(temperature=0.0, max_tokens=10)
    free = model.invoke([HumanMessage("Say hello.")]).text
    assert not free.startswith("4")
    forced = model.invoke([HumanMessage("Say hello.")], grammar='root ::= "42"').text
    assert forced == "42"
    hot = LocalChatModel(temperature=1.5, max_tokens=10, seed=3)
    assert hot.invoke([HumanMessage("Say hello.")], grammar='root ::= "4" [0-9]').text[0] == "4"


def test_the_second_draw_is_seeded_apart_and_random_when_the_first_is() -> None:
    assert [second_seed(s) for s in (0, 41, 0xFFFFFFFE)] == [1, 42, 0]
    assert second_seed(0xFFFFFFFF) == 0xFFFFFFFF  # LLAMA_DEFAULT_SEED: random, not a fixed 0
