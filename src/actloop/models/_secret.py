"""API keys: kept out of `repr` and `str`, masked out of errors and out of the SDK's log records.

Masking replaces every whole occurrence of the key with `**********`. A key shorter than
`SHORT_KEY` characters is masked only where it stands as a word of its own (not inside a longer
run of letters, digits, `_` or `-`), so a one-letter key such as `d` does not blank out every "d"
of a message, while a real key (tens of characters) is masked wherever it appears.

Errors are scrubbed in place, with everything chained to them (`__cause__`, `__context__`): their
`args`, and every string, list or dict attribute (`body`, `message`, `__notes__`, ...). A chained
exception whose text still shows the key after that (a custom `__str__`) is cut from the chain.
"""

from __future__ import annotations

import logging
import re
import threading
import weakref
from typing import Any, cast

__all__ = ["MASK", "SHORT_KEY", "Secret", "mask_text", "mask_value", "scrub", "watch_logs"]

MASK = "**********"
SHORT_KEY = 8
"""Keys shorter than this are masked only as whole words."""


class Secret:
    """A string kept out of `repr`, `str` and logs (like pydantic's SecretStr)."""

    __slots__ = ("__weakref__", "_value")

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        """The secret itself."""
        return self._value

    def __repr__(self) -> str:
        return f"SecretStr('{MASK}')" if self._value else "SecretStr('')"

    def __str__(self) -> str:
        return MASK if self._value else ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def mask_text(text: str, secret: str) -> str:
    """`text` with the secret masked (whole words only for a short secret)."""
    if not secret or secret not in text:
        return text
    if len(secret) >= SHORT_KEY:
        return text.replace(secret, MASK)
    pattern = rf"(?<![\w-]){re.escape(secret)}(?![\w-])"
    return re.sub(pattern, MASK, text)


def mask_value(value: Any, secret: str) -> Any:
    """A copy of a JSON-like value with the secret masked in every string (keys too); any depth."""
    if isinstance(value, str):
        return mask_text(value, secret)
    if not isinstance(value, (dict, list)) or not secret:
        return cast("Any", value)
    root = _empty_like(value)
    stack: list[tuple[Any, Any]] = [(cast("Any", value), root)]
    while stack:
        source, target = stack.pop()
        for key, item in _pairs(source):
            copied: Any = item
            if isinstance(item, (dict, list)):
                copied = _empty_like(item)
                stack.append((cast("Any", item), copied))
            elif isinstance(item, str):
                copied = mask_text(item, secret)
            if isinstance(target, dict):
                cast("dict[Any, Any]", target)[mask_value(key, secret)] = copied
            else:
                cast("list[Any]", target).append(copied)
    return root


def _empty_like(value: Any) -> Any:
    return {} if isinstance(value, dict) else []


def _pairs(value: Any) -> list[tuple[Any, Any]]:
    if isinstance(value, dict):
        return list(cast("dict[Any, Any]", value).items())
    return list(enumerate(cast("list[Any]", value)))


def _leaks(exc: BaseException, secret: str) -> bool:
    try:
        text = f"{exc!s}{exc!r}"
    except Exception:
        return True
    return mask_text(text, secret) != text


def _scrub_one(exc: BaseException, secret: str) -> None:
    try:
        exc.args = tuple(mask_value(a, secret) for a in exc.args)
    except (AttributeError, TypeError):  # an exception type whose args are fixed
        pass
    for name, attr in list(getattr(exc, "__dict__", {}).items()):
        if isinstance(attr, (str, list, dict)):
            try:
                setattr(exc, name, mask_value(attr, secret))
            except (AttributeError, TypeError):  # a read-only property backed by __dict__
                pass


def scrub(exc: BaseException, secret: str) -> BaseException:
    """Mask the secret out of `exc` and its whole chain, in place; returns `exc`."""
    if not secret:
        return exc
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        _scrub_one(current, secret)
        for link in ("__cause__", "__context__"):
            chained = getattr(current, link)
            if chained is None:
                continue
            _scrub_one(chained, secret)
            if _leaks(chained, secret):
                setattr(current, link, None)
                current.__suppress_context__ = True
            else:
                todo.append(chained)
    return exc


# -- log records ---------------------------------------------------------------------------------

_HTTPCORE_PARTS = ("connection", "http11", "http2", "proxy", "socks")

_ROOTS = ("openai", "httpx", "httpx2", "httpcore", "httpcore2")
_WATCHED = (
    "openai",
    "openai._base_client",
    "openai._response",
    "openai._legacy_response",
    "httpx",
    "httpx2",
    *(f"{http}.{part}" for http in ("httpcore", "httpcore2") for part in _HTTPCORE_PARTS),
)
"""Loggers of the SDK and its HTTP stack (a filter applies only to records of its own logger, so
children are named one by one); children that exist when a key is watched are covered too."""


class _KeyFilter(logging.Filter):
    """Masks the keys of live `ChatOpenAI`s out of a record (message, arguments, exception).

    `filter` takes no lock and iterates nothing that can change under it: it reads `keys`, a
    tuple replaced whole (under `_lock`) when a key is watched or dies. Taking a lock here
    deadlocked: iterating a `WeakSet` can run garbage collection, whose finalizers (the SDK's
    client `__del__`) log, which re-enters this filter on the same thread. Re-entry is now
    harmless (nothing shared is held or changed), so a record logged from inside another's
    masking is masked too rather than let through.
    """

    def __init__(self) -> None:
        super().__init__("actloop-key-mask")
        self.keys: tuple[str, ...] = ()
        """The keys to mask: a snapshot, read without a lock."""
        self._refs: dict[int, tuple[weakref.ref[Secret], str]] = {}
        """Each watched secret's weak reference (by the reference's id) and key."""

    def watch(self, secret: Secret) -> None:
        """Mask `secret`'s key until `secret` is garbage collected (call with `_lock` held)."""
        ref = weakref.ref(secret, self._forget)
        self._refs[id(ref)] = (ref, secret.get_secret_value())
        self._snapshot()

    def _forget(self, ref: weakref.ref[Secret]) -> None:
        # A weakref callback: it may run in any thread during garbage collection, so it never
        # waits for `_lock` (the collecting thread may hold it); a dead key left behind is
        # dropped at the next `watch`.
        if _lock.acquire(blocking=False):
            try:
                self._snapshot()
            finally:
                _lock.release()

    def _snapshot(self) -> None:
        self._refs = {i: (r, k) for i, (r, k) in self._refs.items() if r() is not None}
        live = {key for _, key in self._refs.values()}
        self.keys = tuple(sorted(live, key=len, reverse=True))

    def filter(self, record: logging.LogRecord) -> bool:
        if keys := self.keys:
            _mask_record(record, keys)
        return True


def _mask_record(record: logging.LogRecord, keys: tuple[str, ...]) -> None:
    try:
        text = record.getMessage()
    except Exception:
        return  # a broken record is logging's to report
    masked = text
    for key in keys:
        masked = mask_text(masked, key)
    if masked != text:
        record.msg, record.args = masked, None
    if record.exc_info and record.exc_info[1] is not None:
        for key in keys:
            scrub(record.exc_info[1], key)
        record.exc_text = None


_FILTER = _KeyFilter()
_installed: set[str] = set()
_lock = threading.Lock()
"""Guards `_installed` and the filter's key table; never taken inside `filter`."""


def watch_logs(secret: Secret) -> None:
    """Mask `secret` out of the records of the SDK's loggers for as long as it lives."""
    if not secret.get_secret_value():
        return
    with _lock:
        _FILTER.watch(secret)
        known = list(logging.Logger.manager.loggerDict)
        names = {n for n in known if n.split(".")[0] in _ROOTS} | set(_WATCHED)
        for name in names - _installed:
            logging.getLogger(name).addFilter(_FILTER)
            _installed.add(name)
