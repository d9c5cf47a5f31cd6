"""`ldpsurvey invites`: one-time invitation codes for invite-only surveys (see invites.py)."""

from __future__ import annotations

from pathlib import Path

import click
from ldpsurvey.shared.cli_help import FullHelpGroup
from ldpsurvey.shared.errors import LdpSurveyError

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
@click.option("--from-export", "export_path", type=click.Path(dir_okay=False),
              help="Instead of --count: the main survey's export CSV (ODK Central, "
                   "KoboToolbox: one row per interview), one code per interview; prints "
                   "'key,code' lines (docs/sensitive-module.md). Needs --key.")
@click.option("--key", "key_column", metavar="COLUMN",
              help="With --from-export: the column that identifies an interview (KEY, "
                   "_uuid, a household id); printed beside its code, never stored.")
@click.option("--carry", metavar="COLUMNS",
              help="With --from-export: comma-separated columns whose values each code "
                   "carries (e.g. region,age_band), shown to the respondent before they "
                   "answer and linked by the server to their submission, for report --by "
                   "and regress; at most 8 columns of at most 200 values each. NAME=COLUMN "
                   "carries COLUMN as NAME; a survey's carried questions (carried = true) "
                   "must all be carried.")
@click.option("--odk-csv", "odk_path", type=click.Path(dir_okay=False),
              help="With --from-export and --links: write the codes to this new CSV "
                   "(key,code,link) for an ODK/Kobo form to attach and read with "
                   "pulldata('NAME', 'link', 'key', ${KEY}), instead of printing them.")
def invites_create(db_path: str, survey_id: str, count: int | None, design_path: str | None,
                   groups: int | None, allow_lonely_psu: bool, page_url: str | None,
                   export_path: str | None, key_column: str | None, carry: str | None,
                   odk_path: str | None) -> None:
    """Create codes (COUNT, one per unit of a --design frame, or one per interview of a main
    survey's --from-export), print them once, and make the survey invite-only."""
    if sum(x is not None for x in (count, design_path, export_path)) != 1:
        raise click.UsageError("give exactly one of --count N, --design FRAME.csv or "
                               "--from-export MAIN.csv")
    if design_path is None and (groups is not None or allow_lonely_psu):
        raise click.UsageError("--groups and --allow-lonely-psu go with --design")
    if export_path is None and (key_column or carry or odk_path):
        raise click.UsageError("--key, --carry and --odk-csv go with --from-export")
    if export_path is not None and not key_column:
        raise click.UsageError("--from-export needs --key COLUMN (the interview's id)")
    if odk_path is not None and page_url is None:
        raise click.UsageError("--odk-csv writes each code's link: give --links URL")
    page = _page(page_url, survey_id) if page_url is not None else None  # before any code
    if export_path is not None:
        assert key_column is not None
        _create_from_export(db_path, survey_id, export_path, key_column, carry, page, odk_path)
        return
    _refuse_carried_questions(db_path, survey_id)
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


def _refuse_carried_questions(db_path: str, survey_id: str) -> None:
    """--count and --design make codes that carry nothing, which a survey whose questions take
    their value from the invitation (carried = true) cannot take: refused before any code."""
    from . import surveys
    from .invites.carried import ExportError

    store = _existing_db(db_path)
    try:
        questions = surveys.get(store, survey_id, None).manifest["survey"]["questions"]
    except LdpSurveyError:
        return  # the survey's absence is said where the codes are stored
    carried = [q["id"] for q in questions if q.get("carried") is True]
    if carried:
        raise ExportError(f"survey {survey_id!r} takes {', '.join(map(repr, carried))} from "
                          "each invitation (carried = true): make its codes from the main "
                          f"survey's export, --from-export MAIN.csv --key KEY --carry "
                          f"{','.join(carried)}")


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
    click.echo(_csv_text(header, rows, page), nl=False)


def _csv_text(header: list[str], rows: list[tuple[str, ...]], page: str | None) -> str:
    import csv
    import io

    from .invites import invite_link

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows if page is None else [(*row, invite_link(page, row[-1]))
                                                for row in rows])
    return out.getvalue()


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


def _create_from_export(db_path: str, survey_id: str, export_path: str, key: str,
                        carry: str | None, page: str | None, odk_path: str | None) -> None:
    """One code per interview of the main survey's export, carrying the --carry columns;
    'key,code[,link]' printed, or written to a new --odk-csv file (opened before any code is
    made, so that a file that cannot be written stores nothing)."""
    from . import surveys
    from .invites import create
    from .invites.carried import (
        ExportError,
        create_carried,
        parse_carry_columns,
        read_export,
    )

    names, columns = parse_carry_columns(carry) if carry is not None else ((), ())
    export = read_export(export_path, key, names, columns)
    store = _existing_db(db_path)
    questions = surveys.get(store, survey_id, None).manifest["survey"]["questions"]
    out = None
    if odk_path is not None:
        try:
            out = open(odk_path, "x", encoding="utf-8", newline="")  # noqa: SIM115
        except FileExistsError:
            raise ExportError(f"{odk_path} exists: give a new file (the codes in it would be "
                              "lost)") from None
        except OSError as exc:
            raise ExportError(f"cannot write {odk_path}: {exc.strerror or exc}") from None
    try:
        if names or any(q.get("carried") is True for q in questions):
            pairs = create_carried(store, survey_id, export, questions)
        else:
            pairs = list(zip([k for k, _ in export.rows],
                             create(store, survey_id, len(export.rows)), strict=True))
    except BaseException:
        if out is not None:
            out.close()
            Path(odk_path or "").unlink()
        raise
    if out is not None:
        with out:
            out.write(_csv_text(["key", "code", "link"], pairs, page))
    else:
        _csv(["key", "code"] + (["link"] if page else []), pairs, page)
    carried = f", each carrying {', '.join(names)}" if names else ""
    where = f"written to {odk_path}" if odk_path else "shown only this once"
    click.echo(f"{len(pairs):,} invitation code(s) for survey {survey_id!r} created, one per "
               f"interview of {export.source}{carried}; they are {where}, next to the "
               f"interview keys (which are not stored). The survey now accepts only "
               "submissions with a code.", err=True)
    small = export.small_cells()
    if names and small:
        values, n = small[0]
        click.echo(f"warning: {len(small)} combination(s) of {', '.join(names)} are shared by "
                   f"fewer than 5 interviews (e.g. {', '.join(values)}: {n}); a respondent "
                   "in one is nearly identified by the values their code carries", err=True)


@invites.command("list")
@_db_option
@click.option("--survey", "survey_id", required=True, help="Survey id (all its versions).")
def invites_list(db_path: str, survey_id: str) -> None:
    """How many codes were issued and used (never the codes)."""
    from .invites import counts

    store = _existing_db(db_path)
    c = counts(store, survey_id)
    state = "invite-only" if c.invite_only else "open to anyone"
    carried = store.invite_carried_names(survey_id)
    click.echo(f"{c.survey_id}: {state}; {c.issued} code(s) issued, {c.used} used"
               + (f"; each carries {', '.join(carried)}" if carried else ""))
