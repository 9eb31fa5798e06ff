"""Security headers on every response, whatever route or error made it.

``X-Content-Type-Options: nosniff`` everywhere, so no browser runs a JSON, Markdown or log-derived body as
script or HTML; and, unless the response set its own (the web UI, the HTML report, the system report, the API
docs), a Content-Security-Policy that allows nothing: an API response is data, never a page that loads
anything. A pure ASGI middleware, so streamed answers (Server-Sent Events) pass through untouched.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

DATA_CSP = b"default-src 'none'; frame-ancestors 'none'"


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                if b"x-content-type-options" not in names:
                    headers.append((b"x-content-type-options", b"nosniff"))
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", DATA_CSP))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
