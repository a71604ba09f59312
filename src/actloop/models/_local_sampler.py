"""Token sampling for the local engine: the grammar is asked about the chosen token first.

llama.cpp's stock chain (llama-cpp-python's `_init_sampler`) runs the grammar over the whole
vocabulary (49k tokens for SmolLM2) before it picks a token: about 5 ms a token, a fifth of the
demo's time. Like llama.cpp's own `common_sampler`, `TokenSampler` picks from the unconstrained
distribution first and asks the grammar about that one token; only when the grammar refuses it
is the token picked again under the grammar, among the 256 likeliest tokens first and over the
whole vocabulary only if none of those is allowed. The chain is otherwise
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

__all__ = ["TokenSampler", "second_seed"]

_TOP_K, _TOP_P, _MIN_P = 40, 0.95, 0.05
"""llama-cpp-python's defaults, kept so replies stay as they were before this module."""


class TokenSampler:
    """Samples a reply's tokens from a llama.cpp context, under an optional GBNF grammar."""

    def __init__(self, vocab: Any, grammar: tuple[str, str] | None, temperature: float, seed: int):
        import llama_cpp

        self._lib: Any = llama_cpp
        self._size = int(llama_cpp.llama_vocab_n_tokens(vocab))
        self._eos = int(llama_cpp.llama_vocab_eos(vocab))
        self._free = self._chain(temperature, seed)
        self._grammar: Any = None
        self._rest: Any = None
        if grammar is not None:
            text, root = grammar
            init = llama_cpp.llama_sampler_init_grammar
            self._grammar = init(vocab, text.encode(), root.encode())
            self._rest = self._chain(temperature, second_seed(seed))

    def _chain(self, temperature: float, seed: int) -> Any:
        lib = self._lib
        chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
        if temperature <= 0:
            parts = [lib.llama_sampler_init_greedy()]
        else:
            parts = [
                lib.llama_sampler_init_top_k(_TOP_K),
                lib.llama_sampler_init_top_p(_TOP_P, 1),
                lib.llama_sampler_init_min_p(_MIN_P, 1),
                lib.llama_sampler_init_temp(temperature),
                lib.llama_sampler_init_dist(seed & _RANDOM_SEED),
            ]
        for part in parts:
            lib.llama_sampler_chain_add(chain, part)
        return chain

    def sample(self, ctx: Any, index: int) -> int:
        """A token from the logits of batch position `index`, accepted by the grammar."""
        lib = self._lib
        token = int(lib.llama_sampler_sample(self._free, ctx, index))
        if self._grammar is None:
            return token
        if not self._allows(token):
            token = self._pick_under_grammar(ctx, index)
        lib.llama_sampler_accept(self._grammar, token)
        return token

    def _pick_under_grammar(self, ctx: Any, index: int) -> int:
        """The pick among the tokens the grammar allows: among the likeliest `_SHORTLIST` first
        (a grammar of a thousand time zones takes 0.6 s over the whole vocabulary), among all
        of them only when none of those is allowed."""
        import numpy as np

        size = self._size
        logits = np.ctypeslib.as_array(self._lib.llama_get_logits_ith(ctx, index), shape=(size,))
        for count in (min(_SHORTLIST, size), size):
            ids = _likeliest(logits, count)
            candidates = np.zeros(count, dtype=_TOKEN_DATA)
            candidates["id"], candidates["logit"] = ids, logits[ids]
            picked = self._apply(candidates)
            if picked is not None:
                return picked
        return self._eos

    def _apply(self, candidates: Any) -> int | None:
        """Run the grammar, then the sampling chain, over `candidates`; None if none is allowed."""
        import numpy as np

        lib = self._lib
        array = lib.llama_token_data_array(
            candidates.ctypes.data_as(ctypes.POINTER(lib.llama_token_data)),
            len(candidates),
            -1,
            False,
        )
        lib.llama_sampler_apply(self._grammar, ctypes.byref(array))
        if not np.isfinite(candidates["logit"]).any():
            return None
        lib.llama_sampler_apply(self._rest, ctypes.byref(array))
        return int(array.data[array.selected].id)

    def _allows(self, token: int) -> bool:
        lib = self._lib
        data = (lib.llama_token_data * 1)(lib.llama_token_data(token, 0.0, 0.0))
        one = lib.llama_token_data_array(data, 1, -1, False)
        lib.llama_sampler_apply(self._grammar, ctypes.byref(one))
        return not math.isinf(data[0].logit)

    def close(self) -> None:
        """Free the llama.cpp samplers (a chain frees its parts)."""
        for sampler in (self._free, self._grammar, self._rest):
            if sampler is not None:
                self._lib.llama_sampler_free(sampler)
        self._free = self._grammar = self._rest = None


_RANDOM_SEED = 0xFFFFFFFF
"""llama.cpp's LLAMA_DEFAULT_SEED: draw a random seed."""


def second_seed(seed: int) -> int:
    """The seed of the draw among grammar-allowed tokens: another stream than the first draw's,
    and random when the first is."""
    return seed if seed == _RANDOM_SEED else (seed + 1) % _RANDOM_SEED


_SHORTLIST = 256
"""Likeliest tokens a refused pick is made among first (see `_pick_under_grammar`)."""
_TOKEN_DATA = [("id", "<i4"), ("logit", "<f4"), ("p", "<f4")]
"""numpy's view of llama.cpp's `llama_token_data` (id, logit, p)."""


def _likeliest(logits: Any, count: int) -> Any:
    """The ids of the `count` highest logits (all of them, in id order, when that is all)."""
    import numpy as np

    return np.argpartition(-logits, count - 1)[:count] if count < len(logits) else np.arange(count)
