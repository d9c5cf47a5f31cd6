"""`ldpsurvey import xlsform`: an XLSForm (ODK, KoboToolbox, SurveyCTO) as a survey file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import click

from ..shared.cli_help import FullHelpGroup
from ..shared.survey import MAX_VERSION


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
              help="Import the rows that can be collected privately and list the others "
                   "(free text, dates, ...) as left out, instead of refusing the form.")
@click.option("--id", "survey_id", default=None,
              help="The survey id (a slug) instead of the one made from settings form_id.")
@click.option("--survey-version", "version", type=click.IntRange(1, MAX_VERSION),
              default=None, help="The survey version instead of settings version.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def import_xlsform_command(form: Path, out_path: Path, epsilon: float | None,
                           skip_unsupported: bool, survey_id: str | None, version: int | None,
                           force: bool) -> None:
    """Read an XLSForm (.xlsx, .xls, .csv) with pyxform and write it as a survey file.

    select_one becomes a categorical question (binary for a yes/no list, ordinal with
    ldp_type = ordinal or appearance likert), select_multiple a check-all-that-apply question,
    integer with a range constraint an integer question; relevant becomes skip logic and
    label::Language (xx) / hint::... columns translations. Privacy comes from the columns
    ldp_epsilon, ldp_mechanism, ldp_disclosed (and ldp_central_epsilon, ldp_local_epsilon with
    settings collection = two-server). Rows that cannot be collected privately are refused by
    row, with the reason and the nearest supported alternative (docs/xlsform.md). Nothing is
    written unless the whole survey checks; then `ldpsurvey plan OUT` plans it.
    """
    from .xlsform_import import ImportOptions, ImportRefused, import_xlsform

    if out_path.exists() and not force:
        raise click.ClickException(f"{out_path} exists: pass --force to overwrite it")
    options = ImportOptions(epsilon=epsilon, skip_unsupported=skip_unsupported,
                            survey_id=survey_id, version=version)
    try:
        result = import_xlsform(form, options)
    except ImportRefused as exc:
        for problem in exc.problems:
            click.echo(str(problem), err=True)
        if exc.more:
            click.echo(f"... and {exc.more} more", err=True)
        kinds = {p.kind for p in exc.problems}
        advice = (" (or pass --skip-unsupported to leave out the rows that cannot be "
                  "collected privately)" if kinds == {"unsupported"} else "")
        raise click.ClickException(f"{len(exc.problems) + exc.more} row(s) of {form.name} "
                                   f"cannot be imported (listed above): fix them{advice}; "
                                   f"nothing was written") from None
    _write(out_path, result.toml)
    survey = result.survey
    languages = ", ".join([survey.language or "en", *survey.translations])
    click.echo(f"wrote {out_path}: survey {survey.id!r} version {survey.version}, "
               f"{len(survey.questions)} question(s), languages {languages}")
    if result.left_out:
        click.echo(f"left out ({len(result.left_out)} row(s), --skip-unsupported):")
        for problem in result.left_out:
            click.echo(f"  {problem}")
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"next: ldpsurvey plan {out_path} {plan_margins(survey)}")


def plan_margins(survey: Any) -> str:
    """The margins of the `plan` command the import suggests: ±5 points on shares and, for
    integer questions, a twentieth of the widest range on means (plan's --mean-margin defaults
    to --margin, which would ask for ±0.05 days)."""
    ranges = [q.max - q.min for q in survey.questions if q.type == "integer"]
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
