"""The operator's commands: serve, token, recompute, migrate-store (registered in
analyst/cli.py)."""

from __future__ import annotations

import json
import logging
from typing import Any

import click
from ldpsurvey.shared.cli_help import FullHelpGroup

from .common.db_target import redact
from .common.errors import StoreError
from .store import Store, open_store

DEFAULT_DB = "ldpsurvey.db"
DB_HELP = ("SQLite database file, or a postgresql://user@host/dbname URL (or LDPSURVEY_DB); "
           "the password comes from PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass).")
_db_option = click.option("--db", "db_path", default=DEFAULT_DB, show_default=True,
                          envvar="LDPSURVEY_DB", show_envvar=False, help=DB_HELP)


def _existing_db(target: str) -> Store:
    """The store of a command that reads: a SQLite file must exist already."""
    return open_store(target, must_exist=True)


# --- serve ---------------------------------------------------------------------------------


@click.command()
@_db_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0 or :: for every interface).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="0 picks a free port (printed).")
@click.option("--threads", default=8, show_default=True, type=click.IntRange(1, 256),
              help="Request threads per process (and PostgreSQL connections per process).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Server processes sharing the port (useful with PostgreSQL).")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="URL",
              help="Origin (scheme://host[:port]) of an exported respondent page that may call "
                   "the survey and submission endpoints (CORS). Repeatable; none by default.")
@click.option("--hpke-key", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The leader's HPKE private key (`ldpsurvey leader keys generate`): needed "
                   "for two-server surveys.")
@click.option("--aggregate-every", type=click.FloatRange(min=0), default=0, show_default=True,
              metavar="SECONDS", help="Run two-server aggregation with the helper this often "
                                      "(0: only when the analyst asks).")
@click.option("--helper-token", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The file holding the token this leader presents to the helper (`ldpsurvey "
                   "helper token`; the helper's operator starts it with the same file).")
@click.option("--debug", is_flag=True, help="Flask's development server instead of waitress.")
def serve(db_path: str, host: str, port: int, threads: int, workers: int,
          allow_origins: tuple[str, ...], hpke_key: str | None, aggregate_every: float,
          helper_token: str | None, debug: bool) -> None:
    """Run the aggregator HTTP API (waitress; no access log, no request metadata kept).

    It also serves the respondent web page at /s/SURVEY_ID.
    """
    from .app import create_app
    from .common.serving import listen_or_exit, serve_forever, supervise
    from .common.two_server.helper_token import read as read_helper_token
    from .cors import allowed_origins
    from .http_request import STORE_EXTENSION

    allowed_origins(allow_origins)  # bad input is refused first, whatever the port's state

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # "Task queue depth is N" is routine backpressure under load, not worth a line each time.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    shown = redact(db_path)
    config = {"DATABASE": db_path, "POOL_SIZE": threads, "ALLOWED_ORIGINS": allow_origins,
              "INGEST_PROCESS": True,
              "HPKE_KEY": hpke_key, "AGGREGATE_EVERY": aggregate_every,
              "HELPER_TOKEN": None if helper_token is None else read_helper_token(helper_token)}
    allowed_origins(allow_origins)  # a bad --allow-origin is a usage error, whatever the port
    # The port next: a busy port must fail before anything (a database file) is created.
    sock = listen_or_exit(host, port)
    try:
        app = create_app(config)  # checks the configuration and migrates the schema, once
    except BaseException:
        sock.close()
        raise
    if debug:
        sock.close()  # werkzeug binds the address itself; it was free a moment ago
        _serve_debug(app, host, port, shown)
        return
    where = f"http://{host}:{sock.getsockname()[1]}/"
    if workers > 1:
        app.extensions[STORE_EXTENSION].close()  # each worker opens its own after the fork
        click.echo(f"ldpsurvey serving on {where} (database {shown}, {workers} processes x "
                   f"{threads} threads)")
        supervise(sock, config, threads, workers, click.echo, create_app)
        return
    click.echo(f"ldpsurvey serving on {where} (database {shown}, {threads} threads)")
    serve_forever(app, sock, threads, "ldpsurvey")


def _serve_debug(app: Any, host: str, port: int, shown: str) -> None:
    from werkzeug.serving import WSGIRequestHandler

    class AnonymousHandler(WSGIRequestHandler):
        """Werkzeug's handler without its per-request log line (it names the client)."""

        def log_request(self, *args: Any, **kwargs: Any) -> None:
            pass

        def log(self, type: str, message: str, *args: Any) -> None:
            logging.getLogger("werkzeug").log(
                logging.ERROR if type == "error" else logging.INFO, message, *args)

    click.echo(f"ldpsurvey (debug server) on http://{host}:{port}/ database {shown}")
    app.run(host=host, port=port, debug=True, use_reloader=False,
            request_handler=AnonymousHandler)


# --- tokens --------------------------------------------------------------------------------


@click.group(cls=FullHelpGroup)
def token() -> None:
    """Analyst bearer tokens (only their SHA-256 is stored)."""


@token.command("create")
@_db_option
@click.option("--name", default="analyst", show_default=True,
              help="A label for the token, shown by `token list` (e.g. who holds it).")
def token_create(db_path: str, name: str) -> None:
    """Create a token and print it once."""
    from .auth import create_token

    info, plain = create_token(open_store(db_path), name)
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


# --- moving data ---------------------------------------------------------------------------


@click.command("migrate-store")
@click.option("--from", "source", required=True,
              help="The database to copy: a SQLite file or a postgresql:// URL.")
@click.option("--to", "target", required=True,
              help="An empty database to fill: a postgresql:// URL or a new SQLite file.")
def migrate_store(source: str, target: str) -> None:
    """Copy every survey, report, token and invitation code into an empty database, then
    verify counts and aggregates. Refuses a target that already holds data."""
    from .common.two_server.db import tables_in_use
    from .store_copy import copy_store

    src = _existing_db(source)
    try:
        two_server = tables_in_use(source)
    except BaseException:
        src.close()
        raise
    if two_server:
        src.close()
        raise StoreError(f"{redact(source)} holds two-server data ({', '.join(two_server)}), which "
                         "migrate-store does not copy yet: copy a two-server leader's or "
                         "helper's database with the database's own tools (sqlite3 .backup, "
                         "pg_dump); nothing was copied")
    try:
        dst = open_store(target)
    except BaseException:
        src.close()
        raise
    try:
        click.echo(f"copying {src.describe()} -> {dst.describe()}", err=True)
        summary = copy_store(src, dst, lambda n: click.echo(f"  {n} reports copied", err=True))
    finally:
        src.close()
        dst.close()
    click.echo(f"copied {summary.surveys} survey version(s), {summary.reports} report(s), "
               f"{summary.tokens} token(s), {summary.invites} invitation code(s); counts and "
               "aggregates verified")
