"""The llama.cpp engine behind `LocalChatModel`: one loaded model per file, its lock, safe decoding.

Why it is written by hand instead of `Llama.create_chat_completion`:
- **One lock per loaded model**, taken per decoded token, never held across a `yield`: a consumer
  that stops reading mid-stream (a callback that raises) cannot keep the model locked. Between
  tokens another call may use the context; each step re-syncs the KV cache to its own tokens by
  longest common prefix, so interleaved calls stay correct.
- **Safe exit**: at interpreter exit the engine is closed only once no thread is decoding (a
  worker abandoned by a deadline stops at its next token or prefill chunk), so freeing llama.cpp
  can never race a decode (the old segfault, exit 139).
- **Message text is text**: the chat template is rendered with nonce placeholders for contents;
  only the template's own pieces are tokenized with special tokens, so `<|im_start|>system` inside
  a document stays plain text and cannot open a fake turn.
- **Context window**: a prompt that does not fit is a `ContextWindowError` (a `ModelError`).
- **Prefix KV cache on disk** (`_local_cache`): the fixed prompt prefix is evaluated once.
- **Grammar last** (`_local_sampler`): a token is picked first and the grammar asked about it.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import ctypes
import os
import re
import secrets
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from actloop.exceptions import ModelError
from actloop.models._errors import MissingDependencyError
from actloop.models._local_cache import PrefixCache
from actloop.models._local_sampler import TokenSampler

__all__ = ["ContextWindowError", "Engine", "Sampling", "default_threads", "load_engine"]

_INSTALL = 'pip install "actloop[local]"'
_CHUNK = 256
"""Prompt tokens evaluated per llama.cpp call: the exit check runs between chunks."""
_EXIT_WAIT = 60.0
"""Seconds the exit hook waits for a running decode step before leaving the model unfreed."""


class ContextWindowError(ModelError):
    """The prompt does not fit the model's context window; trim the input or raise `n_ctx`."""


@dataclass(frozen=True)
class Sampling:
    """How one reply is sampled: temperature, seed, an optional grammar, limits and stops."""

    temperature: float
    seed: int | None
    grammar: Any
    max_tokens: int
    stop: tuple[str, ...] = ()


class Engine:
    """One llama.cpp model and context, shared by every LocalChatModel on the same file."""

    def __init__(self, llm: Any, path: str, n_ctx: int) -> None:
        self.llm = llm
        self.path = path
        self.n_ctx = n_ctx
        self.lock = threading.Lock()
        """Taken for each llama.cpp call (one token or one prefill chunk), never across a yield."""
        self.closing = False
        self.closed = False
        self.cache = PrefixCache(path, n_ctx)
        self._template = _Template(llm)
        self._grammars_ok: set[str] = set()
        self._turn_ends = _turn_end_tokens(llm)

    # -- prompt ------------------------------------------------------------------------------
    # Tokenizing reads llama.cpp's vocabulary: like decoding, it runs under the lock and only while
    # the engine is open, so the exit hook never frees the model under a thread that tokenizes
    # (a run abandoned while the model loaded goes on to tokenize its prompt during exit).
    def tokens(self, messages: Sequence[tuple[str, str]]) -> tuple[list[int], list[int]]:
        """The prompt's tokens, and the token offset where each message's content ends."""
        with self.lock:
            self._check_open()
            return self._template.tokens(messages)

    def tokenize(self, text: str) -> list[int]:
        """The ids of `text` as plain text (no BOS, special markers not parsed)."""
        with self.lock:
            self._check_open()
            return list(self.llm.tokenize(text.encode(), add_bos=False, special=False))

    def count(self, text: str) -> int:
        """Tokens in a reply's text (usage metadata)."""
        return len(self.tokenize(text))

    def check_fits(self, prompt: Sequence[int]) -> None:
        if len(prompt) >= self.n_ctx:
            raise ContextWindowError(
                f"the prompt has {len(prompt)} tokens, more than the local model's context "
                f"window of {self.n_ctx}; shorten the input (a smaller file, fewer steps) or pass "
                "a larger n_ctx to LocalChatModel"
            )

    # -- decoding ----------------------------------------------------------------------------
    def complete(self, prompt: list[int], sampling: Sampling, prefix: int = 0) -> str:
        """The whole reply, decoded under the lock at once (repeatable: no call interleaves)."""
        with self.lock:
            return "".join(self.stream(prompt, sampling, prefix, _locked=True))

    def stream(
        self, prompt: list[int], sampling: Sampling, prefix: int = 0, *, _locked: bool = False
    ) -> Iterator[str]:
        """Decode a reply to `prompt`, yielding text pieces; `prefix` tokens may come from disk.

        The lock is taken per token, so a reader that stops early never keeps it; calls that
        interleave stay correct (the KV cache is re-synced) though not bit-for-bit repeatable.
        """
        self.check_fits(prompt)
        step_lock = contextlib.nullcontext() if _locked else self.lock
        budget = min(sampling.max_tokens, self.n_ctx - len(prompt))
        tokens = list(prompt)
        sampler: TokenSampler | None = None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        text = ""
        emitted = 0
        hold = max((len(s) for s in sampling.stop), default=1) - 1
        try:
            for _ in range(budget):
                with step_lock:
                    self._check_open()
                    if sampler is None:
                        sampler = self._sampler(sampling)
                        if prefix:
                            self.cache.restore(self, tokens[:prefix])
                    self._sync(tokens)
                    token = sampler.sample(self.llm._ctx.ctx, -1)  # pyright: ignore[reportPrivateUsage]
                    if self._is_end(token):
                        break
                    piece = self._piece(token)
                tokens.append(token)
                text += decoder.decode(piece)
                stop_at = _find_stop(text, sampling.stop)
                if stop_at is not None:
                    text = text[:stop_at]
                    break
                if len(text) - hold > emitted:
                    yield text[emitted : len(text) - hold]
                    emitted = len(text) - hold
            text += decoder.decode(b"", final=True)
            if len(text) > emitted:
                yield text[emitted:]
        finally:
            if sampler is not None:
                sampler.close()

    def _sampler(self, sampling: Sampling) -> TokenSampler:
        from llama_cpp import LLAMA_DEFAULT_SEED

        grammar: tuple[str, str] | None = None
        if sampling.grammar is not None:
            self._check_grammar(sampling.grammar)
            grammar = (sampling.grammar._grammar, sampling.grammar._root)  # pyright: ignore[reportPrivateUsage]
        seed = LLAMA_DEFAULT_SEED if sampling.seed is None else sampling.seed
        vocab = self.llm._model.vocab  # pyright: ignore[reportPrivateUsage]
        return TokenSampler(vocab, grammar, sampling.temperature, seed)

    def _check_grammar(self, grammar: Any) -> None:
        """Refuse a grammar llama.cpp cannot parse (it would crash the sampler, not raise)."""
        import llama_cpp

        text: str = grammar._grammar  # pyright: ignore[reportPrivateUsage]
        if text in self._grammars_ok:
            return
        vocab = self.llm._model.vocab  # pyright: ignore[reportPrivateUsage]
        root: str = grammar._root  # pyright: ignore[reportPrivateUsage]
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, text.encode(), root.encode())
        if not sampler:
            raise ModelError(
                f"llama.cpp cannot parse this grammar (see its message above): {text[:200]!r}"
            )
        llama_cpp.llama_sampler_free(sampler)
        self._grammars_ok.add(text)

    def _piece(self, token: int) -> bytes:
        """The bytes of one token (special tokens render as nothing)."""
        import llama_cpp

        vocab = self.llm._model.vocab  # pyright: ignore[reportPrivateUsage]
        buf = ctypes.create_string_buffer(64)
        n = llama_cpp.llama_token_to_piece(vocab, token, buf, 64, 0, False)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = llama_cpp.llama_token_to_piece(vocab, token, buf, -n, 0, False)
        return buf.raw[: max(n, 0)]

    def _is_end(self, token: int) -> bool:
        import llama_cpp

        if token in self._turn_ends:
            return True
        return bool(llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, token))  # pyright: ignore[reportPrivateUsage]

    def _sync(self, tokens: list[int]) -> None:
        """Make the KV cache hold exactly `tokens`, with fresh logits for the last one."""
        llm = self.llm
        keep = _common_prefix(llm.input_ids[: llm.n_tokens], tokens)
        keep = min(keep, len(tokens) - 1)
        if not llm._ctx.kv_cache_seq_rm(-1, keep, -1):  # pyright: ignore[reportPrivateUsage]
            llm.reset()  # this cache cannot cut a sequence: start over
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)  # pyright: ignore[reportPrivateUsage]
            keep = 0
        llm.n_tokens = keep
        self.eval(tokens[keep:])

    def eval(self, tokens: Sequence[int]) -> None:
        """Evaluate tokens after the current ones, in chunks (the exit hook waits one chunk)."""
        for start in range(0, len(tokens), _CHUNK):
            self._check_open()
            self.llm.eval(tokens[start : start + _CHUNK])

    def _check_open(self) -> None:
        if self.closing or self.closed:
            raise ModelError("the local model is shutting down (the interpreter is exiting)")

    # -- exit --------------------------------------------------------------------------------
    def close(self, wait: float = _EXIT_WAIT) -> None:
        """Free llama.cpp once no decode runs; if one never ends, leave it allocated (no crash)."""
        self.closing = True
        if self.lock.acquire(timeout=wait):
            try:
                if not self.closed:
                    self.closed = True
                    self.llm.close()
            finally:
                self.lock.release()
        else:  # a thread is stuck inside llama.cpp: never free memory under it
            self.llm._stack = contextlib.ExitStack()  # pyright: ignore[reportPrivateUsage]
            _kept.append(self.llm)


_kept: list[Any] = []
_engines: dict[tuple[str, int, int], Engine] = {}
_engines_lock = threading.Lock()
_exiting = False
"""Set by the exit hook: no model is loaded after it ran."""


def default_threads() -> int:
    """The cores this process may run on that are not busy (1-minute load average), at least 1.

    llama.cpp's threads wait for each other at every layer: on a shared machine whose cores are
    all busy, 2 threads on 2 cores were measured 20-40x slower than 1 (a descheduled thread
    stalls the other), while on idle cores they split the work. `$ACTLOOP_LOCAL_THREADS`, if
    set, is used as given.
    """
    explicit = os.environ.get("ACTLOOP_LOCAL_THREADS", "")
    if explicit.isascii() and explicit.isdigit() and 0 < len(explicit) <= 4 and int(explicit):
        return int(explicit)  # ASCII digits only: `²` passes isdigit() but not int()
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        cores = max(1, os.cpu_count() or 1)
    try:
        idle = cores - os.getloadavg()[0]
    except OSError:  # pragma: no cover - no load average on this system
        idle = cores
    return max(1, min(cores, int(idle + 0.5)))


def load_engine(path: str, n_ctx: int, n_threads: int) -> Engine:
    """The engine for (file, context, threads), loaded once per process and shared."""
    key = (path, n_ctx, n_threads)
    with _engines_lock:
        engine = _engines.get(key)
        if _exiting:  # the exit hook ran: loading a model now would race interpreter shutdown
            raise ModelError("the local model is shutting down (the interpreter is exiting)")
        if engine is None or engine.closed:
            if not _engines:
                atexit.register(_close_all)
            try:
                from llama_cpp import Llama
            except ImportError:
                raise MissingDependencyError(
                    f"the local model needs llama-cpp-python: {_INSTALL}"
                ) from None
            llm = Llama(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                swa_full=True,  # sliding-window models (Gemma 3) can then reuse a prefix
                seed=0,
                verbose=False,
            )
            engine = _engines[key] = Engine(llm, path, n_ctx)
        return engine


def _close_all() -> None:
    """Free the loaded models before interpreter shutdown (llama.cpp's finalizers fail after)."""
    import warnings

    global _exiting
    with _engines_lock, warnings.catch_warnings():
        _exiting = True
        warnings.simplefilter("ignore", ResourceWarning)  # llama.cpp's own /dev/null handles
        for engine in _engines.values():
            engine.close()


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _find_stop(text: str, stops: Sequence[str]) -> int | None:
    found = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return min(found) if found else None


def _turn_end_tokens(llm: Any) -> set[int]:
    """Turn-end markers that are single special tokens (some GGUFs do not flag them as EOG)."""
    ends: set[int] = set()
    for marker in (b"<end_of_turn>", b"<|im_end|>", b"<|eot_id|>"):
        ids = llm.tokenize(marker, add_bos=False, special=True)
        if len(ids) == 1:
            ends.add(int(ids[0]))
    return ends


_GEMMA_TEMPLATE = (
    "{% for m in messages %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else 'user' }}\n"
    "{{ m['content'] }}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
_CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


class _Template:
    """The model's chat template, rendered with placeholders so message text stays text."""

    def __init__(self, llm: Any) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.llm = llm
        metadata: dict[str, str] = llm.metadata
        template = metadata.get("tokenizer.chat_template")
        if not template:  # some GGUF exports drop it: the family's own turn format
            arch = str(metadata.get("general.architecture", ""))
            template = _GEMMA_TEMPLATE if arch.startswith("gemma") else _CHATML_TEMPLATE
        eos = llm._model.token_to_piece(llm.token_eos(), special=True).decode(errors="replace")  # pyright: ignore[reportPrivateUsage]
        self.format = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token="")

    def tokens(self, messages: Sequence[tuple[str, str]]) -> tuple[list[int], list[int]]:
        nonce = secrets.token_hex(8)
        holders = [
            {"role": role, "content": f"\ue000{nonce}:{i}\ue001"}
            for i, (role, _) in enumerate(messages)
        ]
        rendered: str = self.format(messages=holders).prompt  # pyright: ignore[reportArgumentType]
        parts = re.split(f"\ue000{nonce}:(\\d+)\ue001", rendered)
        tokens: list[int] = list(self.llm.tokenize(parts[0].encode(), add_bos=True, special=True))
        ends = [0] * len(messages)
        for i in range(1, len(parts), 2):
            index = int(parts[i])
            tokens += self.llm.tokenize(messages[index][1].encode(), add_bos=False, special=False)
            ends[index] = len(tokens)
            tokens += self.llm.tokenize(parts[i + 1].encode(), add_bos=False, special=True)
        return tokens, ends
