"""Design-based crosstabs (`ldpsurvey report --crosstab ROWS COLS` with a design): joint and
conditional shares of two questions, weighted by the respondents' design, in the crosstab
document's shape so every crosstab format renders them (docs/weights.md).

The two reports of one submission are randomized independently given the true pair, so the
product of their pseudo-values X_a·W_b is unbiased for the joint indicator [x = a][w = b]
(docs/crosstabs.md); its randomization variance has the unbiased estimate X_a²W_b² − X_aW_b
(E[X²W²] = E[X²]E[W²], and X_aW_b is unbiased for the indicator, which is its own square).
- joint share f_ab: the Hájek mean of X_a·W_b over the respondents who answered both;
- row and column shares: the Hájek means of X and W over the same respondents;
- P(b | a) = Σ w X_aW_b / Σ w X_a: a ratio (R's svyratio), linearized on the residuals
  X_a(W_b − R); numerator and denominator share X's noise, so the randomization variance of
  the residual is estimated directly: X_a²(W_b − R)² − X_aW_b(1 − 2R) − X_aR² (unbiased for
  Var[X_a(W_b − R)] given the answers, R fixed), and handed to the library's ratio as the
  numerator's, the denominator's set to 0.
A ratio whose denominator's interval includes 0, and a share whose interval is wider than
[0, 1], is "too noisy", as in today's crosstabs.

Every cell of a side is an indicator, and any per-respondent unbiased estimate of it serves:
- an option: the mechanism's pseudo-value;
- a declared group against the rest ("QUESTION:GROUP"): the sum of the group's options'
  pseudo-values, and of the others' (unbiased for any mechanism, support sets included: the
  design's variance needs no exact square of it);
- a bin of an integer question (`--bins`, or the default bins): under two-sided geometric
  noise with a = e^-rate, g(y) = [(1 + a²)h(y) − a·h(y − 1) − a·h(y + 1)]/(1 − a)² has
  E[g(x + Z)] = h(x) exactly for the bin's indicator h (shared/joint_features.py, the 3-tap
  inverse of the noise's generating function); a disclosed integer's bin is its indicator.
Each indicator's randomization variance has the unbiased estimate X² − X, and every
conditional share gets its design effect split as R's `svyratio(deff = TRUE)` computes it.

A number read by its mean (a decimal's mechanisms, an integer's duchi/piecewise/hybrid: its
crosstab encoder is `mean_only`) is a side of one cell, everyone (X = 1), carrying its
pseudo-value v (E[v | x] = x, `Mechanism.pseudo_values`):
- its mean among category c of the other side: Σ w v W_c / Σ w W_c, a ratio (R's `svyratio`
  of v·W_c over W_c), linearized as a share within a column; the residual W_c(v − R)'s
  randomization variance has the unbiased estimate W_c²(v − R)² − W_c((v − R)² − V̂_v)
  (E[W_c²(v − R)²] = E[W_c²]·E[(v − R)²] by independence, and W_c((v − R)² − V̂_v) is unbiased
  for [q = c](x − R)², V̂_v the report's noise estimate), which for an indicator v is the
  share's formula above;
- its median and quartiles among category c where the mechanism has a linear distribution
  (`Mechanism.distribution_columns`: square_wave, alone or in the pair): the CDF at each bin
  edge among c, Σ w G_t W_c / Σ w W_c (G_t each report's unbiased estimate of [x < t]), ratios
  with one denominator, so their covariance is the ratio's; the quartiles interpolate that CDF
  and their intervals invert its tests as a decimal's design-based quartiles do
  (shared/design/distribution.py). A mean mechanism's channel carries no such linear
  estimate: each category says so (shared/numeric/joint_ems.MEAN_ONLY).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from ldpsurvey.shared.design import DesignEstimates, PseudoValues, estimate, ratio
from ldpsurvey.shared.design.distribution import distribution_values, quantiles_of
from ldpsurvey.shared.errors import AnalysisError, DesignError, LdpSurveyError
from ldpsurvey.shared.estimates import finite_or_none, norm_sub
from ldpsurvey.shared.joint_values import EVERYONE
from ldpsurvey.shared.numeric.joint_ems import (
    DISCLOSED_NUMBER,
    MEAN_ONLY,
    CategoryQuantile,
    CategoryQuantiles,
    JointQuantiles,
    not_estimated,
)

from .estimates import RELATIVE_NOTE, Weighted, pseudo_values

NOTE = ("design-based: {design}; variance {variance}. joint: the weighted mean of the product "
        "of the two reports' pseudo-values (unbiased for the joint share); among a row or a "
        "column: a ratio of weighted means (R's svyratio)")


VALUE_NOTE = ("{qid} is a number: the design-based crosstab gives its mean among each "
              "category of the other question, Σ w·v·W_c / Σ w·W_c over those who answered "
              "both (v each report's pseudo-value of the number, W_c the other report's of "
              "category c; R's svyratio), not bins")
QUANTILE_NOTE = ("{qid}'s median and quartiles among each category: the design-based CDF at "
                 "its bins' edges among the category (ratios Σ w·G_t·W_c / Σ w·W_c, G_t each "
                 "report's linear estimate of the share below t), interpolated within bins, "
                 "intervals by test inversion of the CDF's design-based standard error")
TWO_NUMBERS = ("{rows!r} and {cols!r} are both numbers read by their mean: a crosstab needs "
               "categories on one side (for how one number moves with the other, regress "
               "--outcome)")


@dataclass(frozen=True)
class Side:
    """One side of the crosstab: its cells' pseudo-values over every respondent."""

    question: Any
    group: str | None
    pv: PseudoValues
    value: PseudoValues | None = None  # a number read by its mean: its pseudo-values
    answer_range: tuple[float, float] | None = None  # of that number (too-noisy rule)


def _side(w: Weighted, spec: str, bins: Sequence[int] | None) -> Side:
    """A side "QUESTION" or "QUESTION:GROUP" (a declared group against the rest); an integer
    question by its bins (module docstring)."""
    compiled = w.version.compiled
    qid, sep, group = spec.partition(":")
    if qid not in compiled.mechanisms:
        raise AnalysisError(f"survey {w.version.id!r} has no question {qid!r}",
                            {"question": qid})
    question = compiled.survey.question(qid)
    if question.unit.numeric:  # its bins, or its mean
        if sep:
            raise AnalysisError(f"{spec!r}: an integer question has bins, not groups",
                                {"question": qid})
        return _numeric(w, question, bins)
    if bins is not None:
        raise AnalysisError(f"bins apply to integer questions; {qid!r} is {question.type}",
                            {"question": qid})
    refusal = question.unit.design_crosstab_refusal(question)
    if refusal is not None:
        raise AnalysisError(refusal, {"question": qid})
    pv = pseudo_values(w, qid)
    k = question.k
    if not sep:
        return Side(question, None, replace(pv, labels=pv.labels[:k], values=pv.values[:, :k],
                                            noise=pv.noise[:, :k]))
    groups = question.group_indices() if question.groups else {}
    if group not in groups:
        offered = ", ".join(repr(g) for g in groups) or "none"
        raise AnalysisError(f"question {qid!r} has no group {group!r} (its groups: "
                            f"{offered})", {"question": qid})
    inside = np.zeros(k, dtype=bool)
    inside[list(groups[group])] = True
    values = np.column_stack([pv.values[:, :k][:, inside].sum(axis=1),
                              pv.values[:, :k][:, ~inside].sum(axis=1)])
    return Side(question, group, _indicators(pv, (group, f"not {group}"), values))


def _numeric(w: Weighted, question: Any, bins: Sequence[int] | None) -> Side:
    """A number's side: its bins (an integer question's, each respondent's unbiased estimate
    of each bin's indicator: the crosstab encoder's 3-tap deconvolution of the geometric
    noise), or, read by its mean (the encoder is `mean_only`: no per-report bin indicator),
    one cell, everyone, carrying its pseudo-values (module docstring)."""
    from ldpsurvey.shared.joint_features import encoder_for_question

    mechanism = w.version.compiled.mechanisms[question.id]
    try:
        encoder = encoder_for_question(question, mechanism, bins)
    except LdpSurveyError as exc:
        raise AnalysisError(f"{question.id}: {exc.message}", {"question": question.id}) \
            from None
    if encoder.mean_only:  # the plain crosstab's mean per category (joint_values.py), weighted
        value = pseudo_values(w, question.id)
        everyone = value.present[:, None].astype(float)
        pv = PseudoValues(question.id, mechanism.name, (EVERYONE,), everyone,
                          np.zeros_like(everyone), value.present, "shares", True)
        answers = np.asarray(encoder.answers, dtype=float)
        return Side(question, None, pv, value, (float(answers.min()), float(answers.max())))
    present, reports = w.respondents.reports(question.id, mechanism)
    values = np.zeros((w.respondents.n, len(encoder.cells)))
    if present.any():
        values[present] = np.asarray(encoder.featurize(reports), dtype=float) \
            @ encoder.estimator.T
    pv = PseudoValues(question.id, mechanism.name, tuple(str(c) for c in encoder.cells),
                      values, np.zeros_like(values), present, "shares",
                      bool(question.disclosed))
    return Side(question, None, _indicators(pv, pv.labels, values))


def _indicators(pv: PseudoValues, labels: tuple[str, ...], values: np.ndarray) -> PseudoValues:
    """Pseudo-values of indicators, with their randomization variance estimates X² − X (0
    for a disclosed answer, whose indicators are exact)."""
    noise = np.zeros_like(values) if pv.disclosed else values * values - values
    noise[~pv.present] = 0.0
    return replace(pv, labels=labels, values=values, noise=noise)


def _cells(result: DesignEstimates, span_check: bool = True, span: float = 1.0
           ) -> list[dict[str, Any]]:
    """The estimates as crosstab cells; too noisy where the interval is wider than `span`
    (a share's 1, a number's answer range)."""
    out = []
    for row in result.rows():
        low, high = row.ci_low, row.ci_high
        out.append({"estimate": finite_or_none(row.estimate),
                    "std_error": finite_or_none(row.std_error),
                    "ci_low": finite_or_none(low), "ci_high": finite_or_none(high),
                    "std_error_method": "design",
                    "too_noisy": bool(span_check and high - low > span),
                    "deff": row.deff.to_dict() if row.deff is not None else None})
    return out


def crosstab_document(w: Weighted, rows_spec: str, cols_spec: str, confidence: float,
                      row_bins: Sequence[int] | None = None,
                      col_bins: Sequence[int] | None = None) -> dict[str, Any]:
    """The design-based crosstab document of two sides, each "QUESTION" or
    "QUESTION:GROUP"; an integer question by its bins (module docstring)."""
    rows_qid, cols_qid = rows_spec.partition(":")[0], cols_spec.partition(":")[0]
    if rows_qid == cols_qid:
        raise AnalysisError("a crosstab needs two different questions")
    row_side, col_side = _side(w, rows_spec, row_bins), _side(w, cols_spec, col_bins)
    if row_side.value is not None and col_side.value is not None:
        raise AnalysisError(TWO_NUMBERS.format(rows=rows_qid, cols=cols_qid))
    x, v = row_side.pv, col_side.pv
    both = x.present & v.present
    if not both.any():
        raise AnalysisError(f"no respondent answered both {rows_qid!r} and {cols_qid!r}")
    k1, k2 = len(x.labels), len(v.labels)
    variance = w.variance()
    xs, vs = x.values, v.values
    product = (xs[:, :, None] * vs[:, None, :]).reshape(-1, k1 * k2)
    disclosed = x.disclosed and v.disclosed
    joint_pv = PseudoValues(f"{rows_qid}×{cols_qid}", "product", tuple(
        f"{a}|{b}" for a in x.labels for b in v.labels), product * both[:, None],
        (product * product - product) * both[:, None], both, "shares", disclosed)
    row_pv = replace(x, present=both)
    col_pv = replace(v, present=both)
    joint, rows_m, cols_m = estimate(w.design, [joint_pv, row_pv, col_pv], variance=variance,
                                     confidence=confidence, quantile=w.options.quantile)
    joint_cells = _cells(joint)
    row_cells, col_cells = _cells(rows_m), _cells(cols_m)
    col_given_row = [_conditional(w, xs[:, a], vs, both, disclosed, variance, confidence,
                                  row_cells[a]) for a in range(k1)]
    row_given_col_t = [_conditional(w, vs[:, b], xs, both, disclosed, variance, confidence,
                                    col_cells[b]) for b in range(k2)]
    consistent = norm_sub(np.array([c["estimate"] for c in joint_cells])).reshape(k1, k2)
    d = w.describe()
    sides = {}
    for name, side, qid in (("rows", row_side, rows_qid), ("cols", col_side, cols_qid)):
        sides[name] = {"question": qid, "mechanism": w.version.compiled.mechanisms[qid].name,
                       "cells": _cell_labels(side)}
        if side.group is not None:
            sides[name]["group"] = side.group
    doc: dict[str, Any] = {
        "survey": w.version.id, "version": w.version.version, **sides,
        "n": int(both.sum()), "confidence": confidence, "source": "design",
        "joint": [joint_cells[a * k2:(a + 1) * k2] for a in range(k1)],
        "consistent": consistent.tolist(),
        "row_shares": row_cells, "col_shares": col_cells,
        "col_given_row": col_given_row,
        "row_given_col": [[row_given_col_t[b][a] for b in range(k2)] for a in range(k1)],
        "notes": [NOTE.format(design=d["description"], variance=d["variance_description"])
                  + ("" if w.totals_refusal is None else RELATIVE_NOTE)],
        "design": d,
    }
    for number, other, other_cells, key in ((row_side, col_side, col_cells,
                                             "rows_mean_given_col"),
                                            (col_side, row_side, row_cells,
                                             "cols_mean_given_row")):
        if number.value is not None:
            doc[key], quantiles = _number_given(w, number, other, other_cells, both,
                                                variance, confidence)
            doc["quantiles_given_category"] = quantiles.to_dict()
            doc["notes"].append(VALUE_NOTE.format(qid=number.question.id))
            if quantiles.estimated:
                doc["notes"].append(QUANTILE_NOTE.format(qid=number.question.id))
    return doc


def _number_given(w: Weighted, number: Side, other: Side, other_cells: list[dict[str, Any]],
                  both: np.ndarray, variance: Any, confidence: float
                  ) -> tuple[list[dict[str, Any]], JointQuantiles]:
    """A number's mean among each category of the other side, and its quartiles there where
    its mechanism has a linear distribution, else each category's note (module docstring)."""
    assert number.value is not None and number.answer_range is not None
    value = number.value
    disclosed = value.disclosed and other.pv.disclosed
    low, high = number.answer_range
    means = []
    for c in range(len(other.pv.labels)):
        [cell] = _conditional(w, other.pv.values[:, c], value.values, both, disclosed,
                              variance, confidence, other_cells[c], other_noise=value.noise,
                              span=high - low)
        means.append(cell)
    qid, by = number.question.id, other.question.id
    categories = _cell_labels(other)
    mechanism = w.version.compiled.mechanisms[qid]
    present, reports = w.respondents.reports(qid, mechanism)
    try:
        found = distribution_values(mechanism, reports, present)
    except DesignError as exc:
        return means, not_estimated(qid, by, categories, int(both.sum()), confidence,
                                    f"not estimated by a design-based report: {exc.message}")
    if found is None:
        reason = DISCLOSED_NUMBER if number.question.disclosed else MEAN_ONLY
        return means, not_estimated(qid, by, categories, int(both.sum()), confidence, reason)
    cdf, columns = found
    result = JointQuantiles(qid, by, int(both.sum()), confidence, 0, [],
                            note=QUANTILE_NOTE.format(qid=qid), method="design")
    for c, category in enumerate(categories):
        given = _conditional_estimates(w, other.pv.values[:, c], cdf.values, both,
                                       disclosed, variance, confidence)
        share = other_cells[c]["estimate"]
        found_quantiles = None if given is None else quantiles_of(columns, given)
        if found_quantiles is None:
            entry = CategoryQuantiles(category, share, [
                CategoryQuantile(p, None, None, None, None) for p in (0.25, 0.5, 0.75)])
        else:
            entry = CategoryQuantiles(category, share, [
                CategoryQuantile(q.p, q.estimate, q.std_error, q.ci_low, q.ci_high)
                for q in found_quantiles])
        if given is not None:
            nbins = len(columns.bins)
            rows = given.rows()[nbins:]
            entry.cdf = [{"label": label, "point": float(point),
                          **{k: finite_or_none(getattr(row, k))
                             for k in ("estimate", "std_error", "ci_low", "ci_high")}}
                         for label, point, row in zip(columns.cdf, columns.points, rows,
                                                      strict=True)]
        result.categories.append(entry)
    return means, result


def _cell_labels(side: Side) -> list[Any]:
    if side.group is not None or side.question.unit.numeric:  # a group, bins or everyone
        return list(side.pv.labels)
    return list(side.question.labels)


def residual_noise_estimate(given: np.ndarray, other: np.ndarray, r: np.ndarray,
                            other_noise: np.ndarray | None = None) -> np.ndarray:
    """Per respondent and column b, an unbiased estimate of Var[X(W_b − r_b) | answers], the
    randomization variance of a conditional share's residual: X²(W − r)² − XW(1 − 2r) − Xr²
    (X, W pseudo-values of two independently randomized answers; module docstring); for a
    number's pseudo-value W with noise estimate V̂ (`other_noise`),
    X²(W − r)² − X((W − r)² − V̂)."""
    x = given[:, None]
    if other_noise is not None:
        spread = (other - r) ** 2
        return x**2 * spread - x * (spread - other_noise)
    return x**2 * (other - r) ** 2 - x * other * (1 - 2 * r) - x * r**2


def _conditional_estimates(w: Weighted, given: np.ndarray, other: np.ndarray,
                           both: np.ndarray, disclosed: bool, variance: Any, confidence: float,
                           other_noise: np.ndarray | None = None) -> DesignEstimates | None:
    """Σ w X W_b / Σ w X for every column b over those who answered both, with the residual's
    randomization variance estimated directly (module docstring; it is 0 when both answers
    are disclosed, X and W then being their own squares); `other_noise`: W is a number's
    pseudo-value with these noise estimates, not an indicator's. None when Σ w X is 0."""
    weights = w.design.weights * both
    base = float(weights @ given)
    if base == 0:
        return None
    numerator = given[:, None] * other
    r = (weights @ numerator) / base
    residual_noise = residual_noise_estimate(given, other, r, other_noise)
    num = PseudoValues("numerator", "product", tuple(str(b) for b in range(other.shape[1])),
                       numerator, residual_noise * both[:, None], both, "shares", disclosed)
    den = PseudoValues("denominator", "pseudo", ("given",), given[:, None],
                       np.zeros((given.size, 1)), both, "shares", disclosed)
    return ratio(w.design, num, den, variance=variance, confidence=confidence,
                 quantile=w.options.quantile)


def _conditional(w: Weighted, given: np.ndarray, other: np.ndarray, both: np.ndarray,
                 disclosed: bool, variance: Any, confidence: float,
                 given_cell: dict[str, Any], other_noise: np.ndarray | None = None,
                 span: float = 1.0) -> list[dict[str, Any]]:
    """P(other = b | given) for every b (or a number's mean given X: `other_noise`, and
    `span` its answer range, the widest an informative interval is), as cells; too noisy
    where the given cell's interval includes 0."""
    result = _conditional_estimates(w, given, other, both, disclosed, variance, confidence,
                                    other_noise)
    if result is None:
        return [{"estimate": None, "std_error": None, "ci_low": None, "ci_high": None,
                 "std_error_method": "design", "too_noisy": True, "deff": None}
                for _ in range(other.shape[1])]
    low, high = given_cell["ci_low"], given_cell["ci_high"]
    unknowable = low is not None and high is not None and low <= 0 <= high
    cells = _cells(result, span=span)
    for cell in cells:
        cell["too_noisy"] = cell["too_noisy"] or unknowable
    return cells
