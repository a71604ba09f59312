"""Token sampling for the local engine: the grammar is asked about the chosen token first.

llama.cpp's stock chain (llama-cpp-python's `_init_sampler`) runs the grammar over the whole
vocabulary (49k tokens for SmolLM2) before it picks a token: about 5 ms a token, a fifth of the
demo's time. Like llama.cpp's own `common_sampler`, `TokenSampler` picks from the unconstrained
distribution first and asks the grammar about that one token; only when the grammar refuses it
is the token picked again with the grammar over the whole vocabulary. The chain is otherwise
llama-cpp-python's default (top-k 40, top-p 0.95, min-p 0.05, temperature, seeded draw).

Measured in `bench/` terms on the demo question (one thread): sampling took 245 ms of a 1.4 s
run before, 6 ms after. Drafting tokens from the prompt (prompt-lookup speculative decoding) was
tried too and dropped: on this CPU a forward pass over k tokens costs nearly k single passes, so
checking drafts cost more than it saved.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

__all__ = ["TokenSampler"]

_TOP_K, _TOP_P, _MIN_P = 40, 0.95, 0.05
"""llama-cpp-python's defaults, kept so replies stay as they were before this module."""


class TokenSampler:
    """Samples a reply's tokens from a llama.cpp context, under an optional GBNF grammar."""

    def __init__(self, vocab: Any, grammar: tuple[str, str] | None, temperature: float, seed: int):
        import llama_cpp

        self._lib: Any = llama_cpp
        self._free = self._chain(None, temperature, seed)
        self._full = self._chain((vocab, grammar), temperature, seed) if grammar else None

    def _chain(
        self, grammar: tuple[Any, tuple[str, str]] | None, temperature: float, seed: int
    ) -> Any:
        lib = self._lib
        chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
        parts: list[Any] = []
        if grammar is not None:
            vocab, (text, root) = grammar
            parts.append(lib.llama_sampler_init_grammar(vocab, text.encode(), root.encode()))
        if temperature <= 0:
            parts.append(lib.llama_sampler_init_greedy())
        else:
            parts += [
                lib.llama_sampler_init_top_k(_TOP_K),
                lib.llama_sampler_init_top_p(_TOP_P, 1),
                lib.llama_sampler_init_min_p(_MIN_P, 1),
                lib.llama_sampler_init_temp(temperature),
                lib.llama_sampler_init_dist(seed),
            ]
        for part in parts:
            lib.llama_sampler_chain_add(chain, part)
        return chain

    def sample(self, ctx: Any, index: int) -> int:
        """A token from the logits of batch position `index`, accepted by the grammar."""
        lib = self._lib
        token = int(lib.llama_sampler_sample(self._free, ctx, index))
        if self._full is None:
            return token
        if self._allows(token):
            lib.llama_sampler_accept(self._full, token)
            return token
        return int(lib.llama_sampler_sample(self._full, ctx, index))  # accepts it too

    def _allows(self, token: int) -> bool:
        lib = self._lib
        data = (lib.llama_token_data * 1)(lib.llama_token_data(token, 0.0, 0.0))
        one = lib.llama_token_data_array(data, 1, -1, False)
        lib.llama_sampler_apply(lib.llama_sampler_chain_get(self._full, 0), ctypes.byref(one))
        return not math.isinf(data[0].logit)

    def close(self) -> None:
        """Free the llama.cpp samplers (the chains own their parts)."""
        for chain in (self._free, self._full):
            if chain is not None:
                self._lib.llama_sampler_free(chain)
        self._free = self._full = None
