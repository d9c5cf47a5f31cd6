"""The operator's commands: serve, token, recompute (registered in analyst/cli.py)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import click

from .errors import StoreError

DEFAULT_DB = "ldpsurvey.db"
_db_option = click.option("--db", "db_path", default=DEFAULT_DB, show_default=True,
                          type=click.Path(dir_okay=False), help="SQLite database file.")


def _existing_db(path: str) -> Any:
    from .db import connect

    if not Path(path).is_file():
        raise StoreError(f"database {path} does not exist")
    return connect(path)


# --- serve ---------------------------------------------------------------------------------


@click.command()
@_db_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="0 picks a free port (printed).")
@click.option("--threads", default=8, show_default=True, type=click.IntRange(1, 256))
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="URL",
              help="Origin (scheme://host[:port]) of an exported respondent page that may call "
                   "the survey and submission endpoints (CORS). Repeatable; none by default.")
@click.option("--debug", is_flag=True, help="Flask's development server instead of waitress.")
def serve(db_path: str, host: str, port: int, threads: int, allow_origins: tuple[str, ...],
          debug: bool) -> None:
    """Run the aggregator HTTP API (waitress; no access log, no request metadata kept).

    It also serves the respondent web page at /s/SURVEY_ID.
    """
    from .app import create_app

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # "Task queue depth is N" is routine backpressure under load, not worth a line each time.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    app = create_app({"DATABASE": db_path, "ALLOWED_ORIGINS": allow_origins})
    if debug:
        from werkzeug.serving import WSGIRequestHandler

        class AnonymousHandler(WSGIRequestHandler):
            """Werkzeug's handler without its per-request log line (it names the client)."""

            def log_request(self, *args: Any, **kwargs: Any) -> None:
                pass

            def log(self, type: str, message: str, *args: Any) -> None:
                logging.getLogger("werkzeug").log(
                    logging.ERROR if type == "error" else logging.INFO, message, *args)

        click.echo(f"ldpsurvey (debug server) on http://{host}:{port}/ database {db_path}",
                   err=False)
        app.run(host=host, port=port, debug=True, use_reloader=False,
                request_handler=AnonymousHandler)
        return
    import waitress

    # Waitress buffers a body before the app sees it: cap it near the app's own 413 limit.
    body_cap = 2 * int(app.config["MAX_CONTENT_LENGTH"]) + 65536
    try:
        server = waitress.create_server(app, host=host, port=port, threads=threads,
                                        max_request_body_size=body_cap, ident="ldpsurvey")
    except OSError as exc:  # port in use, address not available, ...
        raise click.ClickException(f"cannot listen on {host}:{port}: "
                                   f"{exc.strerror or exc}") from None
    click.echo(f"ldpsurvey serving on http://{host}:{server.effective_port}/ "
               f"(database {db_path}, {threads} threads)")
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


# --- tokens --------------------------------------------------------------------------------


@click.group()
def token() -> None:
    """Analyst bearer tokens (only their SHA-256 is stored)."""


@token.command("create")
@_db_option
@click.option("--name", default="analyst", show_default=True)
def token_create(db_path: str, name: str) -> None:
    """Create a token and print it once."""
    from .auth import create_token
    from .db import connect

    info, plain = create_token(connect(db_path), name)
    click.echo(plain)
    click.echo(f"token {info.id} ({info.name}) created; it is shown only this once", err=True)


@token.command("list")
@_db_option
def token_list(db_path: str) -> None:
    """List tokens: id, name, created, revoked (never the token)."""
    from .auth import list_tokens

    for t in list_tokens(_existing_db(db_path)):
        click.echo(f"{t.id}\t{t.name}\tcreated {t.created}\t"
                   + (f"revoked {t.revoked}" if t.revoked else "active"))


@token.command("revoke")
@_db_option
@click.argument("token_id", type=int)
def token_revoke(db_path: str, token_id: int) -> None:
    """Revoke the token with this id (see `token list`)."""
    from .auth import revoke_token

    t = revoke_token(_existing_db(db_path), token_id)
    click.echo(f"token {t.id} ({t.name}) revoked at {t.revoked}")


# --- recompute -----------------------------------------------------------------------------


@click.command()
@_db_option
@click.option("--survey", "survey_id", default=None, help="Only this survey (all versions).")
@click.option("--check", is_flag=True, help="Report mismatches without fixing; exit 1 if any.")
def recompute(db_path: str, survey_id: str | None, check: bool) -> None:
    """Rebuild aggregates from the stored reports and report any mismatch."""
    from .aggregation import recompute as run

    def progress(sid: str, version: int, found: int) -> None:
        state = "ok" if not found else f"{found} mismatch(es)" + ("" if check else " fixed")
        click.echo(f"{sid} v{version}: {state}")

    mismatches = run(_existing_db(db_path), survey_id, fix=not check, progress=progress)
    for m in mismatches:
        click.echo(f"  {m.survey_id} v{m.version} {m.question_id}: stored "
                   f"{json.dumps(m.stored)[:200]} != recomputed "
                   f"{json.dumps(m.recomputed)[:200]}")
    if mismatches and check:
        raise click.exceptions.Exit(1)
