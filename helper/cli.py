"""`ldpsurvey helper serve`, `helper token` and `helper keys generate` (registered in
analyst/cli.py), and `ldpsurvey leader keys generate` for the leader's HPKE key pair."""

from __future__ import annotations

import logging

import click
from ldpsurvey.shared.cli_help import FullHelpGroup
from ldpsurvey.shared.two_server.config import b64url
from ldpsurvey.shared.two_server.hpke import generate_keypair

DB_HELP = ("SQLite database file, or a postgresql://user@host/dbname URL (or LDPSURVEY_HELPER_DB)"
           "; the helper's own database, never the leader's.")


def _keys_group(role: str) -> click.Group:
    @click.group(name="keys", cls=FullHelpGroup, help=f"The {role}'s HPKE (X25519) key pair.")
    def keys() -> None:
        pass

    @keys.command("generate", help=f"Create the {role}'s HPKE key pair; its public key goes "
                  f"into the survey's [two_server] table.")
    @click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
                  help=f"Directory for {role}-hpke.key (mode 0600) and {role}-hpke.pub.")
    def generate(out_dir: str) -> None:
        paths, public = generate_keypair(out_dir, role)
        click.echo(f"private key: {paths.private} (keep it on the {role} only)")
        click.echo(f"public key:  {paths.public}")
        click.echo(f"put this in the survey's [two_server] table:\n"
                   f"  {role}_hpke_key = \"{b64url(public)}\"")

    return keys


@click.group(cls=FullHelpGroup)
def helper() -> None:
    """The helper: the second aggregator of a survey collected by two servers, run
    independently."""


helper.add_command(_keys_group("helper"))


@helper.command("token")
@click.option("--out", "out_file", required=True, type=click.Path(dir_okay=False),
              help="New file for the token (mode 0600; never overwritten).")
def helper_token_command(out_file: str) -> None:
    """Create the token the leader presents to the helper. Give the same file to `helper serve
    --leader-token` and to the leader's `serve --helper-token`: then only the leader can run
    and collect the helper's batches."""
    from ldpsurvey.server.common.two_server.helper_token import generate

    click.echo(f"helper token: {generate(out_file)} (copy it to the leader; keep it secret)")


@click.group(cls=FullHelpGroup)
def leader() -> None:
    """The leader's two-server keys (the leader itself is `ldpsurvey serve --hpke-key`)."""


leader.add_command(_keys_group("leader"))


@helper.command("serve")
@click.option("--db", "db_path", default="ldpsurvey-helper.db", show_default=True,
              envvar="LDPSURVEY_HELPER_DB", show_envvar=False, help=DB_HELP)
@click.option("--hpke-key", required=True, type=click.Path(dir_okay=False, exists=True),
              help="The helper's private key (helper-hpke.key from `helper keys generate`).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0 or :: for every interface).")
@click.option("--port", default=8001, show_default=True, type=click.IntRange(0, 65535),
              help="0 picks a free port (printed).")
@click.option("--threads", default=4, show_default=True, type=click.IntRange(1, 64),
              help="Request threads.")
@click.option("--trust", "trusted", multiple=True, metavar="KEY",
              help="Designer public key file or SHA-256 fingerprint whose surveys this helper "
                   "serves (repeatable). Without it, any signed survey naming this helper's "
                   "key is served: then the leader could sign its own.")
@click.option("--leader-token", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The file holding the token the leader presents (`ldpsurvey helper token`). "
                   "Without it anyone who can reach this helper can run or collect batches "
                   "(nothing leaks, but a batch can be lost).")
def helper_serve(db_path: str, hpke_key: str, host: str, port: int, threads: int,
                 trusted: tuple[str, ...], leader_token: str | None) -> None:
    """Run the helper's HTTP API (waitress; no access log, no request metadata kept)."""
    from ldpsurvey.client.trust import trusted_fingerprint
    from ldpsurvey.server.common.db_target import redact
    from ldpsurvey.server.common.serving import listen_or_exit, serve_forever
    from ldpsurvey.server.common.two_server.helper_token import read as read_helper_token

    from .app import create_app

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    fingerprints = [trusted_fingerprint(t) for t in trusted] or None
    token = None if leader_token is None else read_helper_token(leader_token)
    if token is None:
        click.echo("warning: no --leader-token: anyone who can reach this helper can run or "
                   "collect batches (`ldpsurvey helper token` makes one)", err=True)
    sock = listen_or_exit(host, port)  # a busy port fails before the database is created
    try:
        app = create_app({"DATABASE": db_path, "HPKE_KEY": hpke_key, "TRUSTED": fingerprints,
                          "LEADER_TOKEN": token})
    except BaseException:
        sock.close()
        raise
    click.echo(f"ldpsurvey helper serving on http://{host}:{sock.getsockname()[1]}/ "
               f"(database {redact(db_path)})")
    serve_forever(app, sock, threads, "ldpsurvey-helper")
