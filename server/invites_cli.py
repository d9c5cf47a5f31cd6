"""`ldpsurvey invites`: one-time invitation codes for invite-only surveys (see invites.py)."""

from __future__ import annotations

import click

from ..shared.cli_help import FullHelpGroup
from .cli import _db_option, _existing_db


@click.group(cls=FullHelpGroup)
def invites() -> None:
    """One-time invitation codes (only their SHA-256 is stored)."""


@invites.command("create")
@_db_option
@click.option("--survey", "survey_id", required=True, help="Survey id (all its versions).")
@click.option("--count", required=True, type=click.IntRange(1, 1_000_000),
              help="How many codes to create.")
def invites_create(db_path: str, survey_id: str, count: int) -> None:
    """Create COUNT codes, print them once (one a line), and make the survey invite-only."""
    from .invites import create

    codes = create(_existing_db(db_path), survey_id, count)
    click.echo("\n".join(codes))
    click.echo(f"{count} invitation code(s) for survey {survey_id!r} created; they are shown "
               "only this once. The survey now accepts only submissions with a code.", err=True)


@invites.command("list")
@_db_option
@click.option("--survey", "survey_id", required=True, help="Survey id (all its versions).")
def invites_list(db_path: str, survey_id: str) -> None:
    """How many codes were issued and used (never the codes)."""
    from .invites import counts

    c = counts(_existing_db(db_path), survey_id)
    state = "invite-only" if c.invite_only else "open to anyone"
    click.echo(f"{c.survey_id}: {state}; {c.issued} code(s) issued, {c.used} used")
