"""The fixed prompt prefix's KV state, saved on disk so later runs skip its prefill.

A file per (model file, context size, llama-cpp-python version, prefix tokens): the name is a
hash of all of them, so a changed model, prompt or llama.cpp builds a new file and never loads a
stale one. Files live in `$ACTLOOP_CACHE_DIR`, else `$XDG_CACHE_HOME/actloop/kv`, else
`~/.cache/actloop/kv`; the newest few are kept. A cache that cannot be read or written is skipped
(the prefix is then evaluated as usual): the cache makes runs faster, never different.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from actloop.models._local_engine import Engine

__all__ = ["PrefixCache", "cache_dir"]

_KEEP_FILES = 8


def cache_dir() -> Path:
    """Where prefix states are kept (see the module docstring)."""
    explicit = os.environ.get("ACTLOOP_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "actloop" / "kv"


class PrefixCache:
    """Restores (or builds and saves) the KV state of a prompt prefix for one engine."""

    def __init__(self, model_path: str, n_ctx: int) -> None:
        import llama_cpp

        info = os.stat(model_path)
        self._key = f"{os.path.realpath(model_path)}|{info.st_size}|{info.st_mtime_ns}|{n_ctx}|"
        self._key += str(llama_cpp.__version__)

    def file(self, prefix: Sequence[int]) -> Path:
        digest = hashlib.sha256(self._key.encode())
        digest.update(b"|" + ",".join(map(str, prefix)).encode())
        return cache_dir() / f"prefix-{digest.hexdigest()[:32]}.kv"

    def restore(self, engine: Engine, prefix: Sequence[int]) -> None:
        """Make the engine's KV cache start with `prefix` (caller holds the engine's lock)."""
        llm = engine.llm
        held = llm.input_ids[: llm.n_tokens]
        if len(held) >= len(prefix) and list(held[: len(prefix)]) == list(prefix):
            return  # already in memory (an earlier call of this process)
        path = self.file(prefix)
        if path.is_file() and _load(llm, path, prefix):
            os.utime(path)  # keep recently used files on eviction
            return
        llm.n_tokens = 0
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)  # pyright: ignore[reportPrivateUsage]
        engine.eval(prefix)
        _save(llm, path, prefix)


def _load(llm: Any, path: Path, prefix: Sequence[int]) -> bool:
    import llama_cpp

    capacity = len(prefix) + 1
    tokens = (llama_cpp.llama_token * capacity)()
    count = ctypes.c_size_t(0)
    ok = llama_cpp.llama_state_load_file(
        llm._ctx.ctx,  # pyright: ignore[reportPrivateUsage]
        os.fsencode(path),
        tokens,
        capacity,
        ctypes.pointer(count),
    )
    if not ok or list(tokens[: count.value]) != list(prefix):
        llm.reset()
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)  # pyright: ignore[reportPrivateUsage]
        return False
    llm.input_ids[: len(prefix)] = prefix
    llm.n_tokens = len(prefix)
    return True


def _save(llm: Any, path: Path, prefix: Sequence[int]) -> None:
    import llama_cpp

    tokens = (llama_cpp.llama_token * len(prefix))(*prefix)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ctx = llm._ctx.ctx  # pyright: ignore[reportPrivateUsage]
        if llama_cpp.llama_state_save_file(ctx, os.fsencode(tmp), tokens, len(prefix)):
            os.replace(tmp, path)
        _evict(path.parent)
    except OSError:
        pass  # a read-only or full disk: run without the cache
    finally:
        tmp.unlink(missing_ok=True)


def _evict(folder: Path) -> None:
    files = sorted(folder.glob("prefix-*.kv"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in files[_KEEP_FILES:]:
        old.unlink(missing_ok=True)
