"""`ldpsurvey plan --compare-modes` (and `plan` of a two-server survey): the mode comparison
table per question, and the survey's guarantees in plain words."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click
from ldpsurvey.shared.question_types import unit_for
from ldpsurvey.shared.survey import load_survey
from ldpsurvey.shared.two_server.guarantees import survey_guarantees

from .modes import (
    compare_modes,
    compare_question,
    compares_mean,
    describe_comparison,
    format_comparison,
    respondents_per_mode,
)
from .rows import ModeComparison, check_target

NOTE = ("Two servers: each answer is split into two shares with a validity proof; each server "
        "adds its own noise to the totals, so estimates carry O(1/epsilon) noise for the whole "
        "batch instead of per respondent. Margins are worst case over the truth and include "
        "sampling error (respondents as a random sample) in every mode.")
MEAN_MARGIN_NOTE = ("--mean-margin is the margin on the mean of each integer question, in its "
                    "units; every other question (ordinal ones included) is compared on one "
                    "option's share, in percentage points, with --margin.")


def echo_mode_comparison(survey_file: Path | None, k: int | None, epsilon: float | None,
                         question_type: str, margin: float | None, mean_margin: float | None,
                         n: int | None, confidence: float, local_epsilon: float | None,
                         max_selected: int | None = None) -> None:
    if survey_file is None:
        if k is None or epsilon is None:
            raise click.UsageError("give SURVEY_FILE, or both --k and --epsilon")
        probe = SimpleNamespace(id="", type=question_type, k=k, not_asked=False)
        comparison = unit_for(question_type).visit(probe, _BareModes(
            k, epsilon, margin, n, confidence, local_epsilon, max_selected))
        click.echo(describe_comparison(comparison))
        click.echo(format_comparison(comparison))
        click.echo("\n".join(textwrap.wrap(NOTE, 96)))
        return
    if k is not None or epsilon is not None or local_epsilon is not None:
        raise click.UsageError("give either SURVEY_FILE or --k/--epsilon/--local-epsilon, "
                               "not both")
    check_target(margin, n, confidence)
    survey = load_survey(survey_file)
    click.echo(f"survey {survey.id} v{survey.version}: "
               f"{getattr(survey, 'collection', 'ldp')} collection")
    click.echo("")
    for line in survey_guarantees(survey).statements:
        click.echo("\n".join(textwrap.wrap(line, 96)))
    if mean_margin is not None:
        click.echo("")
        click.echo("\n".join(textwrap.wrap(MEAN_MARGIN_NOTE, 96)))
    comparisons = []
    for q in survey.questions:
        # --mean-margin: a question compared on its mean (an integer's); shares use --margin
        m = mean_margin if mean_margin is not None and compares_mean(q) else margin
        comparisons.append(compare_question(q, margin=m, n=n, confidence=confidence))
        click.echo("")
        click.echo(describe_comparison(comparisons[-1]))
        if comparisons[-1].rows:  # none: a disclosed or location question says why
            click.echo(format_comparison(comparisons[-1]))
    needed = respondents_per_mode(comparisons)
    if margin is not None and needed:
        click.echo("")
        click.echo("respondents needed so that every question meets its margin: "
                   + "; ".join(f"{mode} {need:,}"
                               for mode, need in needed.items()))
    click.echo("")
    click.echo("\n".join(textwrap.wrap(NOTE, 96)))


@dataclass(frozen=True)
class _BareModes:
    """`plan --compare-modes --type T --k K --epsilon E` per kind of answer
    (QuestionType.visit): a set of options is compared over --max-selected of its k."""

    k: int
    epsilon: float
    margin: float | None
    n: int | None
    confidence: float
    local_epsilon: float | None
    max_selected: int | None

    def options(self, probe: Any) -> ModeComparison:
        return compare_modes(probe.type, self.k, self.epsilon,
                             local_epsilon=self.local_epsilon, margin=self.margin, n=self.n,
                             confidence=self.confidence)

    number = cell = options

    def option_set(self, probe: Any) -> ModeComparison:
        from ldpsurvey.shared.mechanisms.set_base import SetShape

        from .multiselect import compare_set_modes

        check_target(self.margin, self.n, self.confidence)
        shape = SetShape(self.k, self.k if self.max_selected is None else self.max_selected)
        return compare_set_modes(  # type: ignore[no-any-return]
            shape, self.epsilon, local_epsilon=self.local_epsilon, margin=self.margin, n=self.n,
            confidence=self.confidence)
