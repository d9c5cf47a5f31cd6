"""Regressions over the stored reports of one survey version (GET .../regression and
`ldpsurvey regress --db`): reads the outcome's and covariates' reports of every submission,
turns them into a design matrix and channels, and fits (shared/regression.py).

Outcome: a yes/no, categorical or ordinal question (logistic; a categorical one is modelled as
one option, `level`, against the rest), or an integer question (linear). Covariates: disclosed
questions (categorical/ordinal/yes-no as dummies against their first option, integer as a
number) and at most two randomized categorical or yes/no questions: their channel (for support
bits, the reports' relative likelihood) enters the logistic likelihood, their unbiased
indicator estimates the linear fit's corrected moments.
Submissions missing any of them are left out (counted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from ldpsurvey.shared.errors import AnalysisError
from ldpsurvey.shared.mechanisms import Mechanism
from ldpsurvey.shared.mechanisms.base import JointReading
from ldpsurvey.shared.regression import (
    INTERCEPT,
    LatentCovariate,
    RegressionResult,
    fit_logistic,
    outcome_channel,
    support_bit_covariate,
)
from ldpsurvey.shared.regression_linear import IndicatorEstimates, fit_linear, support_estimates
from ldpsurvey.shared.survey import Question

from . import surveys
from .report_columns import report_columns
from .store import Store
from .surveys import randomized_reports

PAGE = 100_000
MAX_COVARIATES = 20
MAX_LATENT = 2
MAX_LATENT_OPTIONS = 10
MAX_DUMMIES = 50
# support-bit mechanisms whose report likelihood is ratio^[supports v] up to a factor of the
# report (shared/regression.support_bit_covariate)
TWO_VALUED_LIKELIHOOD = frozenset({"oue", "sue", "ss", "olh"})


@dataclass(frozen=True)
class Spec:
    """What to fit: the outcome, its modelled option (logistic), the covariates."""

    outcome: str
    covariates: tuple[str, ...]
    level: str | None = None


def parse_covariates(text: str | None) -> tuple[str, ...]:
    """'a,b,c' -> ('a', 'b', 'c')."""
    if not text:
        return ()
    items = tuple(part.strip() for part in text.split(","))
    if any(not item for item in items):
        raise AnalysisError("covariates must be question ids separated by commas")
    return items


def _label(question: Question, value: Any) -> str:
    return question.unit.value_label(question, value)


def _level_index(question: Question, level: str | None) -> tuple[int, str]:
    """The modelled option of a logistic outcome: (index, label), as its unit names it."""
    return question.unit.modelled_level(question, level)


def regression(store: Store, survey_id: str, version: int | None, spec: Spec,
               confidence: float = 0.95) -> dict[str, Any]:
    """The regression document of one survey version."""
    record = surveys.get(store, survey_id, version)
    compiled = randomized_reports(record)
    survey = compiled.survey
    questions = {q.id: q for q in survey.questions}
    qids = [spec.outcome, *spec.covariates]
    carried = [c for c in spec.covariates if c not in questions
               and c in store.invite_carried_names(record.id)]
    if carried:  # covariates the invitation codes carry (docs/sensitive-module.md)
        from .invites.carried_analysis import carried_columns, carried_covariates

        questions, mechanisms, values = carried_covariates(store, record, compiled, carried)
        _check_spec(spec, questions, mechanisms)
        columns, dropped = carried_columns(store, record, compiled, qids, questions, values)
    else:
        mechanisms = compiled.mechanisms
        _check_spec(spec, questions, mechanisms)
        columns, dropped = report_columns(store, record.id, record.version, qids,
                                          [mechanisms[q].report_width for q in qids], PAGE)
    result = fit_columns(columns, dropped, spec, questions, mechanisms, confidence)
    return {"survey": record.id, "version": record.version, "sha256": record.sha256,
            "covariates": list(spec.covariates), **result.to_dict()}


def _check_spec(spec: Spec, questions: dict[str, Question],
                mechanisms: dict[str, Mechanism]) -> None:
    for qid in (spec.outcome, *spec.covariates):
        if qid not in questions:
            raise AnalysisError(f"the survey has no question {qid!r}", {"question": qid})
        refusal = questions[qid].unit.regression_refusal(questions[qid])
        if refusal is not None:  # e.g. shares that overlap: no one answer per person
            raise AnalysisError(refusal, {"question": qid})
    if spec.outcome in spec.covariates:
        raise AnalysisError("the outcome cannot also be a covariate")
    if len(set(spec.covariates)) != len(spec.covariates):
        raise AnalysisError("a covariate is named twice")
    if len(spec.covariates) > MAX_COVARIATES:
        raise AnalysisError(f"at most {MAX_COVARIATES} covariates")
    latent = [c for c in spec.covariates if not questions[c].disclosed]
    if len(latent) > MAX_LATENT:
        raise AnalysisError(f"at most {MAX_LATENT} randomized covariates ({', '.join(latent)}): "
                            "each multiplies the latent cells the likelihood sums over")
    linear = questions[spec.outcome].unit.numeric
    for qid in latent:
        q, m = questions[qid], mechanisms[qid]
        if q.unit.numeric or m.joint_reports not in (JointReading.INDEX, JointReading.SUPPORT_BITS):
            raise AnalysisError(f"randomized covariate {qid!r} must be a yes/no or categorical "
                                f"question, not {q.type} with {m.name}")
        if (m.joint_reports == JointReading.SUPPORT_BITS and not linear
                and m.name not in TWO_VALUED_LIKELIHOOD):
            raise AnalysisError(
                f"randomized covariate {qid!r} reports support bits ({m.name}) whose likelihood "
                "ldpsurvey does not have in closed form: a logistic regression sums it over the "
                "covariate's true answer; linear regression (an integer outcome) takes it")
        if q.k > MAX_LATENT_OPTIONS:
            raise AnalysisError(f"randomized covariate {qid!r} has {q.k} options; at most "
                                f"{MAX_LATENT_OPTIONS}")
    outcome = questions[spec.outcome]
    if (outcome.unit.numeric and not outcome.disclosed
            and mechanisms[spec.outcome].value_noise(np.zeros((0, 1))) is None):
        # a linear model needs each report's unbiased value and its noise's variance
        raise AnalysisError(f"no linear regression through {outcome.mechanism!r}")


def check_spec(spec: Spec, questions: dict[str, Question],
               mechanisms: dict[str, Mechanism]) -> None:
    """AnalysisError when the spec cannot be fitted (unknown questions, too many or unfit
    randomized covariates, an outcome without a linear model)."""
    _check_spec(spec, questions, mechanisms)


def fit_columns(columns: Sequence[np.ndarray], dropped: int, spec: Spec,
                questions: dict[str, Question], mechanisms: dict[str, Mechanism],
                confidence: float, **survey_weights: Any) -> RegressionResult:
    """The fit from the reports of complete submissions: columns[0] the outcome's, then each
    covariate's (one entry per submission; (n, width) for a report of several integers).
    `survey_weights`: design-based fits take `weights` and `variance` (one weight per row,
    the sandwich over PSUs: shared/design/regression.py `fit_options`)."""
    n = len(columns[0])
    if n == 0:
        raise AnalysisError("no submission answers the outcome and every covariate yet")
    x_parts, names = [np.ones((n, 1))], [INTERCEPT]
    latent: list[LatentCovariate | IndicatorEstimates] = []
    latent_names: list[str] = []
    references: list[str] = []
    for j, qid in enumerate(spec.covariates, start=1):
        q, m = questions[qid], mechanisms[qid]
        values = columns[j]
        if q.disclosed and q.unit.numeric:  # the number itself, in the question's units
            x_parts.append(m.pseudo_values(np.asarray(values)).reshape(-1, 1))
            names.append(qid)
        elif q.disclosed:
            index = np.asarray(values, dtype=np.int64)
            if q.k - 1 > MAX_DUMMIES:
                raise AnalysisError(f"{qid!r} has {q.k} options: at most {MAX_DUMMIES + 1}")
            x_parts.append((index[:, None] == np.arange(1, q.k)[None, :]).astype(float))
            names += [f"{qid}={_label(q, v)}" for v in list(q.labels)[1:]]
            references.append(f"{qid}={_label(q, q.labels[0])}")
        elif m.joint_reports == JointReading.SUPPORT_BITS:
            bits = m.support_bits(np.asarray(values).reshape(n, -1))
            labels = [_label(q, v) for v in q.labels]
            if questions[spec.outcome].unit.numeric:  # corrected moments
                p_star, q_star = float(m.p_star), float(m.q_star)  # type: ignore[attr-defined]
                latent.append(IndicatorEstimates(qid, labels,
                                                 support_estimates(bits, p_star, q_star)))
            else:  # latent cells through the reports' relative likelihood
                loss = m.privacy_loss()
                assert loss is not None  # _check_spec
                latent.append(support_bit_covariate(qid, labels, bits, float(loss.ratio)))
            latent_names += [f"{qid}={_label(q, v)}" for v in list(q.labels)[1:]]
            references.append(f"{qid}={_label(q, q.labels[0])}")
        else:
            a, estimator = m.index_channel()
            latent.append(LatentCovariate(qid, [_label(q, v) for v in q.labels],
                                          np.asarray(values, dtype=np.int64), a, estimator))
            latent_names += [f"{qid}={_label(q, v)}" for v in list(q.labels)[1:]]
            references.append(f"{qid}={_label(q, q.labels[0])}")
    x = np.hstack(x_parts)
    constant = [j for j in range(1, x.shape[1]) if np.all(x[:, j] == x[0, j])]
    left_out = [names[j] for j in constant]
    if constant:  # e.g. a disclosed option nobody chose: no information about its coefficient
        keep = [j for j in range(x.shape[1]) if j not in constant]
        x, names = x[:, keep], [names[j] for j in keep]
    outcome, mech = questions[spec.outcome], mechanisms[spec.outcome]
    result = _fit(x, names, columns, n, dropped, spec, outcome, mech, latent, latent_names,
                  confidence, survey_weights)
    if references:
        result.notes.insert(0, "each option is compared with the first one (the intercept's "
                            "group): " + ", ".join(references))
    if left_out:
        result.notes.append("left out, the same for every respondent used (no information): "
                            + ", ".join(left_out))
    if outcome.not_asked:  # skip logic: a third value the model folds into "the rest"
        result.notes.append(f"{outcome.id!r} is asked only after some randomized answers "
                            "(skip logic): respondents not asked count with those who did not "
                            "answer the modelled level, so this models that level against "
                            "everyone else, not among those asked")
    return result


def _fit(x: np.ndarray, names: list[str], columns: Sequence[np.ndarray], n: int,
         dropped: int, spec: Spec, outcome: Question, mech: Mechanism,
         latent: list[LatentCovariate | IndicatorEstimates],
         latent_names: list[str], confidence: float,
         survey_weights: dict[str, Any]) -> RegressionResult:
    if outcome.unit.numeric:  # a linear model of the number
        # each report's unbiased value in the question's units (an integer's: the report) and
        # the randomization's noise variance, averaged over the reports where it depends on
        # the answer (mechanism.value_noise)
        reports = mech.pseudo_values(np.asarray(columns[0])).reshape(-1)
        noise = 0.0 if outcome.disclosed else float(np.mean(mech.value_noise(
            np.asarray(columns[0]))))
        assert outcome.min is not None and outcome.max is not None
        return fit_linear(x, names, reports, noise, outcome=spec.outcome,
                          outcome_range=float(outcome.max - outcome.min),
                          confidence=confidence, n_dropped=dropped, latent=latent,
                          latent_names=latent_names, **survey_weights)
    level, label = _level_index(outcome, spec.level)
    how, channel = outcome_channel(mech, level)
    raw = columns[0]
    if how == "index":
        symbols = np.asarray(raw, dtype=np.int64)  # B's rows are already ordered by Y
    elif how == "hit":
        symbols = (np.asarray(raw, dtype=np.int64) == level).astype(np.int64)
    else:
        bits = mech.support_bits(np.asarray(raw).reshape(n, -1))
        symbols = bits[:, level].astype(np.int64)
    index_latent = [c for c in latent if isinstance(c, LatentCovariate)]  # all (_check_spec)
    return fit_logistic(x, names, symbols, channel, outcome=spec.outcome, outcome_level=label,
                        latent=index_latent, confidence=confidence, n_dropped=dropped,
                        latent_names=latent_names, **survey_weights)
