"""`ldpsurvey import xlsform`: an XLSForm (ODK, KoboToolbox, SurveyCTO) as a survey file."""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from ldpsurvey.shared.cli_help import FullHelpGroup
from ldpsurvey.shared.survey import MAX_VERSION


@click.group("import", cls=FullHelpGroup)
def import_group() -> None:
    """Bring a questionnaire written in another tool into ldpsurvey."""


@import_group.command("xlsform")
@click.argument("form", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The survey file to write (TOML).")
@click.option("--epsilon", type=click.FloatRange(min=0, min_open=True), default=None,
              help="ε of every row without ldp_epsilon (in a two-server form: the central ε of "
                   "every row without ldp_central_epsilon).")
@click.option("--skip-unsupported", is_flag=True,
              help="Import the rows that can be collected privately and list the others as "
                   "left out, instead of refusing the form: the rows that need your fix (a "
                   "condition naming a choice the form lacks, no ε, ...) first, under their "
                   "own heading, with a warning on stderr; the rest (free text, dates, ...) "
                   "after.")
@click.option("--id", "survey_id", default=None,
              help="The survey id (a slug) instead of the one made from settings form_id.")
@click.option("--survey-version", "version", type=click.IntRange(1, MAX_VERSION),
              default=None, help="The survey version instead of settings version.")
@click.option("--problems", "problems_path", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Write every row refused or left out to this CSV file (row, name, type, "
                   "kind, topic, reason, alternative; kind 'fix' for the rows that need "
                   "your fix, listed first, 'check' for the rows imported as ODK runs them "
                   "though the form is wrong there, 'unsupported' for the others), "
                   "whether or not the import succeeds.")
@click.option("--group", "groups", multiple=True, metavar="NAME",
              help="Import only the rows inside this group or repeat (its name column; "
                   "repeatable, nested groups included): the sensitive module of a large "
                   "form.")
@click.option("--marked", default=None, metavar="COLUMN",
              help="Import only the rows whose COLUMN cell in the survey sheet is filled "
                   "(anything but no, false or 0), and every row inside a group so marked.")
@click.option("--integer-max", "integer_max", type=int, default=None, metavar="N",
              help="The largest answer of every integer row whose constraint bounds it below "
                   "only (. >= 0, . > 0): such a row is imported with the range from its "
                   "bound to N, shown to the respondent, and said in the notes and the TOML "
                   "(a row's ldp_max cell bounds that row instead). Without it (or ldp_max), "
                   "such rows are left out: no bound is made up.")
@click.option("--media", "media", multiple=True, metavar="PATH",
              type=click.Path(path_type=Path),
              help="The form's attached files (a folder of them, or one file; repeatable), "
                   "as ODK Central or KoboToolbox attach them: a select_one_from_file or "
                   "select_multiple_from_file row takes its choices from the .csv (name, "
                   "label, label::Language (xx) columns), .xml or .geojson file it names, "
                   "and they are signed with the survey (nothing is fetched when it is "
                   "answered). Without the file such a row is left out.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def import_xlsform_command(form: Path, out_path: Path, epsilon: float | None,
                           skip_unsupported: bool, survey_id: str | None, version: int | None,
                           problems_path: Path | None, groups: tuple[str, ...],
                           marked: str | None, integer_max: int | None,
                           media: tuple[Path, ...], force: bool) -> None:
    """Read an XLSForm (.xlsx, .xlsm, .xls, .csv, .md) with pyxform and write it as a survey
    file.

    select_one becomes a categorical question (binary for a yes/no list, ordinal with
    ldp_type = ordinal or appearance likert), select_multiple a check-all-that-apply question,
    integer with a range constraint an integer question, decimal with a range constraint (or a
    range with a decimal step) a decimal question; relevant becomes skip logic and
    label::Language (xx) / hint::... columns translations. Privacy comes from the columns
    ldp_epsilon, ldp_mechanism, ldp_disclosed (and ldp_central_epsilon, ldp_local_epsilon with
    settings collection = two-server). Rows that cannot be collected privately are refused by
    row, with the reason and the nearest supported alternative (docs/xlsform.md); rows that
    need fixing (a condition naming a choice the question does not have, no ε, ...) are
    listed first. With --skip-unsupported every such row is left out and listed, those that
    need your fix under their own heading and in a warning (the exit status is 0: a survey
    was written). --group and --marked import only part of the form (the rows outside it are
    counted, not listed; a condition reading one is refused). --media gives the form's
    attached files, the choices of its select_one_from_file rows (without them such rows are
    left out). The import says how many rows
    it kept of each type and left out of each kind, with the reason. Nothing is written
    unless the whole survey checks; then `ldpsurvey plan OUT` plans it.
    """
    from ..xlsform_import import (
        FIX,
        ImportOptions,
        ImportRefused,
        Selection,
        XlsFormError,
        import_xlsform,
    )

    if out_path.exists() and not force:
        raise click.ClickException(f"{out_path} exists: pass --force to overwrite it")
    options = ImportOptions(epsilon=epsilon, skip_unsupported=skip_unsupported,
                            survey_id=survey_id, version=version,
                            selection=Selection(tuple(groups), marked),
                            integer_max=integer_max, media=tuple(media))
    try:
        result = import_xlsform(form, options)
    except ImportRefused as exc:
        if problems_path is not None:  # the rows to fix, those to check, then the rest
            to_fix = [p for p in exc.problems if p.kind == FIX]
            _write(problems_path, problems_csv([*to_fix, *exc.checks,
                                                *exc.problems[len(to_fix):]]))
        raise click.ClickException(_refused(exc, form.name, skip_unsupported,
                                            problems_path)) from None
    except XlsFormError as exc:  # the form as a whole: its one line, after the rows to check
        if exc.checks and problems_path is not None:
            _write(problems_path, problems_csv(exc.checks))
        _to_check(exc.checks)
        raise
    to_fix, to_check = result.to_fix, result.to_check
    if problems_path is not None:  # the rows to fix, those to check, then the rest
        _write(problems_path, problems_csv([*to_fix, *to_check,
                                            *result.left_out[len(to_fix):]]))
    _write(out_path, result.toml)
    survey = result.survey
    languages = ", ".join([survey.language or "en", *survey.translations])
    click.echo(f"wrote {out_path}: survey {survey.id!r} version {survey.version}, "
               f"{len(survey.questions)} question(s), languages {languages}")
    where = f"the header of {out_path}" + (
        f" and in {problems_path}" if problems_path is not None else "")
    if to_fix:  # wrong as written: every one, apart and first, and warned about below
        click.echo(f"{len(to_fix)} row(s) need your fix and were left out:")
        _fix_rows(to_fix, err=False)
    if to_check:  # wrong too, but ODK runs them: imported so, every one, warned about below
        click.echo(f"imported as ODK runs them; check ({len(to_check)} row(s)):")
        for problem in to_check:
            click.echo(f"  {problem}")
    other = result.left_out[len(to_fix):]  # the rows that need fixing come first
    if other:
        click.echo(f"left out ({len(other)} row(s), --skip-unsupported):")
        _list(other, err=False, every=f"listed in {where}")
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(result.counts.summary(), err=True)
    click.echo(f"next: ldpsurvey plan {out_path} {plan_margins(survey)}")
    if to_check:
        click.echo(f"warning: {len(to_check)} row(s) of {form.name} are wrong in the form and "
                   f"imported as ODK runs them (listed above and in {where}): check them",
                   err=True)
    if to_fix:
        click.echo(f"warning: {len(to_fix)} row(s) of {form.name} need your fix and were left "
                   f"out (listed above and in {where}): fix them and import again", err=True)


MAX_LISTED = 50  # rows that can only be left out printed one by one; more are counted by topic


def _refused(exc: Any, form: str, skip_unsupported: bool, problems_path: Path | None) -> str:
    """Print the refused rows (every one that needs fixing, first, then those to check) and
    say why nothing was written."""
    from ..xlsform_import import FIX

    to_fix = [p for p in exc.problems if p.kind == FIX]
    other = [p for p in exc.problems if p.kind != FIX]
    every = (f"written to {problems_path}" if problems_path is not None
             else "pass --problems FILE to list every row")
    if to_fix:
        click.echo(f"need fixing ({len(to_fix)} row(s)):", err=True)
        _fix_rows(to_fix, err=True)
    _to_check(exc.checks)
    if other:
        would = ", left out" if skip_unsupported else ""
        click.echo(f"cannot be collected privately{would} ({len(other)} row(s)):", err=True)
        _list(other, err=True, every=every)
    if exc.nothing_left:
        return (f"no question of {form} can be imported: every row is left out (listed "
                "above); nothing was written")
    if to_fix:
        rest = (f", with the {len(other)} that cannot be collected privately" if other
                else "")
        return (f"{len(to_fix)} row(s) of {form} need fixing (listed first above): fix them "
                f"(--skip-unsupported would leave them out{rest}); nothing was written")
    return (f"{len(other)} row(s) of {form} cannot be collected privately (listed above): "
            "change them, or pass --skip-unsupported to leave them out; nothing was written")


def _to_check(checks: Sequence[Any]) -> None:
    """The rows found before the import was refused that it would import as ODK runs them
    (wrong in the form): every one, so that the designer sees everything at once."""
    if checks:
        click.echo(f"wrong in the form, would be imported as ODK runs them; check "
                   f"({len(checks)} row(s)):", err=True)
        for problem in checks:
            click.echo(f"  {problem}", err=True)


def _fix_rows(problems: Sequence[Any], err: bool) -> None:
    """Every row that needs fixing, each with its reason and what was meant; the rows without
    ε in one line with their numbers (one --epsilon fixes them all)."""
    from ..xlsform_import import NO_EPSILON

    for problem in problems:
        if problem.topic != NO_EPSILON:
            click.echo(f"  {problem}", err=err)
    rows = [str(p.row) for p in problems if p.topic == NO_EPSILON]
    if rows:
        numbers = f"row{'s' if len(rows) > 1 else ''} {', '.join(rows)}"
        click.echo(f"  {len(rows)} row(s) without ε ({numbers}): fill ldp_epsilon, or pass "
                   "--epsilon E for every row without one", err=err)


def _list(problems: Sequence[Any], err: bool, every: str) -> None:
    """Each row, or, beyond MAX_LISTED, how many of each topic and where every row is."""
    from ..xlsform_import import topics

    if len(problems) <= MAX_LISTED:
        for problem in problems:
            click.echo(f"  {problem}", err=err)
        return
    for topic, count in topics(problems):
        click.echo(f"  {count:4d}  {topic}", err=err)
    click.echo(f"  (every row: {every})", err=err)


def problems_csv(problems: Sequence[Any]) -> str:
    """The rows as CSV, one a line, in the order given (the rows that need fixing first)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["row", "name", "type", "kind", "topic", "reason", "alternative"])
    for p in problems:
        writer.writerow(["" if p.row is None else p.row, p.name, p.type, p.kind, p.topic,
                         p.reason, p.alternative])
    return out.getvalue()


def plan_margins(survey: Any) -> str:
    """The margins of the `plan` command the import suggests: ±5 points on shares and, for
    integer questions, a twentieth of the widest range on means (plan's --mean-margin defaults
    to --margin, which would ask for ±0.05 days)."""
    ranges = [r for q in survey.questions if (r := q.unit.mean_range(q)) is not None]
    if not ranges:
        return "--margin 0.05"
    return f"--margin 0.05 --mean-margin {max(ranges) / 20:g}"


def _write(path: Path, text: str) -> None:
    """Write the file whole or not at all (a temporary file renamed over it)."""
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise click.ClickException(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise click.ClickException(f"cannot write {path}: {exc.strerror or exc}") from None
