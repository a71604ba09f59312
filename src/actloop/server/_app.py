"""The Starlette app of `actloop serve`: LangServe's routes, threads, the page, behind the guard.

Every route sits behind one `Guard` (`_guard`: Host, Origin, CORS, token, JSON bodies, size), so
a route added here is protected without code of its own. Every error is a JSON
`{"error": reason}` with a one-line reason, never a traceback (Starlette runs with
`debug=False`).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import importlib
from collections.abc import AsyncGenerator, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from actloop.exceptions import ConfigurationError
from actloop.server._a2a import a2a_routes
from actloop.server._agui import agui_routes
from actloop.server._guard import Guard
from actloop.server._http import MAX_BODY, HttpError, JsonResponse
from actloop.server._hub import Busy, RunHub
from actloop.server._langserve import agent_routes
from actloop.server._mcp import McpEndpoint
from actloop.server._openapi import openapi
from actloop.server._responses import responses_routes
from actloop.server._service import ThreadService
from actloop.server._threads import thread_routes
from actloop.server.agent_protocol import agent_protocol_routes

if TYPE_CHECKING:
    from actloop.executor import AgentExecutor

__all__ = ["create_app", "load_executor"]

_SCRIPT_TAG = '<script src="app.js"></script>'


@functools.cache
def _page() -> tuple[str, str]:
    """The page with its script inlined, and the CSP allowing exactly that script (by hash), so
    the one request the browser makes on its own (`GET /`) is all that needs `?token=`."""
    static = resources.files("actloop.server").joinpath("static")
    script = static.joinpath("app.js").read_text("utf-8")
    html = static.joinpath("index.html").read_text("utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )
    return html.replace(_SCRIPT_TAG, f"<script>{script}</script>"), csp


def load_executor(spec: str) -> AgentExecutor:
    """The executor named `module:attr`: an AgentExecutor, or a zero-argument factory of one."""
    from actloop.executor import AgentExecutor

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"expected MODULE:ATTR, got {spec!r}")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"cannot load {spec!r}: {exc}") from None
    if not isinstance(target, AgentExecutor) and callable(target):
        target = target()
    if not isinstance(target, AgentExecutor):
        raise ConfigurationError(f"{spec!r} is not an AgentExecutor nor a factory of one")
    return target


class TraceContext:
    """Runs each HTTP request under the caller's W3C trace context (`traceparent` and
    `tracestate` headers), so the runs it starts join the caller's trace when tracing is on
    (`actloop.tracing.instrument`). Without those headers, or without OpenTelemetry, a no-op."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
        carrier = {
            k.decode("latin-1"): v.decode("latin-1")
            for k, v in headers
            if k in (b"traceparent", b"tracestate")
        }
        if scope["type"] != "http" or not carrier:
            await self.app(scope, receive, send)
            return
        from actloop.tracing import continue_trace

        with continue_trace(carrier):
            await self.app(scope, receive, send)


async def health(request: Request) -> Response:
    """`GET /health`: liveness, and how many runs are going on (never needs the token)."""
    return JsonResponse({"status": "ok", "active_runs": request.app.state.hub.active})


async def page(request: Request) -> Response:
    """`GET /`: the page (HTML and its script, shipped as package data; nothing external)."""
    html, csp = _page()
    headers = {
        "Content-Security-Policy": csp,
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }
    return Response(html, media_type="text/html; charset=utf-8", headers=headers)


async def openapi_document(request: Request) -> Response:
    """`GET /openapi.json`: the routes this server answers."""
    durable = request.app.state.executor.checkpointer is not None
    return JsonResponse(openapi(durable))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HttpError)
    return exc.response()


async def _busy(request: Request, exc: Exception) -> Response:
    return JsonResponse({"error": str(exc)}, status_code=503, headers={"Retry-After": "1"})


async def _starlette_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    reason = {404: "no such route", 405: "method not allowed"}.get(exc.status_code, exc.detail)
    return JsonResponse({"error": reason}, status_code=exc.status_code)


async def _server_error(request: Request, exc: Exception) -> Response:
    return JsonResponse({"error": "internal server error"}, status_code=500)


def create_app(
    executor: AgentExecutor,
    *,
    token: str | None = None,
    cors_origins: Sequence[str] = (),
    allowed_hosts: Sequence[str] = (),
    max_body: int = MAX_BODY,
    max_batch: int = 100,
    takeover_every: float | None = None,
    max_threads: int = 200,
) -> Starlette:
    """The app serving `executor`: `/agent/*` (LangServe), the Agent Protocol (`/threads*`,
    `/runs*`, `/assistants*`; an in-memory store when it has no checkpointer), `/` (the page),
    `/health`, `/openapi.json`; `allowed_hosts` are the names besides loopback ones its clients
    may reach it by (`*`: any; see `_guard`); `takeover_every` seconds: how often to look for
    runs of dead processes to go on with; `max_threads`: how many threads may have a run going
    on at once in this process (their event logs are kept in memory; one more gets 503)."""
    if max_threads < 1:
        raise ConfigurationError(f"max_threads must be at least 1, got {max_threads}")
    hub = RunHub(keep=max_threads)
    mcp = McpEndpoint(max_body=max_body)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None]:
        async with mcp.running(), app.state.threads.taking_over(takeover_every):
            yield
        await hub.stop()

    routes: list[Any] = [
        Route("/", page, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", openapi_document, methods=["GET"]),
        Mount("/agent", routes=agent_routes()),
        *responses_routes(),
        Route("/mcp", mcp),  # the agent as an MCP tool (POST; other methods get 405)
        *agui_routes(),
    ]
    routes.extend([*thread_routes(), *agent_protocol_routes()])
    routes.extend(a2a_routes(secured=token is not None))
    guard = Middleware(
        Guard,
        token=token,
        cors_origins=cors_origins,
        allowed_hosts=allowed_hosts,
        max_body=max_body,
    )
    middleware = [guard, Middleware(TraceContext)]
    handlers: dict[Any, Any] = {
        HttpError: _http_error,
        Busy: _busy,
        HTTPException: _starlette_error,
        Exception: _server_error,
    }
    app = Starlette(
        debug=False,
        routes=routes,
        middleware=middleware,
        exception_handlers=handlers,
        lifespan=lifespan,
    )
    app.state.executor = executor
    app.state.hub = hub
    app.state.threads = ThreadService(executor, hub)
    app.state.max_batch = max_batch
    return app
