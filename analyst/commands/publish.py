"""The survey designer's commands: make a signing key, sign a survey and publish it."""

from __future__ import annotations

import json

import click
from ldpsurvey.shared.cli_help import FullHelpGroup

from ..remote import request_json


@click.group(cls=FullHelpGroup)
def keys() -> None:
    """Ed25519 survey-signing keys."""


@keys.command("generate")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              metavar="DIR", help="Directory for the key pair (created if missing); an existing "
                                  "private key there is never overwritten.")
def keys_generate(out_dir: str) -> None:
    """Write DIR/survey-signing.key (mode 0600) and DIR/survey-signing.pub."""
    from ldpsurvey.shared.manifest import fingerprint, generate_keypair, load_public_key

    key_path, pub_path = generate_keypair(out_dir)
    click.echo(f"private key: {key_path}\npublic key:  {pub_path}\n"
               f"fingerprint: {fingerprint(load_public_key(pub_path))}")


@click.command()
@click.argument("survey_file", type=click.Path(dir_okay=False))
@click.option("--server", "server_url", required=True, help="Base URL, e.g. http://127.0.0.1:8000")
@click.option("--token", "token_value", required=True, envvar="LDPSURVEY_TOKEN",
              help="Analyst token (or LDPSURVEY_TOKEN).")
@click.option("--key", "key_path", required=True, type=click.Path(dir_okay=False),
              help="Private signing key.")
@click.option("--timeout", default=30.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Seconds to wait for the server's answer before giving up.")
def publish(survey_file: str, server_url: str, token_value: str, key_path: str,
            timeout: float) -> None:
    """Sign a survey file and upload it to a server."""
    from ldpsurvey.shared.manifest import load_private_key, sign_survey
    from ldpsurvey.shared.survey import load_survey

    from ..survey_warnings import survey_warnings

    survey = load_survey(survey_file)
    signed = sign_survey(survey, load_private_key(key_path))
    body = json.dumps(signed.to_dict()).encode()
    status, reply = request_json(server_url.rstrip("/") + "/api/surveys", body=body,
                                 token=token_value, timeout=timeout)
    what = "published" if status == 201 else "already published (identical)"
    click.echo(f"survey {signed.survey.id} version {signed.survey.version} {what}\n"
               f"sha256:      {reply.get('sha256', signed.sha256)}\n"
               f"fingerprint: {signed.fingerprint}")
    for line in survey_warnings(survey):  # after it is published: an error stays one line
        click.echo(line, err=True)
