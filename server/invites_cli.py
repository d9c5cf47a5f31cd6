"""`ldpsurvey invites`: one-time invitation codes for invite-only surveys (see invites.py)."""

from __future__ import annotations

import click
from ldpsurvey.shared.cli_help import FullHelpGroup

from .cli import _db_option, _existing_db


@click.group(cls=FullHelpGroup)
def invites() -> None:
    """One-time invitation codes (only their SHA-256 is stored)."""


@invites.command("create")
@_db_option
@click.option("--survey", "survey_id", required=True, help="Survey id (all its versions).")
@click.option("--count", type=click.IntRange(1, 1_000_000),
              help="How many codes to create (or --design).")
@click.option("--design", "design_path", type=click.Path(dir_okay=False),
              help="Instead of --count: a sampling frame CSV (id, weight, optional stratum, psu, "
                   "fpc; docs/weights.md), one code per unit, stored with the unit's design for "
                   "design-based estimates; prints 'id,code' lines. The ids are not stored.")
@click.option("--groups", type=click.IntRange(2, 1000),
              help="With --design: deal the PSUs at random into this many groups (variance by "
                   "random groups).")
@click.option("--allow-lonely-psu", is_flag=True,
              help="With --design: accept a stratum with a single PSU (choose at analysis what "
                   "it contributes: --lonely-psu).")
@click.option("--links", "page_url", metavar="URL",
              help="Also print each code's link to send, URL#invite=CODE (CSV: code,link or "
                   "id,code,link). URL is the survey page as respondents open it "
                   "(https://HOST/s/SURVEY, or an exported page's address); a bare server "
                   "address means its page, URL/s/SURVEY. The code in the #fragment never "
                   "reaches the server with the page request (docs/web.md).")
def invites_create(db_path: str, survey_id: str, count: int | None, design_path: str | None,
                   groups: int | None, allow_lonely_psu: bool, page_url: str | None) -> None:
    """Create codes (COUNT, or one per unit of a --design frame), print them once, and make
    the survey invite-only."""
    if (count is None) == (design_path is None):
        raise click.UsageError("give exactly one of --count N or --design FRAME.csv")
    if design_path is None and (groups is not None or allow_lonely_psu):
        raise click.UsageError("--groups and --allow-lonely-psu go with --design")
    page = _page(page_url, survey_id) if page_url is not None else None  # before any code
    if design_path is not None:
        _create_designed(db_path, survey_id, design_path, groups, allow_lonely_psu, page)
        return
    from .invites import create

    assert count is not None
    codes = create(_existing_db(db_path), survey_id, count)
    if page is None:
        click.echo("\n".join(codes))
    else:
        _csv(["code", "link"], [(code,) for code in codes], page)
    click.echo(f"{count} invitation code(s) for survey {survey_id!r} created; they are shown "
               "only this once. The survey now accepts only submissions with a code.", err=True)


def _page(url: str, survey_id: str) -> str:
    """The page address the links point to (--links), checked before any code is made."""
    from urllib.parse import urlsplit

    from .invites import page_address

    try:
        page = page_address(url, survey_id)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--links") from None
    host = urlsplit(page).hostname or ""
    if page.startswith("http:") and host not in ("localhost", "127.0.0.1", "::1"):
        click.echo(f"warning: {page} is http://, not https://: the code and the randomized "
                   "answers would cross the network unencrypted", err=True)
    return page


def _csv(header: list[str], rows: list[tuple[str, ...]], page: str | None) -> None:
    """Print rows as CSV; with a page, each row's last column (a code) gets its link."""
    import csv
    import io

    from .invites import invite_link

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows if page is None else [(*row, invite_link(page, row[-1]))
                                                for row in rows])
    click.echo(out.getvalue(), nl=False)


def _create_designed(db_path: str, survey_id: str, design_path: str, groups: int | None,
                     allow_lonely_psu: bool, page: str | None) -> None:
    from ldpsurvey.shared.design_frame import read_frame

    from .invites import create_designed

    # single-PSU strata are checked on the union with the codes made before (create_designed)
    frame = read_frame(design_path, allow_lonely_psu=True)
    pairs = create_designed(_existing_db(db_path), survey_id, frame, groups, allow_lonely_psu)
    _csv(["id", "code"] + (["link"] if page else []), pairs, page)
    click.echo(f"{len(pairs):,} invitation code(s) for survey {survey_id!r} created, each stored "
               f"with its unit's design ({frame.describe()}"
               + (f", {groups} random groups" if groups else "") + "); they are shown only this "
               "once, next to the ids of the frame (which are not stored). The survey now "
               "accepts only submissions with a code.", err=True)


@invites.command("list")
@_db_option
@click.option("--survey", "survey_id", required=True, help="Survey id (all its versions).")
def invites_list(db_path: str, survey_id: str) -> None:
    """How many codes were issued and used (never the codes)."""
    from .invites import counts

    c = counts(_existing_db(db_path), survey_id)
    state = "invite-only" if c.invite_only else "open to anyone"
    click.echo(f"{c.survey_id}: {state}; {c.issued} code(s) issued, {c.used} used")
