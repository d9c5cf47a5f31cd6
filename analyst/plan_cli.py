"""`ldpsurvey plan`: respondents needed for a margin of error, or the margin n respondents buy."""

from __future__ import annotations

from pathlib import Path

import click

from ..shared.survey import QUESTION_TYPES, load_survey
from .planner import (
    describe,
    format_plan,
    plan_k,
    plan_survey,
)

ORDER_NOTE = ("rows in auto's order (error averaged over options); respondents and margins use "
              "the worst case over options and truth")


@click.command("plan", short_help="Respondents needed for a margin of error, per mechanism.")
@click.argument("survey_file", required=False,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--k", "k", type=int, help="Number of possible answers (without SURVEY_FILE).")
@click.option("--epsilon", type=float, help="Privacy budget of the question (without SURVEY_FILE).")
@click.option("--type", "question_type", type=click.Choice(QUESTION_TYPES),
              default="categorical", show_default=True,
              help="Question type (without SURVEY_FILE); for integer, k = max - min + 1.")
@click.option("--margin", type=float,
              help="Target margin of error (interval half-width): a proportion, e.g. 0.02; for "
                   "integer questions on the mean in the answer's units, for ordinal ones on "
                   "the mean score (options scored 1..k).")
@click.option("--mean-margin", type=float,
              help="With SURVEY_FILE and --margin: the margin on integer and ordinal questions' "
                   "means, in their units (default: --margin).")
@click.option("--n", "n", type=int, help="Number of respondents: print the margin they give.")
@click.option("--confidence", type=float, default=0.95, show_default=True,
              help="Confidence level of the interval.")
@click.option("--crosstab", nargs=2, metavar="ROWS COLS",
              help="With SURVEY_FILE: respondents a margin on every joint cell of two "
                   "questions needs (or the margin --n gives).")
@click.option("--bins", help="Crosstab bin edges for the integer question(s), e.g. 0,5,10.")
def plan(survey_file: Path | None, k: int | None, epsilon: float | None, question_type: str,
         margin: float | None, mean_margin: float | None, n: int | None,
         confidence: float, crosstab: tuple[str, str] | None, bins: str | None) -> None:
    """Plan a survey: respondents needed for a margin of error, or the margin for --n.

    Worst case over the true answers, for every mechanism that fits; the one `auto` picks is
    marked. With SURVEY_FILE, each question is planned with its own ε and mechanism.
    """
    if crosstab is not None:
        if survey_file is None:
            raise click.UsageError("--crosstab needs SURVEY_FILE (the questions' mechanisms)")
        click.echo(_crosstab_plan(load_survey(survey_file), crosstab, margin, n, confidence,
                                  bins))
        return
    if bins is not None:
        raise click.UsageError("--bins goes with --crosstab")
    if survey_file is not None:
        if k is not None or epsilon is not None:
            raise click.UsageError("give either SURVEY_FILE or --k/--epsilon, not both")
        survey = load_survey(survey_file)
        splan = plan_survey(survey, margin=margin, n=n, confidence=confidence,
                            mean_margin=mean_margin)
        click.echo(f"survey {survey.id} v{survey.version}: total epsilon per respondent "
                   f"{splan.total_epsilon:g} (the sum over its {len(survey.questions)} "
                   "questions)")
        for q, qp in zip(survey.questions, splan.questions, strict=True):
            click.echo("")
            click.echo(f"{qp.question}: {describe(qp)}")
            click.echo(format_plan(qp))
            if not any(r.configured for r in qp.rows):
                click.echo(f"(configured {q.mechanism}: no worst-case variance of this kind is "
                           "derived for it, so it is not planned)")
        if margin is not None:
            click.echo("")
            click.echo("respondents needed so that every question meets its margin with its "
                       f"configured mechanism: {splan.n_needed:,}")
        return
    if mean_margin is not None:
        raise click.UsageError("--mean-margin goes with SURVEY_FILE; use --type integer "
                               "--margin for one integer question")
    if k is None or epsilon is None:
        raise click.UsageError("give SURVEY_FILE, or both --k and --epsilon")
    qp = plan_k(k, epsilon, margin=margin, n=n, confidence=confidence,
                question_type=question_type)
    click.echo(describe(qp))
    click.echo(format_plan(qp))
    if qp.question_type in ("binary", "categorical") and len(qp.rows) > 1:
        click.echo(ORDER_NOTE)


def _crosstab_plan(survey, pair: tuple[str, str], margin: float | None, n: int | None,
                   confidence: float, bins: str | None) -> str:
    from ..shared.joint_features import survey_pair_bins
    from .plan_crosstab import format_crosstab_plan, plan_crosstab

    row_bins, col_bins = survey_pair_bins(survey, pair, bins)
    plan_ = plan_crosstab(survey, pair[0], pair[1], margin=margin, n=n, confidence=confidence,
                          row_bins=row_bins, col_bins=col_bins)
    return format_crosstab_plan(plan_, targeted=margin is not None)
