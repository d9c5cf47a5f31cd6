"""`ldpsurvey simulate`: run a survey on simulated respondents and check the error bars.

Prints, per question, each option's true frequency in the drawn sample, its estimate, the
interval, and whether the interval covered the truth, then a coverage summary.
"""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np
from ldpsurvey.shared.survey import load_survey
from ldpsurvey.shared.wording import epsilon_text

from ..progress import terminal_progress
from .results import QuestionResult, SimulationResult, ValueResult, answer_label
from .survey import simulate_survey
from .truth import load_truth

# Below this many answers in all, a progress bar is only noise.
_PROGRESS_MIN_ANSWERS = 200_000


@click.command()
@click.argument("survey_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--n", "n", type=click.IntRange(min=1), default=100_000, show_default=True,
              help="Number of simulated respondents.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed for the simulation's random generator (printed when not given).")
@click.option("--truth", "truth_file", type=click.Path(exists=True, dir_okay=False,
                                                       path_type=Path),
              default=None, help='JSON {question_id: {label_or_value: probability}}; '
                                 'other questions use a built-in skewed distribution.')
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.95, show_default=True, help="Confidence level of the intervals.")
@click.option("--rows", type=click.IntRange(min=1), default=40, show_default=True,
              help="Show at most this many options per question (the most frequent).")
@click.option("--crosstab", nargs=2, metavar="ROWS COLS",
              help="Instead: simulate the joint and conditional estimates of two questions.")
@click.option("--dependence", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Crosstab: share of respondents whose COLS answer follows their ROWS answer.")
@click.option("--bins", help="Crosstab bin edges for the integer question(s), e.g. 0,5,10.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "md", "html"]),
              default="table", show_default=True, help="Crosstab output format.")
def simulate(survey_file: Path, n: int, seed: int | None, truth_file: Path | None,
             confidence: float, rows: int, crosstab: tuple[str, str] | None,
             dependence: float, bins: str | None, fmt: str) -> None:
    """Simulate N respondents answering SURVEY_FILE and compare estimates with the truth.

    Answers and their randomization come from a seeded numpy generator (simulation only:
    real reports are randomized with the OS CSPRNG).
    """
    survey = load_survey(survey_file)
    truth = load_truth(truth_file, survey) if truth_file is not None else None
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    if crosstab is not None:
        click.echo(_crosstab(survey, crosstab, n, rng, truth, dependence, confidence, bins, fmt,
                             seed), nl=False)
        return
    total = n * len(survey.questions)
    with terminal_progress(total, "simulating",
                           enabled=total >= _PROGRESS_MIN_ANSWERS) as update:
        result = simulate_survey(survey, n, rng, truth, confidence, seed, update)
    click.echo(format_result(result, rows))


def _crosstab(survey, pair: tuple[str, str], n: int, rng: np.random.Generator, truth,
              dependence: float, confidence: float, bins: str | None, fmt: str,
              seed: int) -> str:
    """The simulated crosstab in a report format, truth beside every number, then coverage."""
    from ldpsurvey.shared.joint_features import survey_pair_bins

    from ..reports.crosstab_view import render_crosstab
    from .crosstab import simulate_crosstab
    from .two_server import check_crosstab_simulated

    check_crosstab_simulated(survey)
    row_bins, col_bins = survey_pair_bins(survey, pair, bins)
    with terminal_progress(n, "simulating", enabled=2 * n >= _PROGRESS_MIN_ANSWERS) as update:
        result = simulate_crosstab(survey, pair[0], pair[1], n, rng, truth, dependence,
                                   confidence, row_bins, col_bins, seed, update)
    text = render_crosstab(result.report, fmt)
    summary = (f"seed {seed}; coverage: {result.covered} of {result.total} intervals covered "
               f"the truth ({result.covered / max(result.total, 1):.1%}; nominal "
               f"{confidence:.0%}; too-noisy ratios not judged)")
    if fmt in ("table", "md"):
        return text + "\n" + summary + "\n"
    click.echo(summary, err=True)
    return text


def format_result(result: SimulationResult, rows: int = 40) -> str:
    """The whole simulation as readable text."""
    survey = result.survey
    count = len(survey.questions)
    lines = [f"survey {survey.id} v{survey.version}: {count} question{'s' if count != 1 else ''}, "
             f"n = {result.n:,}, seed {result.seed}, "
             f"total ε = {epsilon_text(survey.total_epsilon)}", ""]
    for q in result.questions:
        lines.extend(format_question(q, rows))
        lines.append("")
    lines.extend(f"note: {note}" for note in result.notes)
    covered, total = result.coverage
    if total:
        lines.append(f"coverage: {covered} of {total} intervals covered the truth "
                     f"({covered / total:.1%}; nominal {result.confidence:.0%})")
    return "\n".join(lines)


def format_question(q: QuestionResult, rows: int) -> list[str]:
    question = q.question
    level = f"{q.confidence:.0%}"
    out = [f"{question.id} ({question.type}): {question.text}",
           f"  mechanism {q.mechanism}, ε = {epsilon_text(q.epsilon)} "
           f"(realized {q.realized_epsilon:.6g}), n = {q.n:,}"]
    if q.mean is not None:
        m = q.mean
        out.append(f"  mean: truth {m.truth:.4f}, estimate {m.estimate:.4f} ± {m.std_error:.4f}, "
                   f"{level} CI [{m.ci_low:.4f}, {m.ci_high:.4f}], "
                   f"covered {_yes_no(m.covered)}")
    if q.values:
        shown = q.values
        if len(shown) > rows:
            top = sorted(range(len(shown)), key=lambda i: -shown[i].truth)[:rows]
            shown = [shown[i] for i in sorted(top)]
        out.extend(_table(shown, question.unit.answer_word, level))
        if len(q.values) > len(shown):
            out.append(f"  ... {len(q.values) - len(shown)} more not shown (coverage counts all)")
    if q.groups:
        out.extend(_table(q.groups, "group", level))
    out.extend(_among_asked(q, level))
    if not q.groups and q.estimate is not None and q.estimate.notes:
        out.extend(f"  note: {note}" for note in q.estimate.notes)
    # e.g. a location map that cannot be read at this n (shared/location_estimate.py)
    out.extend(f"  WARNING: {w}" for w in getattr(q.estimate, "warnings", None) or [])
    flags = q.intervals
    if flags:
        out.append(f"  covered {sum(flags)} of {len(flags)}")
    return out


def _among_asked(q: QuestionResult, level: str) -> list[str]:
    """Skip logic: the share not asked (integer questions), then among those asked."""
    out = []
    if q.not_asked is not None:
        out.extend(_table([q.not_asked], "share", level))
    if q.asked_values:
        out.append("  among those asked:")
        out.extend(_table(q.asked_values, "option", level))
    if q.asked_groups:
        out.extend(_table(q.asked_groups, "group", level))
    if q.asked_mean is not None:
        m = q.asked_mean
        out.append(f"  mean among those asked: truth {m.truth:.4f}, estimate {m.estimate:.4f} "
                   f"± {m.std_error:.4f}, {level} CI [{m.ci_low:.4f}, {m.ci_high:.4f}], "
                   f"covered {_yes_no(m.covered)}")
    return out


def _table(results: list[ValueResult], head: str, level: str) -> list[str]:
    labels = [answer_label(r.value) for r in results]
    width = max(len(head), *(len(s) for s in labels))
    ci = f"{level} CI"
    lines = [f"  {head:<{width}}  {'truth':>8}  {'estimate':>9}  {ci:^21}  covered",
             f"  {'-' * width}  {'-' * 8}  {'-' * 9}  {'-' * 21}  -------"]
    for label, r in zip(labels, results, strict=True):
        interval = f"[{r.ci_low:.4f}, {r.ci_high:.4f}]"
        lines.append(f"  {label:<{width}}  {r.truth:>8.4f}  {r.estimate:>9.4f}  "
                     f"{interval:^21}  {_yes_no(r.covered)}")
    return lines


def _yes_no(flag: bool) -> str:
    return "yes" if flag else "NO"
