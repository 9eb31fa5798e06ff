"""Caps on request headers (every request) and on bodies other than log uploads (which stream into the
store under their own limit).

FastAPI reads a JSON body whole before validating it; without a cap one request could make the
server hold any amount of memory. The HTTP parser accepts headers of any size when they arrive in
one read; every route's headers are small, so a larger set is refused before any route sees it.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from iodiag.store.tokens import hash_token

SMALL_BODY_LIMIT = 1 << 20
HEADER_LIMIT = 32 << 10


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, exempt: tuple[str, ...], limit: int = SMALL_BODY_LIMIT) -> None:
        self.app = app
        self.exempt = exempt
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and sum(len(k) + len(v) for k, v in scope.get("headers", [])) > HEADER_LIMIT:
            await _reject(send, 431, f"request headers too large (limit {HEADER_LIMIT} bytes)")
            return
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS", "DELETE"):
            await self.app(scope, receive, send)
            return
        if scope.get("path", "") in self.exempt and scope.get("method") == "POST":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.limit
            except ValueError:
                too_big = True
            if too_big:
                await _reject(send, 413, f"request body too large (limit {SMALL_BODY_LIMIT} bytes)")
                return
            await self.app(scope, receive, send)
            return
        # No length given (chunked): read up to the limit, then replay what was read.
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.limit:
                await _reject(send, 413, f"request body too large (limit {SMALL_BODY_LIMIT} bytes)")
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


async def _reject(send: Send, status: int, detail: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class AuthThrottleMiddleware:
    """Answers 429 to a throttled address's unknown bearer token before routing (see ``AuthThrottle``):
    a flood of bad tokens then costs the server a hash and a dictionary lookup per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            ctx = getattr(scope["app"].state, "ctx", None)
            auth = dict(scope.get("headers", [])).get(b"authorization", b"")
            if ctx is not None and auth[:7].lower() == b"bearer ":
                address = scope["client"][0] if scope.get("client") else "?"
                wait = ctx.auth_failures.retry_after(address)
                if wait:
                    key = hash_token(auth[7:].strip().decode("latin-1"))
                    if ctx.tokens.get(key) is None and not ctx.tokens.known(key):
                        detail = f"too many failed authentications from {address}; try again in {wait} s"
                        await _reject(send, 429, detail, [(b"retry-after", str(wait).encode())])
                        return
        await self.app(scope, receive, send)
