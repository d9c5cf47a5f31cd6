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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from ldpsurvey.shared.design import DesignEstimates, PseudoValues, estimate, ratio
from ldpsurvey.shared.errors import AnalysisError, LdpSurveyError
from ldpsurvey.shared.estimates import finite_or_none, norm_sub

from .estimates import RELATIVE_NOTE, Weighted, pseudo_values

NOTE = ("design-based: {design}; variance {variance}. joint: the weighted mean of the product "
        "of the two reports' pseudo-values (unbiased for the joint share); among a row or a "
        "column: a ratio of weighted means (R's svyratio)")


VALUE_SIDE_REFUSAL = ("a design-based crosstab takes categories and bins; {qid!r} is a number "
                      "read by its mean, which is not weighted per category yet: drop the "
                      "design for its mean among each category (a plain crosstab), or use "
                      "--by with a disclosed question")


@dataclass(frozen=True)
class Side:
    """One side of the crosstab: its cells' pseudo-values over every respondent."""

    question: Any
    group: str | None
    pv: PseudoValues


def _side(w: Weighted, spec: str, bins: Sequence[int] | None) -> Side:
    """A side "QUESTION" or "QUESTION:GROUP" (a declared group against the rest); an integer
    question by its bins (module docstring)."""
    compiled = w.version.compiled
    qid, sep, group = spec.partition(":")
    if qid not in compiled.mechanisms:
        raise AnalysisError(f"survey {w.version.id!r} has no question {qid!r}",
                            {"question": qid})
    question = compiled.survey.question(qid)
    if question.unit.numeric:  # its bins
        if sep:
            raise AnalysisError(f"{spec!r}: an integer question has bins, not groups",
                                {"question": qid})
        return Side(question, None, _binned(w, question, bins))
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


def _binned(w: Weighted, question: Any, bins: Sequence[int] | None) -> PseudoValues:
    """An integer question's bins: each respondent's unbiased estimate of each bin's
    indicator (the crosstab encoder's 3-tap deconvolution of the geometric noise)."""
    from ldpsurvey.shared.joint_features import encoder_for_question

    mechanism = w.version.compiled.mechanisms[question.id]
    try:
        encoder = encoder_for_question(question, mechanism, bins)
    except LdpSurveyError as exc:
        raise AnalysisError(f"{question.id}: {exc.message}", {"question": question.id}) \
            from None
    if encoder.mean_only:  # no bins: the plain crosstab's mean per category (joint_values.py)
        raise AnalysisError(VALUE_SIDE_REFUSAL.format(qid=question.id),
                            {"question": question.id})
    present, reports = w.respondents.reports(question.id, mechanism)
    values = np.zeros((w.respondents.n, len(encoder.cells)))
    if present.any():
        values[present] = np.asarray(encoder.featurize(reports), dtype=float) \
            @ encoder.estimator.T
    pv = PseudoValues(question.id, mechanism.name, tuple(str(c) for c in encoder.cells),
                      values, np.zeros_like(values), present, "shares",
                      bool(question.disclosed))
    return _indicators(pv, pv.labels, values)


def _indicators(pv: PseudoValues, labels: tuple[str, ...], values: np.ndarray) -> PseudoValues:
    """Pseudo-values of indicators, with their randomization variance estimates X² − X (0
    for a disclosed answer, whose indicators are exact)."""
    noise = np.zeros_like(values) if pv.disclosed else values * values - values
    noise[~pv.present] = 0.0
    return replace(pv, labels=labels, values=values, noise=noise)


def _cells(result: DesignEstimates, span_check: bool = True) -> list[dict[str, Any]]:
    out = []
    for row in result.rows():
        low, high = row.ci_low, row.ci_high
        out.append({"estimate": finite_or_none(row.estimate),
                    "std_error": finite_or_none(row.std_error),
                    "ci_low": finite_or_none(low), "ci_high": finite_or_none(high),
                    "std_error_method": "design",
                    "too_noisy": bool(span_check and high - low > 1.0),
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
    return {
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


def _cell_labels(side: Side) -> list[Any]:
    if side.group is not None or side.question.unit.numeric:  # a group or bins
        return list(side.pv.labels)
    return list(side.question.labels)


def residual_noise_estimate(given: np.ndarray, other: np.ndarray,
                            r: np.ndarray) -> np.ndarray:
    """Per respondent and column b, an unbiased estimate of Var[X(W_b − r_b) | answers], the
    randomization variance of a conditional share's residual: X²(W − r)² − XW(1 − 2r) − Xr²
    (X, W pseudo-values of two independently randomized answers; module docstring)."""
    x = given[:, None]
    return x**2 * (other - r) ** 2 - x * other * (1 - 2 * r) - x * r**2


def _conditional(w: Weighted, given: np.ndarray, other: np.ndarray, both: np.ndarray,
                 disclosed: bool, variance: Any, confidence: float,
                 given_cell: dict[str, Any]) -> list[dict[str, Any]]:
    """P(other = b | given) for every b: Σ w X W_b / Σ w X over those who answered both, with
    the residual's randomization variance estimated directly (module docstring; it is 0 when
    both answers are disclosed, X and W then being their own squares)."""
    weights = w.design.weights * both
    base = float(weights @ given)
    if base == 0:
        return [{"estimate": None, "std_error": None, "ci_low": None, "ci_high": None,
                 "std_error_method": "design", "too_noisy": True, "deff": None}
                for _ in range(other.shape[1])]
    numerator = given[:, None] * other
    r = (weights @ numerator) / base
    residual_noise = residual_noise_estimate(given, other, r)
    num = PseudoValues("numerator", "product", tuple(str(b) for b in range(other.shape[1])),
                       numerator, residual_noise * both[:, None], both, "shares", disclosed)
    den = PseudoValues("denominator", "pseudo", ("given",), given[:, None],
                       np.zeros((given.size, 1)), both, "shares", disclosed)
    result = ratio(w.design, num, den, variance=variance, confidence=confidence,
                   quantile=w.options.quantile)
    low, high = given_cell["ci_low"], given_cell["ci_high"]
    unknowable = low is not None and high is not None and low <= 0 <= high
    cells = _cells(result)
    for cell in cells:
        cell["too_noisy"] = cell["too_noisy"] or unknowable
    return cells
