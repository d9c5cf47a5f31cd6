"""Design-based estimate documents (`ldpsurvey report` with a design): every question of a survey
version weighted by the respondents' design, optionally calibrated, with its variance and the
design effect split into sampling and privacy (docs/weights.md, docs/design-based.md).

The document has the shape of the server's estimate document (GET .../estimates), so every
report format renders it, plus:
- `design`: where the design came from, what it is (strata, PSUs, weights, calibration), the
  variance method and the lonely-PSU rule;
- per estimate `deff`: {sampling, privacy, total, effective_n} (None where not estimable);
- per question `population`: the estimated population size Σ w of those who answered;
- per option, group, integer mean, share not asked and row among those asked `total`: its
  Horvitz-Thompson total {estimate, std_error, ci_low, ci_high} (the estimated number of
  people giving it, the total of an integer; None for a mean score, or when the weights are
  not scaled to a population: `design.totals` False and `design.totals_note` says why).
Worst-case variance bounds are left out (None): they bound a simple random sample's variance.

The numbers come from the design library (shared/design/): pseudo-values of each question,
Hájek means with linearized or replicate variances, calibration on disclosed questions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from ldpsurvey.shared.among_asked import NOTE as ASKED_NOTE
from ldpsurvey.shared.among_asked import special_note
from ldpsurvey.shared.design import (
    Design,
    DesignEstimates,
    PseudoValues,
    build_replicates,
    estimate,
    totals_refusal,
)
from ldpsurvey.shared.design import pseudo_values as question_pseudo_values
from ldpsurvey.shared.design.among_asked import (
    AmongAsked,
    among_asked,
    asked_mean,
    asked_pairs,
    asked_value,
)
from ldpsurvey.shared.design.distribution import NOTE as DISTRIBUTION_NOTE
from ldpsurvey.shared.design.distribution import distribution_values, monotone, quantiles_of
from ldpsurvey.shared.design.estimators import (
    QUANTILES,
    DesignEstimate,
    degrees_of_freedom,
    means_and_totals,
)
from ldpsurvey.shared.design_frame import LONELY_PSU, read_frame
from ldpsurvey.shared.errors import AnalysisError, DesignError
from ldpsurvey.shared.estimand import MEAN_SCORE, MEAN_SELECTED, Estimand, estimand
from ldpsurvey.shared.estimates import finite_or_none
from ldpsurvey.shared.question_types.base import (
    OPTIONS_SUM,
    SCORES,
    extra_values,
    special_labels,
)
from ldpsurvey.shared.skip_logic import NOT_ASKED

from ..margins import Calibration, calibrated
from .data import (
    DesignSource,
    JoinedDesign,
    Respondents,
    SurveyVersion,
    equal_weights,
    join_frame,
    join_invitations,
    refuse_two_server,
)

VARIANCES = ("linearized", "jk1", "jkn", "bootstrap", "groups")
LINEARIZED = "linearized (ultimate cluster, with replacement; Taylor series)"
LINEARIZED_FPC = ("linearized (ultimate cluster; Taylor series; the finite population "
                  "correction applied to each stratum's PSUs)")
TOTALS_NOTE = ("Horvitz-Thompson estimates of population counts (the number of people "
               "giving each answer) and of an integer's population total, over those who "
               "answered")
NOTE = ("design-based: the respondents weighted by their sampling design; 'deff' is the "
        "variance over that of a simple random sample of as many true answers, split into "
        "sampling (the design) × privacy (the randomization)")
# relative weights (estimators.totals_refusal): the SRS baseline takes no (1 − n/N̂)
RELATIVE_NOTE = ("; the weights are relative (not scaled to a population), so that simple "
                 "random sample is taken with replacement, without the finite-population "
                 "factor 1 − n/N̂ (R's deff = \"replace\"): with N̂ = Σw about n that factor "
                 "would be about 0 and the deff would explode")


@dataclass(frozen=True)
class DesignOptions:
    """How to weight: the design's source (invitation codes, or `frame` joined by `key`), an
    optional calibration, the variance method and the single-PSU rule."""

    frame: Path | None = None
    key: str | None = None
    calibration: Calibration | None = None
    variance: str = "linearized"
    lonely_psu: str = "fail"
    replicates: int = 80  # bootstrap replicates
    weighted: bool = False  # --weighted given (a two-server report weights its cells only then)
    quantile: str = "t"  # intervals: t with the design's df (R's degf), or "normal"

    def __post_init__(self) -> None:
        if self.variance not in VARIANCES:
            raise AnalysisError(f"variance must be one of {', '.join(VARIANCES)}")
        if self.lonely_psu not in LONELY_PSU:
            raise AnalysisError(f"lonely-psu must be one of {', '.join(LONELY_PSU)}")
        if (self.frame is None) != (self.key is None):
            raise AnalysisError("--frame FILE and --key QUESTION go together")
        if self.quantile not in QUANTILES:
            raise AnalysisError(f"interval quantile must be one of {', '.join(QUANTILES)}")


class RowNames(Sequence[str]):
    """"submission <id>" for the design's error messages, made only for the row named."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids = ids

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: Any) -> Any:
        return f"submission {self.ids[i]}"


@dataclass(frozen=True)
class Weighted:
    """A survey version's respondents with their (calibrated) design, ready to estimate."""

    version: SurveyVersion
    respondents: Respondents
    design: Design
    joined: JoinedDesign
    options: DesignOptions

    def variance(self) -> Any:
        """"linearized", or the replicate weights (built once)."""
        return self._replicates

    @cached_property
    def _replicates(self) -> Any:
        if self.options.variance == "linearized":
            return "linearized"
        return build_replicates(self.design, self.options.variance,
                                replicates=self.options.replicates)

    def variance_description(self) -> str:
        variance = self.variance()
        if isinstance(variance, str):
            return LINEARIZED_FPC if self.design.has_fpc else LINEARIZED
        return variance.describe()

    def degrees_of_freedom(self) -> int:
        """The design's degrees of freedom (R's `degf`, estimators.degrees_of_freedom)."""
        return degrees_of_freedom(self.design, self.variance())

    @cached_property
    def totals_refusal(self) -> str | None:
        """Why this design's weights give no population totals (None: they do;
        shared/design/estimators.py `totals_refusal`)."""
        return totals_refusal(self.design)

    def totals_block(self) -> dict[str, Any]:
        """What the estimate documents' `design` block adds: whether totals are given and why
        (not)."""
        refusal = self.totals_refusal
        return {"totals": refusal is None,
                "totals_note": TOTALS_NOTE if refusal is None else f"not given: {refusal}"}

    def describe(self) -> dict[str, Any]:
        """The document's `design` block."""
        d = self.design
        note = NOTE if self.totals_refusal is None else NOTE + RELATIVE_NOTE
        return {"source": self.joined.source, "description": d.describe(), "note": note,
                "respondents": d.n, "strata": d.stratum_count, "psus": d.psu_count,
                "population": finite_or_none(float(d.weights.sum())),
                "fpc": d.has_fpc, "lonely_psu": d.lonely_psu,
                "calibration": [step.describe() for step in d.calibration],
                "variance": self.options.variance,
                "variance_description": self.variance_description(),
                "df": self.degrees_of_freedom(), "interval_quantile": self.options.quantile}


def weighted(source: DesignSource, options: DesignOptions,
             progress: Callable[[str], None] | None = None) -> Weighted:
    """Read a survey version's submissions and designs, join, build and calibrate the design."""
    say = progress or (lambda _: None)
    version = source.version()
    refuse_two_server(version)
    if options.variance == "groups":
        raise AnalysisError("--variance groups is the delete-a-group jackknife of a two-server "
                            "survey's batches (report --batch all); an LDP survey has every "
                            "respondent's report: use --variance jk1, jkn or bootstrap")
    frame = read_frame(options.frame, allow_lonely_psu=True) if options.frame else None
    say(f"reading the submissions of {version.id} v{version.version}...")
    # the designs joined by the database, read with the reports in one pass when it can
    joined_read = getattr(source, "respondents_joined", None) if frame is None else None
    respondents, found = joined_read() if joined_read is not None else (source.respondents(),
                                                                          None)
    if respondents.n == 0:
        raise AnalysisError(f"survey {version.id!r} version {version.version} has no "
                            "submissions yet: nothing to weight")
    if frame is not None:
        assert options.key is not None
        joined = join_frame(respondents, version, frame, options.key)
    else:
        if found is not None:
            joined = found
        else:
            designs = source.invite_designs()
            joined = (equal_weights(respondents) if not designs and options.calibration
                      else join_invitations(respondents, designs))
    design = Design.build(joined.weights, joined.strata, joined.psus, joined.fpc,
                          lonely_psu=options.lonely_psu, row_names=RowNames(respondents.ids))
    if options.calibration is not None:
        say(f"calibrating: {options.calibration.describe()}...")
        design = calibrated(design, options.calibration, version, respondents)
    return Weighted(version, respondents, design, joined, options)


def pseudo_values(w: Weighted, qid: str) -> PseudoValues:
    """A question's pseudo-values over every respondent, with a column per declared group
    (the sum of its options' indicators; its randomization variance estimate g² − g)."""
    question = w.version.compiled.survey.question(qid)
    mechanism = w.version.compiled.mechanisms[qid]
    present, reports = w.respondents.reports(qid, mechanism)
    pv = question_pseudo_values(question, mechanism, reports, present)
    groups = getattr(mechanism, "groups", {}) if pv.kind == "shares" else {}
    if not groups:
        return pv
    sums = np.column_stack([pv.values[:, list(m)].sum(axis=1) for m in groups.values()])
    noise = np.zeros_like(sums) if pv.disclosed else sums * sums - sums
    noise[~pv.present] = 0.0
    return replace(pv, labels=(*pv.labels, *groups), values=np.hstack([pv.values, sums]),
                   noise=np.hstack([pv.noise, noise]), kind="shares")


def question_documents(w: Weighted, confidence: float, domain: np.ndarray | None = None,
                       variance: Any = None) -> list[dict[str, Any]]:
    """Per question, its design-based estimate in the estimate document's shape. A question
    with no answer in the domain, or whose mechanism has no pseudo-values, gets a note."""
    variance = w.variance() if variance is None else variance
    survey = w.version.compiled.survey
    usable: list[tuple[Any, PseudoValues]] = []
    skipped: dict[str, str] = {}
    hidden: dict[str, dict[str, Any]] = {}
    for question in survey.questions:
        if question.extended and question.unit.numeric:  # sent as pairs: answered, a number
            try:
                hidden[question.id] = _asked_integer_document(w, question, domain, variance,
                                                              confidence)
            except DesignError as exc:
                skipped[question.id] = exc.message
            continue
        try:
            pv = pseudo_values(w, question.id)
        except DesignError as exc:
            skipped[question.id] = exc.message
            continue
        answered = pv.present if domain is None else pv.present & domain
        if not answered.any():
            skipped[question.id] = "no respondent answered it" + (
                "" if domain is None else " in this subgroup")
            continue
        usable.append((question, pv))
    values = [pv for _, pv in usable]
    options = {"domain": domain, "variance": variance, "confidence": confidence,
               "quantile": w.options.quantile}
    results: list[DesignEstimates] = []
    totals: list[DesignEstimates | None] = [None] * len(usable)
    if usable and w.totals_refusal is None:  # one pass over the rows for both
        results, found = means_and_totals(w.design, values, **options)
        totals = list(found)
    elif usable:
        results = estimate(w.design, values, **options)
    found = {q.id: _question_document(w, q, pv, r, _asked(w, q, pv, domain, variance,
                                                            confidence), t)
             for (q, pv), r, t in zip(usable, results, totals, strict=True)}
    for question, pv in usable:
        if pv.kind == "mean" and not pv.disclosed:
            extra = _distribution(w, question, domain, variance, confidence)
            found[question.id]["notes"] += extra.pop("notes", [])
            found[question.id].update(extra)
    found.update(hidden)
    return [found.get(q.id) or _empty_document(w, q, skipped[q.id], confidence)
            for q in survey.questions]


def _asked_integer_document(w: Weighted, question: Any, domain: np.ndarray | None,
                            variance: Any, confidence: float) -> dict[str, Any]:
    """A number sent as pairs (skip logic, special values; an integer's asked_geometric, a
    hidden decimal's asked_grid): each special value's share, the share not asked and the mean
    among those who answered (shared/design/among_asked.py `asked_mean`, from the mechanism's
    `asked_number`)."""
    mechanism = w.version.compiled.mechanisms[question.id]
    present, reports = w.respondents.reports(question.id, mechanism)
    if (domain is not None and not (present & domain).any()) or not present.any():
        return _empty_document(w, question, "no respondent answered it", confidence)
    result = asked_mean(w.design, mechanism, reports, present, domain=domain,
                        variance=variance, confidence=confidence,
                        quantile=w.options.quantile)
    assert result.extras is not None
    shares = result.extras.rows()
    special = special_labels(question)
    # the plain report's notes: the mechanism's (AskedNumber.note), and the special values'
    notes = [*([result.method] if result.method else []),
             *([special_note(special)] if special else [])]
    doc: dict[str, Any] = {
        "question": question.id, "mechanism": mechanism.name,
        "epsilon": float(question.epsilon), "n": result.extras.n,
        "population": finite_or_none(result.extras.population),
        "confidence": result.extras.confidence,
        "consistent_method": estimand(question, mechanism).method,
        "notes": [*notes, *([result.note] if result.note else [])]}
    rows = {label: _value(label, row, min(max(row.estimate, 0.0), 1.0))
            for label, row in zip(extra_values(question), shares, strict=True)}
    if special:
        doc["special"] = [rows[label] for label in special]
    if question.not_asked:
        doc["not_asked"] = rows[NOT_ASKED]
    doc["among_asked"] = {"mean": _mean(result.mean.rows()[0]) if result.mean is not None
                          else _numbers(None)}
    # totals: the number of each extra value, the total of the answers over those who answered
    extra_totals, asked_total = None, None
    if w.totals_refusal is None:
        pairs = asked_pairs(mechanism, reports, present)
        extra_totals, asked_total = estimate(
            w.design, [pairs.extras, asked_value(pairs)], statistic="total", domain=domain,
            variance=variance, confidence=confidence, quantile=w.options.quantile)
    for j, label in enumerate(extra_values(question)):
        rows[label]["total"] = _total(None if extra_totals is None else extra_totals.rows(), j)
    doc["among_asked"]["mean"]["total"] = _total(None if asked_total is None
                                                 else asked_total.rows(), 0)
    return doc


def _distribution(w: Weighted, question: Any, domain: np.ndarray | None, variance: Any,
                  confidence: float) -> dict[str, Any]:
    """A number's design-based `distribution` (its bins' shares, each with its total),
    `cdf` (the share below each bin edge) and `quantiles` (median, quartiles), where its
    mechanism's reports have linear pseudo-values for them (shared/design/distribution.py);
    empty where they have none. The notes it adds say how."""
    mechanism = w.version.compiled.mechanisms[question.id]
    present, reports = w.respondents.reports(question.id, mechanism)
    try:
        found = distribution_values(mechanism, reports, present)
    except DesignError as exc:
        return {"notes": [f"distribution: not estimated by a design-based report: "
                          f"{exc.message}"]}
    if found is None:
        return {}
    pv, columns = found
    options = {"domain": domain, "variance": variance, "confidence": confidence,
               "quantile": w.options.quantile}
    totals = None
    if w.totals_refusal is None:
        [result], [totals] = means_and_totals(w.design, [pv], **options)
    else:
        [result] = estimate(w.design, [pv], **options)
    rows = result.rows()
    total_rows = totals.rows() if totals is not None else None
    nbins = len(columns.bins)
    # consistent: the bins' shares of the monotone CDF (never negative)
    shares = np.diff(np.concatenate([[0.0], monotone(result.estimates[nbins:])]))
    doc: dict[str, Any] = {"notes": [DISTRIBUTION_NOTE],
        "distribution": [{**_value(label, rows[i], float(shares[i + 1])),
                          "total": _total(total_rows, i)}
                         for i, label in enumerate(columns.bins)],
        "cdf": [{**_value(label, rows[nbins + i], None), "point": float(point),
                 "total": _total(total_rows, nbins + i)}
                for i, (label, point) in enumerate(zip(columns.cdf, columns.points,
                                                       strict=True))]}
    found_quantiles = quantiles_of(columns, result)
    if found_quantiles is not None:
        doc["quantiles"] = [
            {"value": q.label, "estimate": finite_or_none(q.estimate),
             "std_error": finite_or_none(q.std_error), "ci_low": finite_or_none(q.ci_low),
             "ci_high": finite_or_none(q.ci_high), "variance_bound": None, "deff": None,
             "consistent": None} for q in found_quantiles]
    return doc


def _asked(w: Weighted, question: Any, pv: PseudoValues, domain: np.ndarray | None,
           variance: Any, confidence: float) -> AmongAsked | None:
    """A hidden question's shares among those asked (shared/design/among_asked.py), with the
    extra row its estimand has there: the mean score, or the mean number selected (the sum of
    the options, a column like a group's)."""
    if not question.extended or pv.kind != "shares":
        return None
    mechanism = w.version.compiled.mechanisms[question.id]
    meaning = estimand(question, mechanism)
    extra = len(extra_values(question))  # special values, "not asked"
    k = len(question.labels) - extra
    groups = dict(getattr(mechanism, "groups", {}) or {})
    how = question.unit.design_mean  # the extra row among those asked, as its unit makes it
    if how == OPTIONS_SUM:
        groups[meaning.asked_mean] = tuple(range(k))
    return among_asked(w.design, pv, k, groups, ordinal=how == SCORES,
                       domain=domain, variance=variance, confidence=confidence,
                       quantile=w.options.quantile, extra=extra)


def _question_document(w: Weighted, question: Any, pv: PseudoValues,
                       result: DesignEstimates, asked: AmongAsked | None = None,
                       totals: DesignEstimates | None = None) -> dict[str, Any]:
    """A question's document; `totals` (the same columns' Horvitz-Thompson totals, None
    when the weights give none) fill each row's `total`. What its rows mean (consistency
    rule, extra row, notes) is its estimand's (shared/estimand.py), as in the plain report."""
    mechanism = w.version.compiled.mechanisms[question.id]
    meaning = estimand(question, mechanism)
    rows = result.rows()
    total_rows = totals.rows() if totals is not None else None
    doc: dict[str, Any] = {
        "question": question.id, "mechanism": mechanism.name,
        "epsilon": 0.0 if question.disclosed else float(question.epsilon),
        "n": result.n, "population": finite_or_none(result.population),
        "confidence": result.confidence, "consistent_method": meaning.method,
        "notes": meaning.with_notes([*result.notes, *question.unit.design_omissions(question)])}
    if pv.kind == "mean":
        doc["mean"] = {**_mean(rows[0]), "total": _total(total_rows, 0)}
        return doc
    k = question.k
    shares = np.array([r.estimate for r in rows[:k]])
    consistent = meaning.consistent(shares, mechanism)
    doc["categories"] = [{**_value(question.labels[i], rows[i], float(consistent[i])),
                          "total": _total(total_rows, i)} for i in range(k)]
    scored = pv.labels[k:k + 1] == (MEAN_SCORE,)  # pseudo.py: the mean score follows the options
    first_group = k + 1 if scored else k
    groups = getattr(mechanism, "groups", {})
    doc["groups"] = [
        {"name": name, "options": [question.labels[i] for i in members],
         **_numbers(rows[first_group + g]), "consistent": float(consistent[list(members)].sum()),
         "total": _total(total_rows, first_group + g)}
        for g, (name, members) in enumerate(groups.items())]
    if asked is not None:  # skip logic: the share not asked, then the rest among those asked
        if question.not_asked:
            doc["not_asked"] = doc["categories"][-1]
        special = special_labels(question)
        if special:  # special values: each one's share; the rest among those who answered
            first = len(asked.options)
            doc["special"] = doc["categories"][first:first + len(special)]
        doc["among_asked"] = _among_asked_document(meaning, question, asked)
        # the number who gave an option (or a group's) among those asked is its number in
        # the population: an answer that is an option was asked; a mean score has no total
        for c, row in zip(doc["among_asked"]["categories"], doc["categories"], strict=False):
            c["total"] = row["total"]
        for g, row in zip(doc["among_asked"]["groups"], doc["groups"], strict=False):
            g["total"] = row["total"]
        if "mean" in doc["among_asked"]:
            doc["among_asked"]["mean"]["total"] = None
        doc["notes"].append(ASKED_NOTE)
        if asked.note:
            doc["notes"].append(asked.note)
        if question.unit.design_mean == OPTIONS_SUM and w.design.has_fpc:
            doc["notes"].append(SUM_FPC_NOTE)
        return doc  # an overall mean would count "not asked" as an option
    how = question.unit.design_mean if meaning.mean else None  # the extra row, as its unit
    if how == SCORES:
        doc["mean"] = {**_mean(rows[k]), "total": None}  # a total of scores counts nothing
    elif how == OPTIONS_SUM:  # its total: the selections made in the population
        doc["mean"] = {**_mean(_sum_row(result, k)),
                       "total": _total(None if totals is None else [_sum_row(totals, k)], 0)}
        if w.design.has_fpc:
            doc["notes"].append(SUM_FPC_NOTE)
    return doc


SUM_FPC_NOTE = ("mean number selected: the sum of the options' shares, its variance theirs "
                "and their covariances; with an fpc the randomization noise added back is "
                "each option's own (exact where the options are randomized independently, "
                "option_rr)")


def _sum_row(result: DesignEstimates, k: int) -> DesignEstimate:
    """The sum of the first k estimates (the mean number selected of a multiselect
    question, or its total): Σ estimates, variance 1ᵀ·C·1 of their covariance; no design
    effect split."""
    estimate_ = float(result.estimates[:k].sum())
    se = float(max(result.covariance[:k, :k].sum(), 0.0)) ** 0.5
    z = result.quantile_value()  # the same t (or normal) multiplier as the options' rows
    return DesignEstimate(MEAN_SELECTED, estimate_, se, estimate_ - z * se, estimate_ + z * se)


def _among_asked_document(meaning: Estimand, question: Any, asked: AmongAsked
                          ) -> dict[str, Any]:
    """The estimate document's `among_asked` (shared/estimates.py AmongAsked's shape)."""
    k = len(asked.options)
    values = question.labels[:k]
    if asked.estimates is None:
        empty = {"estimate": None, "std_error": None, "ci_low": None, "ci_high": None,
                 "variance_bound": None, "deff": None, "consistent": None}
        return {"categories": [{"value": v, **empty} for v in values], "groups": [],
                **({"mean": _numbers(None)} if meaning.asked_mean else {})}
    rows = asked.estimates.rows()
    ratios = np.array([r.estimate for r in rows[:k]])
    consistent = meaning.asked_consistent(ratios)
    sums = question.unit.design_mean == OPTIONS_SUM  # the sum is a column like a group's
    named = [(g, (name, members)) for g, (name, members) in enumerate(asked.groups)
             if not (sums and name == meaning.asked_mean)]
    doc: dict[str, Any] = {
        "categories": [_value(values[i], rows[i], float(consistent[i])) for i in range(k)],
        "groups": [{"name": name, "options": [values[i] for i in members],
                    **_numbers(rows[k + g]),
                    "consistent": float(consistent[list(members)].sum())}
                   for g, (name, members) in named]}
    if asked.mean_score:
        doc["mean"] = _mean(rows[-1])
    elif sums:
        sum_row = rows[k + len(asked.groups) - 1]
        doc["mean"] = {**_numbers(sum_row), "deff": None}  # its noise term is not one-hot's
    return doc


def _empty_document(w: Weighted, question: Any, why: str, confidence: float) -> dict[str, Any]:
    mechanism = w.version.compiled.mechanisms[question.id]
    return {"question": question.id, "mechanism": mechanism.name,
            "epsilon": 0.0 if question.disclosed else float(question.epsilon), "n": 0,
            "population": None, "confidence": confidence,
            "consistent_method": estimand(question, mechanism).method,
            "notes": [f"no design-based estimate: {why}"]}


def _numbers(row: Any) -> dict[str, Any]:
    if row is None:
        return {"estimate": None, "std_error": None, "ci_low": None, "ci_high": None,
                "variance_bound": None, "deff": None}
    return {"estimate": finite_or_none(row.estimate), "std_error": finite_or_none(row.std_error),
            "ci_low": finite_or_none(row.ci_low), "ci_high": finite_or_none(row.ci_high),
            "variance_bound": None,
            "deff": row.deff.to_dict() if row.deff is not None else None}


def _total(rows: Sequence[Any] | None, column: int) -> dict[str, Any] | None:
    """Row `column`'s Horvitz-Thompson total of `rows` (DesignEstimates.rows() of the totals;
    None: the weights give no totals)."""
    if rows is None:
        return None
    row = rows[column]
    return {"estimate": finite_or_none(row.estimate),
            "std_error": finite_or_none(row.std_error),
            "ci_low": finite_or_none(row.ci_low), "ci_high": finite_or_none(row.ci_high)}


def _value(value: Any, row: Any, consistent: float) -> dict[str, Any]:
    return {"value": value, **_numbers(row), "consistent": consistent}


def _mean(row: Any) -> dict[str, Any]:
    return _numbers(row)


def estimate_document(w: Weighted, confidence: float,
                      unweighted: dict[str, Any]) -> dict[str, Any]:
    """The design-based estimate document of the whole survey version; `unweighted` is
    today's document of the same version (its counters are reused)."""
    return {"survey": w.version.id, "version": w.version.version, "sha256": w.version.sha256,
            "confidence": confidence, "n_submissions": w.respondents.n,
            "last_submission_hour": unweighted.get("last_submission_hour"),
            "design": {**w.describe(), **w.totals_block()},
            "questions": question_documents(w, confidence)}


def subgroup_document(w: Weighted, by: str, confidence: float,
                      bins: Sequence[int] | None) -> dict[str, Any]:
    """Per subgroup of the disclosed question `by`, every randomized question's design-based
    estimate within it (a domain estimate on the whole design, as R's `subset`)."""
    from ldpsurvey.server.subgroups import grouping, grouping_question

    compiled = w.version.compiled
    question = grouping_question(compiled, by)
    labels, group_of = grouping(question, compiled.mechanisms[by], bins)
    present, reports = w.respondents.reports(by, compiled.mechanisms[by])
    codes = np.full(w.respondents.n, -1, dtype=np.int64)
    codes[present] = [group_of(r) for r in reports.tolist()]
    variance = w.variance()
    randomized = {q.id for q in compiled.survey.questions if not q.disclosed}
    parts = []
    for g, label in enumerate(labels):
        domain = codes == g
        docs = [d for d in question_documents(w, confidence, domain, variance)
                if d["question"] in randomized]
        parts.append({"value": label, "n": int(domain.sum()),
                      "population": finite_or_none(float(w.design.weights[domain].sum())),
                      "questions": docs})
    return {"survey": w.version.id, "version": w.version.version, "sha256": w.version.sha256,
            "confidence": confidence, "by": by, "n_submissions": w.respondents.n,
            "design": {**w.describe(), **w.totals_block()}, "subgroups": parts}
