"""The one guard in front of every route of `actloop serve`: a route added to the app is
protected without code of its own (ASGI middleware, so streams pass through untouched).

For every HTTP or WebSocket request, in this order:

1. `Host` names this server: `localhost`, `127.0.0.1`, `::1`, the address the connection came in
   on, or a name given in `allowed_hosts` (`--host`, `--allowed-host`; `*` allows any). Any port:
   a page on a name its owner rebinds to 127.0.0.1 (DNS rebinding) gets 421.
2. `Origin`, when sent, is the served origin (the host and port of `Host`) or one of
   `cors_origins`: a page of another origin, loopback ones included, gets 403 whatever it asks.
3. CORS for `cors_origins` only (their preflights are answered here, before the token).
4. The bearer token, when set, on every route but `/health` and a GET (or HEAD) of the A2A agent
   card at `/.well-known/agent-card.json`, public as A2A's well-known cards are (read-only; a
   secured server's public card names no skill) (`Authorization: Bearer T`, or `X-Api-Key: T`
   as langgraph-sdk sends it; `GET /` also takes `?token=`, percent-decoded, `+` kept: a base64
   token works as pasted).
5. A POST, and any other request with a body but GET, HEAD, OPTIONS, sends
   `Content-Type: application/json`, which no cross-site "simple" request (a form, a no-cors
   `fetch`) can send: 415 otherwise, with or without an `Origin` header. A POST with no body and
   no `Content-Type` at all (langgraph-sdk's cancel) passes: a form always sends a type, and a
   cross-site `fetch` always an `Origin` (step 2). (A body-less PUT,
   PATCH or DELETE passes: a browser never sends those cross-site without a preflight, which
   fails for any origin but the `cors_origins`.)
6. The body stops at `max_body` bytes, declared or streamed (413).

Every refusal is JSON `{"error": reason}`; every response says `X-Content-Type-Options: nosniff`
and `Cross-Origin-Resource-Policy: same-origin` (no other page can embed one).
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Sequence
from urllib.parse import unquote

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from actloop.server._http import MAX_BODY, HttpError, JsonResponse, parse_int

__all__ = ["LOOPBACK_NAMES", "Guard"]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
"""Host names always served (a browser reaches them only from this machine)."""

_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
_READ = frozenset({b"host", b"origin", b"content-type", b"content-length", b"transfer-encoding"})
_HOST = re.compile(r"(?:\[([0-9a-f:.]{2,45})\]|([a-z0-9_.-]{1,253}))(?::([0-9]{1,5}))?")
_ORIGIN = re.compile(r"(https?|wss?)://(.+)")
_DEFAULT_PORT = {"http": 80, "ws": 80, "https": 443, "wss": 443}
_MCP_HEADERS = ["Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name"]
"""What an MCP client in a page of a CORS origin sends to `/mcp` besides the usual headers."""
_HARDENING = [
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def split_host(value: str) -> tuple[str, int | None] | None:
    """`Host` (or an origin's authority) as (lower-case name without brackets or final dot,
    port); None when it is not a host name or address."""
    found = _HOST.fullmatch(value.strip().lower())
    if found is None:
        return None
    name = found.group(1) or found.group(2).removesuffix(".")
    port = found.group(3)
    return name, int(port) if port else None


def _name(host: str) -> str:
    """A configured host (`name`, `name:port`, `[::1]`, a bare IPv6 address) as its name."""
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        found = split_host(host)
        return found[0] if found else host.lower()


class Guard:
    """The checks above around `app`; see the module docstring."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None = None,
        cors_origins: Sequence[str] = (),
        allowed_hosts: Sequence[str] = (),
        max_body: int = MAX_BODY,
    ) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.any_host = "*" in allowed_hosts
        self.hosts = frozenset([*LOOPBACK_NAMES, *(_name(h) for h in allowed_hosts)])
        self.origins = frozenset(o.rstrip("/").lower() for o in cors_origins)
        self.max_body = max_body
        self.inner: ASGIApp = self._checked
        if cors_origins:
            self.inner = CORSMiddleware(
                self._checked,
                allow_origins=list(cors_origins),
                allow_methods=["GET", "POST", "PATCH", "DELETE"],
                allow_headers=[
                    "Authorization",
                    "Content-Type",
                    "Last-Event-ID",
                    "X-Api-Key",
                    *_MCP_HEADERS,
                ],
                # what langgraph-sdk front ends read: the run a stream started, its reconnect
                expose_headers=["Content-Location", "Location", "X-Actloop-Last-Event"],
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        send = _hardened(send)
        try:
            self._check_place(scope, _fields(scope))
        except HttpError as refusal:
            await _refuse(refusal, scope, receive, send)
            return
        await self.inner(scope, receive, send)

    def _check_place(self, scope: Scope, headers: dict[str, str]) -> None:
        """Steps 1 and 2: the request is for this server, from its own page or a CORS origin."""
        host = headers.get("host")
        if host is not None and not self.any_host and not self._serves(host, scope):
            hint = "see actloop serve --allowed-host"
            raise HttpError(421, f"Host {host[:100]!r} is not served here ({hint})")
        origin = headers.get("origin")
        if origin is None or origin.rstrip("/").lower() in self.origins:
            return
        if host is None or not _same_origin(origin, host):
            raise HttpError(403, f"requests from origin {origin[:100]!r} are not allowed")

    def _serves(self, host: str, scope: Scope) -> bool:
        found = split_host(host)
        if found is None:
            return False
        if found[0] in self.hosts:
            return True
        local = scope.get("server") or ("", None)
        return found[0] == _name(str(local[0]))

    async def _checked(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Steps 4 to 6 (after CORS)."""
        try:
            self._check_request(scope, _fields(scope))
        except HttpError as refusal:
            await _refuse(refusal, scope, receive, send)
            return
        if scope["type"] == "http" and scope["method"] not in _SAFE:
            receive = self._bounded(receive)
        await self.app(scope, receive, send)

    def _check_request(self, scope: Scope, headers: dict[str, str]) -> None:
        if self.token is not None and not _public(scope) and not self._token_ok(scope):
            raise HttpError(401, "missing or wrong bearer token")
        method = scope.get("method", "GET")
        if scope["type"] != "http" or method in _SAFE:
            return
        media = headers.get("content-type", "").partition(";")[0].strip().lower()
        empty = "content-type" not in headers and headers.get("content-length", "0") == "0"
        bodied = (method == "POST" and not empty) or "transfer-encoding" in headers
        if (bodied or headers.get("content-length", "0") != "0") and media != "application/json":
            raise HttpError(415, "the request body must be sent as Content-Type: application/json")
        declared = headers.get("content-length")
        if declared is not None and parse_int(declared, "Content-Length") > self.max_body:
            raise HttpError(413, f"request body too large (limit {self.max_body} bytes)")

    def _token_ok(self, scope: Scope) -> bool:
        assert self.token is not None
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        given = next((v for k, v in headers if k == b"authorization"), b"")
        if hmac.compare_digest(given, b"Bearer " + self.token):
            return True
        key = next((v for k, v in headers if k == b"x-api-key"), b"")
        if key and hmac.compare_digest(key, self.token):
            return True  # langgraph-sdk's get_client(api_key=...)
        if scope["path"] == "/" and scope.get("method") == "GET":
            query: bytes = scope.get("query_string", b"")
            for pair in query.split(b"&"):
                key, _, value = pair.partition(b"=")
                decoded = unquote(value.decode("latin-1")).encode()
                if key == b"token" and hmac.compare_digest(decoded, self.token):
                    return True
        return False

    def _bounded(self, receive: Receive) -> Receive:
        """`receive` that raises 413 once the body passes the limit (a route reading the body
        gets the error; one that does not read it is not slowed)."""
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise HttpError(413, f"request body too large (limit {self.max_body} bytes)")
            return message

        return bounded


def _public(scope: Scope) -> bool:
    """Whether the request needs no token: `/health`, or reading the A2A agent card."""
    path = scope["path"]
    if path == "/health":
        return True
    return path == "/.well-known/agent-card.json" and scope.get("method") in ("GET", "HEAD")


def _fields(scope: Scope) -> dict[str, str]:
    """The request headers the guard reads (one pass over the raw headers)."""
    raw: list[tuple[bytes, bytes]] = scope["headers"]
    return {k.decode(): v.decode("latin-1") for k, v in raw if k in _READ}


def _same_origin(origin: str, host: str) -> bool:
    """Whether `Origin` is the origin a browser gives a page served at `Host`."""
    found = _ORIGIN.fullmatch(origin.strip().lower())
    if found is None:
        return False  # "null" (a sandboxed frame, a file) or garbage
    scheme = found.group(1)
    theirs, ours = split_host(found.group(2)), split_host(host)
    if theirs is None or ours is None:
        return False
    default = _DEFAULT_PORT[scheme]
    return theirs[0] == ours[0] and (theirs[1] or default) == (ours[1] or default)


def _hardened(send: Send) -> Send:
    async def hardened(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *_HARDENING]}
        await send(message)

    return hardened


async def _refuse(refusal: HttpError, scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008, "reason": refusal.reason[:120]})
        return
    headers = {"WWW-Authenticate": "Bearer"} if refusal.status == 401 else None
    response = JsonResponse({"error": refusal.reason}, status_code=refusal.status, headers=headers)
    await response(scope, receive, send)
