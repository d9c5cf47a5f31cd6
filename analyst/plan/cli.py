"""`ldpsurvey plan`: respondents needed for a margin of error, or the margin n respondents buy."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click
from ldpsurvey.shared.composition import DEFAULT_DELTA
from ldpsurvey.shared.question_types import REGISTRY, unit_for
from ldpsurvey.shared.survey import load_survey
from ldpsurvey.shared.wording import epsilon_text

from ..survey_warnings import survey_warnings
from .composition import (
    DEFAULT_HOUSEHOLD,
    DEFAULT_REPEATS,
    format_composition,
    plan_composition,
)
from .multiselect import describe_multiselect, plan_set
from .rows import QuestionPlan
from .skip import PUBLIC, WITHOUT_SPECIAL
from .survey import (
    PLANNED_TYPES,
    describe,
    describe_question,
    format_mean_units,
    format_median,
    format_plan,
    mark_auto,
    plan_k,
    plan_survey,
)

ORDER_NOTE = ("rows in auto's order (error averaged over options); respondents and margins use "
              "the worst case over options and truth")
# `plan --type`: the types planned from --k and --epsilon alone, and those whose definition
# takes max_selected (a set of options: --max-selected), in the registry's order.
BARE_TYPES = tuple(name for name, unit in REGISTRY.items()
                   if name in PLANNED_TYPES or "max_selected" in unit.keys)
# `plan --type T --typical A B`: the types whose definition takes a `typical` range (numbers).
TYPICAL_TYPES = tuple(name for name in BARE_TYPES if "typical" in unit_for(name).keys)


@click.command("plan", short_help="Respondents needed for a margin of error, per mechanism.")
@click.argument("survey_file", required=False,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--k", "k", type=int, help="Number of possible answers (without SURVEY_FILE).")
@click.option("--epsilon", type=float, help="Privacy budget of the question (without SURVEY_FILE).")
@click.option("--type", "question_type", type=click.Choice(BARE_TYPES),
              default="categorical", show_default=True,
              help="Question type (without SURVEY_FILE); for integer, k = max - min + 1.")
@click.option("--max-selected", type=click.IntRange(min=1), default=None,
              help="With --type multiselect: at most this many of the k options selected "
                   "(default k).")
@click.option("--typical", nargs=2, metavar="A B", default=None,
              help=f"With --type {' or '.join(TYPICAL_TYPES)}: the survey field `typical = "
                   "[A, B]` (most answers lie between A and B; on the grid 0..k-1 of the bare "
                   "plan, in grid steps): auto picks the mean mechanism of least variance "
                   "expected under it, as the survey does.")
@click.option("--margin", type=float,
              help="Target margin of error (interval half-width): a proportion, e.g. 0.02; for "
                   "integer questions on the mean in the answer's units, for ordinal ones on "
                   "the mean score (options scored 1..k).")
@click.option("--mean-margin", type=float,
              help="With SURVEY_FILE and --margin: the margin on integer and ordinal questions' "
                   "means, in their units (default: --margin). With --compare-modes, on "
                   "integer questions' means only: ordinal questions are compared on shares, "
                   "with --margin.")
@click.option("--median-margin", type=float,
              help="With SURVEY_FILE and --margin: the margin on the median of decimal "
                   "questions that estimate the distribution, in their units (a seeded "
                   "simulation of EMS; with --n, their median's margin is shown).")
@click.option("--n", "n", type=int, help="Number of respondents: print the margin they give.")
@click.option("--asked", type=click.FloatRange(0, 1, min_open=True), default=0.5,
              show_default=True,
              help="With SURVEY_FILE: the share of respondents a follow-up question (one with "
                   "`relevant`) is expected to apply to; its shares among those asked are "
                   "planned at it.")
@click.option("--answered", type=click.FloatRange(0, 1, min_open=True), default=0.9,
              show_default=True,
              help="With SURVEY_FILE: the share of respondents expected to give an answer "
                   "rather than a special value (don't know, prefer not to say); the "
                   "estimates among those who gave an answer are planned at it.")
@click.option("--confidence", type=float, default=0.95, show_default=True,
              help="Confidence level of the interval.")
@click.option("--crosstab", nargs=2, metavar="ROWS COLS",
              help="With SURVEY_FILE: respondents a margin on every joint cell of two "
                   "questions needs (or the margin --n gives); with a number (a decimal) on "
                   "one side, on its mean among each category of the other (--margin in the "
                   "number's units, --category-share).")
@click.option("--bins", help="Crosstab bin edges for the integer question(s), e.g. 0,5,10.")
@click.option("--category-share", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.2, show_default=True,
              help="With --crosstab of a number (a decimal) by a question: the share of "
                   "respondents in the category whose mean is planned (the worst case is "
                   "over every truth in which it holds this share).")
@click.option("--regress", "regress_outcome", metavar="OUTCOME",
              help="Instead: respondents to detect --odds-ratio for a binary covariate with "
                   "80%% power in `ldpsurvey regress` of OUTCOME (a yes/no question of "
                   "SURVEY_FILE; without SURVEY_FILE give 'yes' and --epsilon: binary_rr).")
@click.option("--odds-ratio", type=float, help="With --regress: the odds ratio to detect.")
@click.option("--baseline", type=float, default=0.2, show_default=True,
              help="With --regress: the outcome's share among the unexposed.")
@click.option("--exposed", type=float, default=0.5, show_default=True,
              help="With --regress: the share of respondents with the covariate.")
@click.option("--compare-modes", is_flag=True,
              help="Compare collection modes at the same epsilon: local DP (best mechanism) "
                   "vs two servers (central DP), sampling error included in both.")
@click.option("--local-epsilon", type=float,
              help="With --compare-modes and --k/--epsilon: also two servers with this local "
                   "epsilon0 on the device.")
@click.option("--repeat", "repeats", type=click.IntRange(min=1),
              help=f"With SURVEY_FILE: also the total ε of answering the survey this many times "
                   f"(a monthly panel for a year: {DEFAULT_REPEATS}).")
@click.option("--household", type=click.IntRange(min=1),
              help=f"With SURVEY_FILE: also what a household answering on this many devices "
                   f"reveals (e.g. {DEFAULT_HOUSEHOLD}).")
@click.option("--delta", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help=f"With SURVEY_FILE: also the advanced composition bound at this δ (without "
                   f"it, shown at δ = {DEFAULT_DELTA:g} only where it is smaller than the plain "
                   f"sum).")
def plan(survey_file: Path | None, **options: Any) -> None:
    """Plan a survey: respondents needed for a margin of error, or the margin for --n.

    Worst case over the true answers, for every mechanism that fits; the one `auto` picks is
    marked. With SURVEY_FILE, each question is planned with its own ε and mechanism. A
    two-server survey (or --compare-modes) compares the collection modes and states the
    guarantees.
    """
    _plan(survey_file, **options)
    if survey_file is not None:  # after the plan, where a designer reads last
        for line in survey_warnings(load_survey(survey_file)):
            click.echo(line, err=True)


def _plan(survey_file: Path | None, k: int | None, epsilon: float | None, question_type: str,
          max_selected: int | None, typical: tuple[str, str] | None, margin: float | None,
          mean_margin: float | None,
          median_margin: float | None, n: int | None,
          asked: float, answered: float,
          confidence: float, crosstab: tuple[str, str] | None, bins: str | None,
          category_share: float,
          regress_outcome: str | None, odds_ratio: float | None, baseline: float,
          exposed: float, compare_modes: bool, local_epsilon: float | None,
          repeats: int | None, household: int | None, delta: float | None) -> None:
    if survey_file is None and (repeats, household, delta) != (None, None, None):
        raise click.UsageError("--repeat, --household and --delta go with SURVEY_FILE")
    if typical is not None and (survey_file is not None or compare_modes
                                or question_type not in TYPICAL_TYPES):
        raise click.UsageError(f"--typical goes with --type {' or '.join(TYPICAL_TYPES)} "
                               "and --k/--epsilon (a survey gives `typical = [a, b]` in the "
                               "question)")
    if median_margin is not None and (survey_file is None or compare_modes
                                      or regress_outcome is not None
                                      or _is_two_server(survey_file)):
        raise click.UsageError("--median-margin goes with SURVEY_FILE and --margin (an LDP "
                               "survey's plan or --crosstab, without --compare-modes or "
                               "--regress)")
    if regress_outcome is not None:
        click.echo(_regress_plan(survey_file, regress_outcome, epsilon, odds_ratio, baseline,
                                 exposed))
        return
    if local_epsilon is not None and not compare_modes:
        raise click.UsageError("--local-epsilon goes with --compare-modes")
    if compare_modes or (survey_file is not None and crosstab is None
                         and _is_two_server(survey_file)):
        from .modes_cli import echo_mode_comparison

        _check_max_selected(question_type, max_selected)
        echo_mode_comparison(survey_file, k, epsilon, question_type, margin, mean_margin, n,
                             confidence, local_epsilon, max_selected)
        return
    if crosstab is not None:
        if survey_file is None:
            raise click.UsageError("--crosstab needs SURVEY_FILE (the questions' mechanisms)")
        click.echo(_crosstab_plan(load_survey(survey_file), crosstab, margin, n, confidence,
                                  bins, median_margin, category_share))
        return
    if bins is not None:
        raise click.UsageError("--bins goes with --crosstab")
    if survey_file is not None:
        if k is not None or epsilon is not None:
            raise click.UsageError("give either SURVEY_FILE or --k/--epsilon, not both")
        survey = load_survey(survey_file)
        splan = plan_survey(survey, margin=margin, n=n, confidence=confidence,
                            mean_margin=mean_margin, asked=asked, answered=answered,
                            median_margin=median_margin)
        click.echo(f"survey {survey.id} v{survey.version} ({survey.title}): total ε per "
                   f"respondent {epsilon_text(splan.total_epsilon)} ({_summed(survey)})")
        composition = format_composition(
            plan_composition(survey, repeats or DEFAULT_REPEATS, household or DEFAULT_HOUSEHOLD,
                             DEFAULT_DELTA if delta is None else delta),
            repeat=repeats is not None, household=household is not None,
            advanced=delta is not None)
        if composition:
            click.echo(composition)
        disclosed = [q.id for q in survey.questions if q.disclosed]
        if disclosed:
            click.echo(f"disclosed (sent as given, counted exactly; nothing to plan): "
                       f"{', '.join(disclosed)}")
        randomized = [q for q in survey.questions if not q.disclosed]
        for q, qp in zip(randomized, splan.questions, strict=True):
            click.echo("")
            click.echo(f"{qp.question}: {describe_question(q, qp, asked, answered)}")
            click.echo(format_plan(qp))
            if qp.auto_reason is not None:
                click.echo(f"({qp.auto_reason})")  # a number's estimates and typical range
            step = q.unit.mean_step(q)
            if step is not None and not q.not_asked:
                mean_margin_of_q = (mean_margin if mean_margin is not None else margin)
                click.echo(format_mean_units(step, mean_margin_of_q))
            if qp.median is not None:
                click.echo(format_median(qp))
            if q.special:
                click.echo(f"(special values: every report may be one, so its estimates among "
                           f"those who gave an answer carry everyone's noise; the last row is "
                           f"the same question {WITHOUT_SPECIAL}, with the answerers' reports "
                           f"only: the respondents needed with and without them)")
            elif q.not_asked:
                click.echo(f"(the 'not asked' value: every respondent sends this question, "
                           f"so its estimates among those asked carry everyone's noise; the last "
                           f"row is the same question {PUBLIC}, where only those asked would "
                           f"report)")
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
    _check_max_selected(question_type, max_selected)
    probe = SimpleNamespace(id="", type=question_type, k=k, epsilon=epsilon, not_asked=False)
    if typical is not None:
        probe.spec = _typical_grid(k, typical)
    bare = _BarePlan(k, epsilon, margin, n, confidence, max_selected)
    for line in unit_for(question_type).visit(probe, bare):
        click.echo(line)


def _typical_grid(k: int, typical: tuple[str, str]) -> Any:
    """The bare plan's grid 0..k-1 (one step apart) estimating the mean, with `typical` read
    as the survey reads the field (the same checks and messages, naming --typical)."""
    from decimal import Decimal

    from ldpsurvey.shared.errors import SurveyError
    from ldpsurvey.shared.question_types.number_grid import GridSpec

    if k < 2:
        raise click.UsageError("--k must be at least 2")
    grid = GridSpec(Decimal(0), Decimal(k - 1), Decimal(1))
    try:
        return grid.with_estimates({"estimate": ["mean"], "typical": list(typical)},
                                   "--typical")
    except SurveyError as exc:
        raise click.UsageError(f"--typical: {exc.problem}") from None


def _check_max_selected(question_type: str, max_selected: int | None) -> None:
    if max_selected is not None and "max_selected" not in unit_for(question_type).keys:
        raise click.UsageError("--max-selected goes with --type multiselect")


@dataclass(frozen=True)
class _BarePlan:
    """`plan --type T --k K --epsilon E` per kind of answer (QuestionType.visit): its lines."""

    k: int
    epsilon: float
    margin: float | None
    n: int | None
    confidence: float
    max_selected: int | None

    def options(self, probe: Any) -> list[str]:
        qp = plan_k(self.k, self.epsilon, margin=self.margin, n=self.n,
                    confidence=self.confidence, question_type=probe.type)
        lines = [describe(qp), format_plan(qp)]
        if _ranked_by_the_average(qp):
            lines.append(ORDER_NOTE)
        return lines

    def number(self, probe: Any) -> list[str]:
        """A number's rows; with --typical, auto's mark and reason as a survey question with
        `typical = [A, B]` on the grid 0..k-1 gets them (`QuestionType.planned_auto`)."""
        if getattr(probe, "spec", None) is None:
            return self.options(probe)
        qp = plan_k(self.k, self.epsilon, margin=self.margin, n=self.n,
                    confidence=self.confidence, question_type=probe.type)
        own = unit_for(probe.type).planned_auto(probe)
        qp = replace(qp, **mark_auto(qp.rows, own, probe.type, self.k, self.epsilon,
                                     self.margin, self.n, self.confidence))
        lines = [describe(qp), format_plan(qp)]
        if qp.auto_reason is not None:
            lines.append(f"({qp.auto_reason})")
        return lines

    def option_set(self, probe: Any) -> list[str]:
        from ldpsurvey.shared.mechanisms.set_base import SetShape

        shape = SetShape(self.k, self.k if self.max_selected is None else self.max_selected)
        qp = plan_set(shape, self.epsilon, margin=self.margin, n=self.n,
                      confidence=self.confidence)
        return [describe_multiselect(shape, self.epsilon, self.confidence), format_plan(qp),
                ORDER_NOTE]


def _ranked_by_the_average(plan: QuestionPlan) -> bool:
    """Whether auto's order (the error averaged over options) can differ from the rows' worst
    case: several rows, each on one option's share (a mean or mean score ranks by itself)."""
    return plan.margin_unit == "proportion" and len(plan.rows) > 1


def _summed(survey) -> str:
    """What the total is the sum of, in words: 'the sum over its 3 questions', 'the ε of its
    one question', disclosed questions (no ε) named as such."""
    randomized = sum(1 for q in survey.questions if not q.disclosed)
    disclosed = len(survey.questions) - randomized
    what = ("the ε of its one randomized question" if randomized == 1 and disclosed
            else "the ε of its one question" if randomized == 1
            else f"the sum over its {randomized} randomized questions" if disclosed
            else f"the sum over its {randomized} questions")
    if disclosed:
        what += (f"; {disclosed} disclosed question{'s' if disclosed > 1 else ''} "
                 f"{'cost' if disclosed > 1 else 'costs'} no ε")
    return what


def _regress_plan(survey_file: Path | None, outcome: str, epsilon: float | None,
                  odds_ratio: float | None, baseline: float, exposed: float) -> str:
    from ldpsurvey.shared.mechanisms import mechanism_for
    from ldpsurvey.shared.mechanisms.binary_rr import BinaryRR
    from ldpsurvey.shared.regression import outcome_channel

    from .regress import plan_regress

    if odds_ratio is None:
        raise click.UsageError("--regress needs --odds-ratio")
    if survey_file is not None:
        survey = load_survey(survey_file)
        try:
            question = survey.question(outcome)
        except KeyError:
            raise click.UsageError(f"--regress: the survey has no question {outcome!r}") from None
        if tuple(question.unit.values(question)) != (False, True):
            raise click.UsageError("--regress plans a yes/no outcome")
        mechanism = mechanism_for(question)
    else:
        if epsilon is None:
            raise click.UsageError("--regress without SURVEY_FILE needs --epsilon")
        mechanism = BinaryRR(epsilon, (False, True))
    _, channel = outcome_channel(mechanism, 1)
    plan_ = plan_regress(float(channel[0, 1]), float(channel[1, 1]), odds_ratio=odds_ratio,
                         baseline=baseline, exposed=exposed)
    what = outcome if survey_file is not None else "a yes/no outcome"
    return f"{what} ({mechanism.name}, ε = {mechanism.epsilon:g}): {plan_.describe()}"


def _is_two_server(survey_file: Path) -> bool:
    return getattr(load_survey(survey_file), "collection", "ldp") == "two-server"


def _crosstab_plan(survey, pair: tuple[str, str], margin: float | None, n: int | None,
                   confidence: float, bins: str | None, median_margin: float | None,
                   category_share: float) -> str:
    from ldpsurvey.shared.joint_features import survey_pair_bins

    from .among_category import AmongCategoryPlan, format_among_category
    from .crosstab import format_crosstab_plan, plan_crosstab

    row_bins, col_bins = survey_pair_bins(survey, pair, bins)
    plan_ = plan_crosstab(survey, pair[0], pair[1], margin=margin, n=n, confidence=confidence,
                          row_bins=row_bins, col_bins=col_bins, median_margin=median_margin,
                          category_share=category_share)
    if isinstance(plan_, AmongCategoryPlan):  # a number's side: its mean among each category
        return format_among_category(plan_, targeted=margin is not None)
    return format_crosstab_plan(plan_, targeted=margin is not None)
