"""A number's side of a crosstab when its reports carry an unbiased value of the answer but no
unbiased indicator of each answer (joint_reports "value": a decimal question's duchi,
piecewise, hybrid, square_wave, the mean-and-distribution pair, geometric noise or a disclosed
answer on its grid; an integer question's mean mechanisms): its mean among each category of the
other side (docs/crosstabs.md, "A number's mean among a randomized category").

Each report y has an unbiased value v(y) of its answer x, E[v | x] = x
(`Mechanism.report_values`), drawn independently of the other question's report a given the
true pair. With w_c(a) the other side's per-report unbiased indicator of category c,
E[v(y)·w_c(a) | x, q] = x·[q = c], so Σ v·w_c estimates Σ_{q = c} x and Σ w_c the count; their
ratio is the mean among category c, with the delta-method interval shared/crosstab.py gives every
ratio. The side has one cell, everyone (X = 1), and carries the mean Y = v: `Encoder.mean`.

Features, integers as the joint aggregate G needs them: a one-hot of the report's key where the
keys are finite (Y and Y² are then any function of the key), or the key and its square where v is
affine in an integer key (square_wave's cell index, a geometric report, a disclosed value), as an
integer question's moments are. `expected` holds E[φ̃ | x] at `answers`, so the exact variance
floor of the conditional mean follows as for an integer question's.

Medians and quartiles per randomized category need the whole distribution of the number within
a category that no one's answer discloses: EM over the product of the two channels, built where
the number's reports carry a square wave's cell (shared/numeric/joint_ems.py, asked by the server
through `Mechanism.window_reports`); for the other mechanisms each category of the quartiles
table says why there are none (a Duchi report identifies only the mean;
shared/numeric/joint_ems.quartiles_refusal) and the note says to group by a disclosed question
(`report --by`) instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import CrosstabError
from .joint_encoder import Encoder
from .mechanisms.base import Mechanism

EVERYONE = "everyone"  # the one cell of a number's side
_FLOAT_EXACT_ABS = 2**26  # keys up to this give key² exactly in float64


def value_note(question_id: str, quantiles: bool = False) -> str:
    """What a number's side gives, and what it does not (the crosstab's note); `quantiles`:
    its quartiles per category are given too (shared/numeric/joint_ems.py)."""
    mean = (f"{question_id} is a number: the crosstab gives its mean among each category of "
            f"the other question (Σ v·w_c / Σ w_c over the reports, v each report's unbiased "
            f"value, w_c the other report's unbiased indicator of category c; delta-method "
            f"interval), not bins; ")
    if quantiles:
        return mean + ("its median and quartiles among each category come from its square "
                       "wave reports (quantiles_given_category)")
    return mean + ("medians and quartiles per randomized category are estimated only from "
                   "square wave reports (estimate distribution): they need a disclosed "
                   "grouping here (report --by QUESTION gives each group's median and "
                   "quartiles)")


def value_encoder(mechanism: Mechanism, bins: Sequence[int] | None) -> Encoder:
    """The side of a "value" mechanism (module docstring)."""
    qid = mechanism.question_id
    if bins is not None:
        raise CrosstabError(f"bins do not apply to {qid!r}: its reports carry an unbiased value "
                            f"but no unbiased bin indicator, so a crosstab gives its mean among "
                            f"each category of the other question; drop the bins")
    values = mechanism.report_values()
    answers = np.asarray(values.answers, dtype=float)
    membership = np.ones((1, answers.size))
    if values.table is not None:
        table = np.asarray(values.table, dtype=float)
        size = table.size
        estimator = np.zeros((1, size + 1))
        estimator[0, 0] = 1.0
        mean = np.concatenate([[0.0], table])
        expected = np.vstack([np.ones((1, answers.size)), np.asarray(values.expected).T])

        def featurize(reports: Any) -> np.ndarray:
            keys = mechanism.value_keys(reports)
            out = np.zeros((keys.size, size + 1))
            out[:, 0] = 1.0
            out[np.arange(keys.size), keys + 1] = 1.0
            return out

        return Encoder(qid, mechanism.name, (EVERYONE,), estimator, estimator.copy(),
                       expected, membership, featurize, _everyone, mean, mean**2, answers,
                       mean_note=None, mean_only=True)
    a, b = float(values.offset), float(values.slope)
    estimator = np.array([[1.0, 0.0, 0.0]])
    mean = np.array([a, b, 0.0])
    mean_square = np.array([a * a, 2 * a * b, b * b])  # (a + b·key)²
    expected = np.vstack([np.ones((1, answers.size)), np.asarray(values.expected).T])

    def moments(reports: Any) -> np.ndarray:
        keys = mechanism.value_keys(reports)
        exact = keys.size == 0 or int(np.abs(keys).max()) <= _FLOAT_EXACT_ABS
        out = np.zeros((keys.size, 3), dtype=np.float64 if exact else object)
        out[:, 0] = 1
        if exact:
            out[:, 1] = keys
            out[:, 2] = keys.astype(np.float64) ** 2
        else:
            whole = [int(v) for v in keys]
            out[:, 1] = whole
            out[:, 2] = [v * v for v in whole]
        return out

    return Encoder(qid, mechanism.name, (EVERYONE,), estimator, estimator.copy(), expected,
                   membership, moments, _everyone, mean, mean_square, answers,
                   moment_columns=(1, 2), mean_only=True)


def _everyone(index: np.ndarray) -> np.ndarray:
    return np.zeros(np.asarray(index).shape, dtype=np.int64)


def check_pair(rows: Encoder, cols: Encoder) -> None:
    """Two numbers' sides have no category to take a mean among: refused in one line."""
    if rows.mean_only and cols.mean_only:
        raise CrosstabError(f"{rows.question_id!r} and {cols.question_id!r} are both numbers "
                            "read by their mean: a crosstab needs categories on one side (for "
                            "how one number moves with the other, regress --outcome)")


def mean_given_category_bound(number: Encoder, other: Encoder, share: float) -> np.ndarray:
    """Per category c of `other`, the worst case over every truth in which c holds `share`
    (π) of respondents of n·Var R̂_c, R̂_c = Σ v·w_c / Σ w_c the number's mean among c: what a
    plan of that mean needs (analyst/plan/among_category.py).

    The delta method linearizes R̂_c - R_c as Σ u / (n·π), u = w_c·(v - R_c) per report, and
    the stated interval estimates E[u²]/(n·π²) (a random sample: the spread of the answers
    within c counted, as every crosstab ratio's, docs/crosstabs.md). By independence of the two
    reports given the pair (q, x), E[u² | q, x] = V_c(q)·(g(x) + (x - R)²), V_c(q) = E[w_c² | q]
    and g(x) = Var[v | x]. So

        E[u²] = π·V_c(c)·E[g(x) + x² | c] - π·V_c(c)·R² + Σ_{q ≠ c} P(q)·V_c(q)·E[g + (x - R)² | q]
             <= π·V_c(c)·A(R) + (1 - π)·V_out·B(R),

    A(R) = ĥ(R) - R² with ĥ the least concave majorant of h(x) = g(x) + x² (the largest
    E[h | c] of answers whose mean is R: two answers at most), B(R) = max_x g(x) + (x - R)²
    (everyone outside c at the farthest answer), V_out the largest V_c(q) outside c; both are
    attained together, so the bound is the maximum over R of the right side, divided by π².
    On a binned `other`, V_c is taken at its largest over each side of c (a bound). R runs over
    the answers where the encoder knows the channel (every grid value up to its 513 or 1,025
    evenly spaced ones, joint_values' `answers`)."""
    assert number.mean_only and number.mean is not None and number.mean_square is not None
    if not 0 < share <= 1:
        raise CrosstabError(f"a category's share of respondents is in (0, 1], got {share!r}")
    x = np.asarray(number.answers, dtype=float)
    order = np.argsort(x)
    x = x[order]
    mean = (number.mean @ number.expected)[order]
    g = np.maximum((number.mean_square @ number.expected)[order] - mean**2, 0.0)
    hull = _concave_majorant(x, g + x * x) - x * x  # A(R) at R = each answer
    farthest = np.max(g[None, :] + (x[None, :] - x[:, None]) ** 2, axis=1)  # B(R)
    v = other.second_moments()
    inside = other.membership > 0
    v_in = np.max(np.where(inside, v, -np.inf), axis=1)
    v_out = np.max(np.where(~inside, v, -np.inf), axis=1)
    v_out = np.where(np.isfinite(v_out), v_out, 0.0)
    worst = np.max(share * v_in[:, None] * hull[None, :]
                   + (1 - share) * v_out[:, None] * farthest[None, :], axis=1)
    return np.asarray(worst / share**2, dtype=float)


def _concave_majorant(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The least concave function >= y at the increasing points x, evaluated at x (the upper
    hull, Andrew's monotone chain)."""
    hull: list[int] = []
    for i in range(x.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (y[b] - y[a]) * (x[i] - x[a]) <= (y[i] - y[a]) * (x[b] - x[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.interp(x, x[hull], y[hull])
