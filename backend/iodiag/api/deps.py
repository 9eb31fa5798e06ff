"""Request dependencies: the shared context and who is calling.

Only ``Authorization: Bearer <token>`` authenticates; a token in a URL would end up in access logs
and browser history, so none is ever read from one. A trusted proxy's user header (SSO) counts only
when enabled and only from the configured proxy addresses.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from iodiag.api.state import AppContext
from iodiag.core.users import USER_NAME
from iodiag.store import tokens as token_repo
from iodiag.store.tokens import Principal

_bearer = HTTPBearer(auto_error=False, description="an iodiag API token (`iodiag token create`)")
_USER = re.compile(USER_NAME)
_UNAUTHORIZED = {"WWW-Authenticate": "Bearer"}


async def get_ctx(request: Request) -> AppContext:  # async: a sync dependency costs a thread hop
    ctx: AppContext = request.app.state.ctx
    return ctx


Ctx = Annotated[AppContext, Depends(get_ctx)]


def _from_trusted_proxy(request: Request, ctx: AppContext) -> Principal | None:
    st = ctx.settings
    if not st.trust_proxy_header or not st.trusted_proxies or request.client is None:
        return None
    user = request.headers.get(st.proxy_user_header)
    if not user:
        return None
    try:
        peer = ipaddress.ip_address(request.client.host)
    except ValueError:
        return None
    for proxy in st.trusted_proxies:
        try:
            if peer in ipaddress.ip_network(proxy, strict=False):
                break
        except ValueError:
            continue
    else:
        return None
    if not _USER.match(user):
        raise HTTPException(401, "the proxy's user header is not a valid user name")
    return Principal(user=user, role="user", token_id=None)


async def caller(
    request: Request, ctx: Ctx, creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> Principal:
    if creds is None:
        proxied = _from_trusted_proxy(request, ctx)
        if proxied is not None:
            return proxied
        raise HTTPException(401, "missing bearer token (send 'Authorization: Bearer <token>')", _UNAUTHORIZED)
    key = token_repo.hash_token(creds.credentials)
    cached = ctx.tokens.get(key)
    if cached is not None:  # the usual case, answered on the event loop without a thread
        return cached
    # A throttled address's unknown tokens were answered 429 before routing (``AuthThrottleMiddleware``).
    address = request.client.host if request.client is not None else "?"
    try:
        return await run_in_threadpool(_authenticate, ctx, creds.credentials, key)
    except HTTPException as exc:
        if exc.status_code == 401:
            ctx.auth_failures.failed(address)
        raise


def _authenticate(ctx: AppContext, token: str, key: str) -> Principal:
    with ctx.tokens.filling(key):
        cached = ctx.tokens.get(key)  # another request may have looked it up while we waited
        return cached if cached is not None else _lookup(ctx, token, key)


def _lookup(ctx: AppContext, token: str, key: str) -> Principal:
    with ctx.db.read() as s:
        found = token_repo.authenticate(s, token)
    if found is None:
        raise HTTPException(401, "invalid or revoked token", _UNAUTHORIZED)
    principal, stale = found
    if stale and principal.token_id is not None:
        with ctx.db.write() as s:
            token_repo.touch(s, principal.token_id)
    ctx.tokens.put(key, principal)
    return principal


Caller = Annotated[Principal, Depends(caller)]


def require(*roles: str) -> Callable[[Principal], Awaitable[Principal]]:
    names = " or ".join(roles)

    async def check(who: Caller) -> Principal:
        if who.role not in roles:
            raise HTTPException(403, f"this needs the {names} role (you are {who.role})")
        return who

    return check


Admin = Annotated[Principal, Depends(require("admin"))]
Helpdesk = Annotated[Principal, Depends(require("helpdesk", "admin"))]
