"""``iodiag serve``, ``iodiag token``, ``iodiag submit`` and ``iodiag openapi``: the REST service and its clients.

Registered on the main app by ``serve_cmd.register(app)``; heavy imports stay inside the commands.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from iodiag.cli.common import command_group
from iodiag.cli.store_options import DatabaseUrl, DataDir, settings_for
from iodiag.core.users import ROLES, USER_NAME

if TYPE_CHECKING:
    from iodiag.core.settings import Settings

from iodiag.cli.common import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE

_RETRIES = 6
_BACKOFF_S = 0.5
_BACKOFF_MAX_S = 8.0


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(
        host: Annotated[str | None, typer.Option(help="Address to listen on (default 127.0.0.1).")] = None,
        port: Annotated[int | None, typer.Option(help="Port (default 8000).", min=0, max=65535)] = None,
        workers: Annotated[
            int | None, typer.Option(help="Analysis worker processes (default 2; 0: accept only).", min=0)
        ] = None,
        data_dir: DataDir = None,
        database_url: DatabaseUrl = None,
        log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
    ) -> None:
        """Run the REST service (API under /api/v1, OpenAPI at /api/v1/openapi.json)."""
        from iodiag.cli.common import CliError, fail

        try:
            st = settings_for(data_dir, database_url, host=host, port=port, workers=workers)
            _serve(st, log_level)
        except typer.Exit:
            raise
        except Exception as exc:
            fail(CliError(str(exc)) if isinstance(exc, ValueError | OSError) else exc)

    token_app = command_group(app, "token", "Create, list and revoke API tokens.")

    @token_app.command("create")
    def token_create(
        user: Annotated[str, typer.Option("--user", help="The user the token acts as.")],
        role: Annotated[str, typer.Option("--role", help=f"One of: {', '.join(ROLES)}.")] = "user",
        note: Annotated[str, typer.Option("--note", help="What the token is for.")] = "",
        data_dir: DataDir = None,
        database_url: DatabaseUrl = None,
    ) -> None:
        """Create a token and print it (once: only its hash is stored)."""
        from iodiag.cli.common import CliError, fail

        try:
            if role not in ROLES:
                raise CliError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
            import re

            if not re.match(USER_NAME, user):
                raise CliError(f"invalid user name {user!r}")
            from iodiag.store import tokens

            db = _database(settings_for(data_dir, database_url))
            with db.write() as s:
                row, token = tokens.create(s, user, role, note)
                token_id = row.id
            sys.stderr.write(f"token {token_id} for {user} ({role}); shown once, keep it secret:\n")
            typer.echo(token)
        except typer.Exit:
            raise
        except Exception as exc:
            fail(exc)

    @token_app.command("list")
    def token_list(
        all_: Annotated[bool, typer.Option("--all", help="Include revoked tokens.")] = False,
        data_dir: DataDir = None,
        database_url: DatabaseUrl = None,
    ) -> None:
        """List tokens (id, prefix, user, role, created, revoked)."""
        from iodiag.cli.common import fail

        try:
            from iodiag.store import tokens

            db = _database(settings_for(data_dir, database_url))
            with db.read() as s:
                for r in tokens.list_tokens(s, include_revoked=all_):
                    revoked = f"revoked {r.revoked_at:%Y-%m-%d}" if r.revoked_at else "active"
                    typer.echo(f"{r.id}\t{r.prefix}…\t{r.user}\t{r.role}\t{r.created_at:%Y-%m-%d}\t{revoked}\t{r.note}")
        except typer.Exit:
            raise
        except Exception as exc:
            fail(exc)

    @token_app.command("revoke")
    def token_revoke(
        token_id: Annotated[int, typer.Argument(help="Token id (from `iodiag token list`).")],
        data_dir: DataDir = None,
        database_url: DatabaseUrl = None,
    ) -> None:
        """Revoke a token."""
        from iodiag.cli.common import CliError, fail

        try:
            from iodiag.store import tokens

            st = settings_for(data_dir, database_url)
            db = _database(st)
            with db.write() as s:
                if tokens.revoke(s, token_id) is None:
                    raise CliError(f"no token {token_id}")
            tokens.announce_revocation(st.data_dir)  # running servers drop their checked tokens now
            typer.echo(f"revoked token {token_id}")
        except typer.Exit:
            raise
        except Exception as exc:
            fail(exc)

    @app.command()
    def submit(
        logs: Annotated[list[Path], typer.Argument(help="Darshan logs to submit.", metavar="LOG", show_default=False)],
        url: Annotated[
            str | None, typer.Option("--url", help="Server URL (default: IODIAG_URL).", show_default=False)
        ] = None,
        token: Annotated[
            str | None, typer.Option("--token", help="API token (default: IODIAG_TOKEN).", show_default=False)
        ] = None,
        user: Annotated[
            str | None, typer.Option("--user", help="Submit for this user (hook tokens).", show_default=False)
        ] = None,
        job_id: Annotated[str | None, typer.Option("--job-id", help="Scheduler job id.", show_default=False)] = None,
        server_path: Annotated[
            bool,
            typer.Option(
                "--server-path", help="Send the path for the server to read (hook tokens) instead of uploading the log."
            ),
        ] = False,
        wait: Annotated[bool, typer.Option("--wait", help="Wait until each analysis is done.")] = False,
        timeout: Annotated[float, typer.Option(help="Seconds per HTTP request.", min=0.1)] = 30.0,
    ) -> None:
        """Submit logs to an iodiag server; prints one line per log: LOG, id, new|existing.

        Retries connection errors, 408, 429 and 5xx with backoff; another 4xx prints the server's reason, exit 2.
        """
        from iodiag.cli.common import CliError, fail

        try:
            base = (url or os.environ.get("IODIAG_URL") or "").rstrip("/")
            tok = token or os.environ.get("IODIAG_TOKEN") or ""
            if not base:
                raise CliError("no server: give --url or set IODIAG_URL")
            if not tok:
                raise CliError("no token: give --token or set IODIAG_TOKEN")
            code = _submit_all(base, tok, logs, user, job_id, server_path, wait, timeout)
        except typer.Exit:
            raise
        except Exception as exc:
            fail(exc)
        if code:
            raise typer.Exit(code)

    @app.command()
    def openapi(
        output: Annotated[
            Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.", show_default=False)
        ] = None,
    ) -> None:
        """Print the OpenAPI schema of the REST API (docs/openapi.json)."""
        from iodiag.cli.common import fail

        try:
            from iodiag.api import create_app
            from iodiag.core.settings import Settings

            text = json.dumps(create_app(Settings()).openapi(), indent=2) + "\n"
            if output is None:
                sys.stdout.write(text)
            else:
                output.write_text(text, encoding="utf-8")
        except Exception as exc:
            fail(exc)


def _database(st: Settings) -> Any:
    from iodiag.store import Database, migrate

    db = Database(st.effective_database_url)
    migrate.upgrade(db)
    return db


def _serve(st: Settings, log_level: str) -> None:
    import logging

    import uvicorn

    from iodiag.api import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    uvicorn.run(
        create_app(st),
        host=st.host,
        port=st.port,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=10,
        proxy_headers=False,  # client addresses are the peer's own: the SSO header trusts only configured proxies
    )


# --- submit ---------------------------------------------------------------------------------------


class Refused(Exception):
    """The server answered 4xx (``status``), or the log cannot be read (``status`` 0): the message is one line."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class Unreachable(RuntimeError):
    """No answer from the server through every retry (refused, timed out): nothing was decided about the log."""


_BUSY = frozenset({408, 429})  # "try again later" answers, retried like 5xx


def _request(client: Any, method: str, url: str, *, retries: int = _RETRIES, **kwargs: Any) -> Any:
    """One request, tried up to ``retries`` times on connection errors, 408, 429 and 5xx (exponential backoff
    with jitter). Raises ``Refused`` on any other 4xx, ``Unreachable`` when the last try got no answer, and
    ``RuntimeError`` when it got a 5xx."""
    import httpx

    delay = _BACKOFF_S
    tries = max(1, retries)
    for attempt in range(tries):
        unreachable = False
        try:
            resp = client.request(method, url, **kwargs)
        except httpx.TransportError as exc:
            problem, unreachable = f"cannot reach the server ({type(exc).__name__})", True
        else:
            if resp.status_code < 500 and resp.status_code not in _BUSY:
                if resp.status_code >= 400:
                    raise Refused(_detail(resp), resp.status_code)
                return resp
            problem = f"server error {_detail(resp)}"
        if attempt == tries - 1:
            raise Unreachable(problem) if unreachable else RuntimeError(problem)
        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, _BACKOFF_MAX_S)
    raise AssertionError("unreachable")


def _detail(resp: Any) -> str:
    try:
        detail = resp.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    text = str(detail) if detail else (resp.text or resp.reason_phrase)
    return f"{resp.status_code} " + " ".join(text.split())[:300]


def _submit_all(
    base: str,
    token: str,
    logs: list[Path],
    user: str | None,
    job_id: str | None,
    server_path: bool,
    wait: bool,
    timeout: float,
) -> int:
    import httpx

    from iodiag.cli.common import error_line

    headers = {"Authorization": f"Bearer {token}"}
    code = EXIT_OK
    with httpx.Client(base_url=base, headers=headers, timeout=timeout) as client:
        for log in logs:
            try:
                resp = submit_one(client, log, user, job_id, server_path)
                body = resp.json()
                line = f"{log}\t{body['id']}\t{'new' if body.get('created') else 'existing'}"
                if wait:
                    line += "\t" + _wait_done(client, body["id"])
                typer.echo(line)
            except Refused as exc:
                error_line(f"{log}: {exc}")
                code = EXIT_USAGE
            except (RuntimeError, OSError) as exc:
                error_line(f"{log}: {exc}")
                code = max(code, EXIT_INTERNAL) if code != EXIT_USAGE else code
    return code


def submit_one(
    client: Any,
    log: Path,
    user: str | None,
    job_id: str | None,
    server_path: bool,
    *,
    retries: int = _RETRIES,
) -> Any:
    """POST one log (or its path) to /api/v1/analyses; raises as ``_request`` does."""
    fields = {k: v for k, v in (("user", user), ("job_id", job_id)) if v}
    if server_path:
        return _request(
            client, "POST", "/api/v1/analyses", retries=retries, json={"path": str(log.resolve()), **fields}
        )
    try:
        data = log.read_bytes()
    except OSError as exc:
        raise Refused(f"cannot read: {exc.strerror or exc}") from None
    files = {"file": (log.name, data, "application/octet-stream")}
    return _request(client, "POST", "/api/v1/analyses", retries=retries, files=files, data=fields)


def _wait_done(client: Any, analysis_id: str, limit_s: float = 3600) -> str:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        body = _request(client, "GET", f"/api/v1/analyses/{analysis_id}").json()
        if body["status"] in ("done", "failed"):
            return str(body["status"]) + (f": {body['error']}" if body.get("error") else "")
        time.sleep(0.5)
    return "still running"
