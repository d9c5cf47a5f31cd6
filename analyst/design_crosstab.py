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
[0, 1], is "too noisy", as in today's crosstabs. Integer questions and declared groups are
not offered (an integer answer's bins have no per-respondent unbiased estimate under
geometric noise): refused with the reason.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..shared.design import DesignEstimates, PseudoValues, estimate, ratio
from ..shared.errors import AnalysisError
from ..shared.estimates import finite_or_none, norm_sub
from .design_estimates import Weighted, pseudo_values

NOTE = ("design-based: {design}; variance {variance}. joint: the weighted mean of the product "
        "of the two reports' pseudo-values (unbiased for the joint share); among a row or a "
        "column: a ratio of weighted means (R's svyratio)")


def _side(w: Weighted, qid: str) -> tuple[Any, PseudoValues]:
    compiled = w.version.compiled
    if qid not in compiled.mechanisms:
        raise AnalysisError(f"survey {w.version.id!r} has no question {qid!r}",
                            {"question": qid})
    question = compiled.survey.question(qid)
    if question.type not in ("binary", "categorical", "ordinal"):
        raise AnalysisError(f"design-based crosstabs take yes/no, categorical and ordinal "
                            f"questions; {qid!r} is {question.type} (for an integer answer "
                            "use --by on a disclosed question, or regress)", {"question": qid})
    pv = pseudo_values(w, qid)
    k = question.k
    return question, replace(pv, labels=pv.labels[:k], values=pv.values[:, :k],
                             noise=pv.noise[:, :k])


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


def crosstab_document(w: Weighted, rows_qid: str, cols_qid: str,
                      confidence: float) -> dict[str, Any]:
    """The design-based crosstab document of two questions (module docstring)."""
    if rows_qid == cols_qid:
        raise AnalysisError("a crosstab needs two different questions")
    rq, x = _side(w, rows_qid)
    cq, v = _side(w, cols_qid)
    both = x.present & v.present
    if not both.any():
        raise AnalysisError(f"no respondent answered both {rows_qid!r} and {cols_qid!r}")
    k1, k2 = rq.k, cq.k
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
                                     confidence=confidence)
    joint_cells = _cells(joint)
    row_cells, col_cells = _cells(rows_m), _cells(cols_m)
    col_given_row = [_conditional(w, xs[:, a], vs, both, disclosed, variance, confidence,
                                  row_cells[a]) for a in range(k1)]
    row_given_col_t = [_conditional(w, vs[:, b], xs, both, disclosed, variance, confidence,
                                    col_cells[b]) for b in range(k2)]
    consistent = norm_sub(np.array([c["estimate"] for c in joint_cells])).reshape(k1, k2)
    d = w.describe()
    return {
        "survey": w.version.id, "version": w.version.version,
        "rows": {"question": rows_qid, "mechanism": w.version.compiled.mechanisms[rows_qid].name,
                 "cells": list(rq.labels)},
        "cols": {"question": cols_qid, "mechanism": w.version.compiled.mechanisms[cols_qid].name,
                 "cells": list(cq.labels)},
        "n": int(both.sum()), "confidence": confidence, "source": "design",
        "joint": [joint_cells[a * k2:(a + 1) * k2] for a in range(k1)],
        "consistent": consistent.tolist(),
        "row_shares": row_cells, "col_shares": col_cells,
        "col_given_row": col_given_row,
        "row_given_col": [[row_given_col_t[b][a] for b in range(k2)] for a in range(k1)],
        "notes": [NOTE.format(design=d["description"], variance=d["variance_description"])],
        "design": d,
    }


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
    result = ratio(w.design, num, den, variance=variance, confidence=confidence)
    low, high = given_cell["ci_low"], given_cell["ci_high"]
    unknowable = low is not None and high is not None and low <= 0 <= high
    cells = _cells(result)
    for cell in cells:
        cell["too_noisy"] = cell["too_noisy"] or unknowable
    return cells
