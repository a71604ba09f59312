"""What `ChatOpenAI` and the completions `OpenAI` share about the `openai` SDK: importing it, the
API key, the client's options and turning its exceptions into actloop's (key masked)."""

from __future__ import annotations

import os
from typing import Any, cast

from actloop.exceptions import ConfigurationError
from actloop.models import _openai_wire as wire
from actloop.models._errors import MissingDependencyError, ModelAPIError
from actloop.models._secret import Secret, scrub

__all__ = [
    "NO_KEY",
    "api_key_from",
    "client_options",
    "import_openai",
    "sdk_error",
    "without_surrogates",
]

NO_KEY = "not-needed"
"""Sent as the key to a server given by `base_url` when there is none (the SDK insists on one)."""


def import_openai() -> Any:
    """The `openai` module, or a MissingDependencyError naming the extra to install."""
    try:
        import openai
    except ImportError as exc:
        raise MissingDependencyError(
            'ChatOpenAI needs the openai package: pip install "actloop[openai]"', name="openai"
        ) from exc
    return openai


def api_key_from(given: str | None, base_url: str | None) -> Secret:
    """The key given or in OPENAI_API_KEY; only a server named by `base_url` may do without."""
    key = given if given is not None else os.environ.get("OPENAI_API_KEY")
    if key is None and base_url is None:
        raise ConfigurationError(
            "ChatOpenAI needs an API key: pass api_key=... or set OPENAI_API_KEY "
            "(a local server given by base_url needs none)"
        )
    return Secret(key or "")


def client_options(
    api_key: Secret,
    base_url: str | None,
    max_retries: int,
    timeout: float | None,
    asynchronous: bool,
) -> dict[str, Any]:
    """The SDK client's keyword arguments for these settings (no timeout: the SDK's default);
    its HTTP client holds each attempt to `timeout` in total and each reply to a size limit."""
    from actloop.models._openai_http import http_client

    options: dict[str, Any] = {
        "api_key": api_key.get_secret_value() or NO_KEY,
        "base_url": base_url,
        "max_retries": max_retries,
        "http_client": http_client(asynchronous),
    }
    if timeout is not None:
        options["timeout"] = timeout
    return options


def sdk_error(exc: Exception, api_key: Secret, max_retries: int) -> ModelAPIError:
    """Our error for an SDK exception; the key is masked out of both (the SDK's is chained)."""
    secret = api_key.get_secret_value()
    scrub(exc, secret)
    error = wire.api_error(exc, max_retries)
    scrub(error, secret)
    return error


def without_surrogates(value: Any) -> Any:
    """A copy of a request with every lone surrogate (`\\ud800`, or a byte `surrogateescape`
    kept as `\\udcff`), which UTF-8 cannot encode, replaced by U+FFFD; a pair of surrogates
    becomes the character it stands for. Used only once encoding the request has failed."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        items = cast("dict[Any, Any]", value).items()
        return {without_surrogates(k): without_surrogates(v) for k, v in items}
    if isinstance(value, (list, tuple)):
        return [without_surrogates(v) for v in cast("list[Any]", value)]
    return value
