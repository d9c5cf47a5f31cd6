"""Design-based estimates among those asked (skip logic, docs/skip-logic.md): a hidden
question's share of each option, group and (ordinal) mean score among the respondents it
applied to, as ratios of weighted pseudo-values (R's `svyratio`).

A hidden question's answer is one of its options or "not asked" (its last value), so its
pseudo-values z are unbiased for one-hot indicators y. Among those asked, a column c·y (an
option, a group, the mean score; c is 0 on "not asked") has the ratio

    R = Σ w (c·z) / Σ w (1 − z_na),

the estimated total of the column over the estimated number asked. Both come from the same
report, so the randomization variance of the linearized residual c·z − R(1 − z_na) needs
their covariance: given the answer, Cov(c·z, 1 − z_na) = −Cov(c·z, z_na), and because an
answer is never both an option and "not asked", (c·y)·y_na = 0, so (c·z)·z_na is unbiased
for Cov(c·z, z_na) (shared/design/pseudo.py's argument for one-hot answers; for a
check-all-that-apply question "not asked" is never selected with an option either). The
ratio therefore takes the cross term −(c·z)·z_na (estimators.ratio `cross_noise`); with an fpc
it enters the randomization term, and always the deff's privacy part.

Special values ("Don't know", "Prefer not to say": the question's `special`) are further
values after the options, before "not asked": the ratios are then among those who gave an
answer, the denominator 1 − S with S = Σ_e z_e over the extra values, and the argument above
holds with S for z_na (an answer is one value, so (c·y)·s = 0 and s² = s for s = Σ_e y_e).

A hidden integer question sends the pair [b, y] (shared/mechanisms/asked_geometric.py): the
asked bit b, whose Z = (b − q)/(p − q) is unbiased for "asked" (so 1 − Z for "not asked",
randomization variance estimate Z² − Z), and y, the answer or the range's middle d plus
geometric noise of known variance, so y − d is unbiased for asked·(x − d). The mean among
those asked is d + Σ w (y − d) / Σ w Z; the bit and the noise are drawn independently, so the
ratio's numerator and denominator have no randomization covariance. A hidden decimal sends
[b, i] (shared/mechanisms/asked_grid.py): i a grid mean report whose value is unbiased for the
grid value randomized (the answer, or the grid's middle d when not asked), so the same ratio
holds in the question's units, with the mean part's plug-in randomization variance for y.
Each mechanism says how it reads its pair (`Mechanism.asked_number`, status codes included):
nothing here branches on which one it is.

A design without strata, clusters, unequal weights or calibration gives exactly the simple
random sample's estimators (shared/among_asked.py, AskedGeometric.estimate: their delta method
is the same linearization): tests/analyst/test_design_among_asked.py checks that, and R's
svymean/svyratio on a stratified cluster design.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import DesignError
from .estimators import DesignEstimates, Variance, estimate, ratio
from .pseudo import PseudoValues


@dataclass(frozen=True)
class AmongAsked:
    """The ratios (or why there are none) and which columns they are."""

    estimates: DesignEstimates | None
    options: tuple[str, ...]
    groups: tuple[tuple[str, tuple[int, ...]], ...]  # name, option indices
    mean_score: bool
    note: str | None = None


def among_asked(design: object, pv: PseudoValues, option_count: int,
                groups: Mapping[str, Sequence[int]], *, ordinal: bool = False,
                domain: np.ndarray | None = None, variance: Variance = "linearized",
                confidence: float = 0.95, quantile: str = "t", extra: int = 1) -> AmongAsked:
    """Shares among those asked of a hidden question whose pseudo-values `pv` have its
    `option_count` options then its `extra` values (special values, "not asked") as their
    first columns; `groups` name option indices; `ordinal` adds the mean score (options
    scored 1..option_count)."""
    k = option_count
    named = tuple((str(name), tuple(int(i) for i in members)) for name, members in groups.items())
    labels = [*pv.labels[:k], *(name for name, _ in named), *(["mean score"] if ordinal else [])]
    coefficients = column_coefficients(k, [members for _, members in named], ordinal, extra)
    full = pv.values[:, :k + extra]
    values = full @ coefficients
    if pv.disclosed:
        noise, den_noise, cross = (np.zeros_like(values), np.zeros((pv.n, 1)),
                                   np.zeros_like(values))
    else:
        noise, den_noise, cross = randomization_estimates(full, coefficients, extra)
    present = pv.present
    mask = present[:, None]
    numerator = PseudoValues(pv.question, pv.mechanism, tuple(labels), values * mask,
                             noise * mask, present, "shares", pv.disclosed)
    denominator = PseudoValues(pv.question, pv.mechanism, ("asked",),
                               (1.0 - full[:, k:].sum(axis=1, keepdims=True)) * mask,
                               den_noise * mask, present,
                               "shares", pv.disclosed)
    try:
        result = ratio(design, numerator, denominator, domain=domain,  # type: ignore[arg-type]
                       variance=variance, confidence=confidence, cross_noise=cross * mask,
                       quantile=quantile)
    except DesignError as exc:
        return AmongAsked(None, tuple(pv.labels[:k]), named, ordinal,
                          f"no estimate among those asked: {exc.message}")
    used = present if domain is None else present & np.asarray(domain, dtype=bool)
    asked = float((design.weights * used) @ denominator.values[:, 0])  # type: ignore[attr-defined]
    if asked <= 0:
        return AmongAsked(None, tuple(pv.labels[:k]), named, ordinal,
                          "the estimated share asked is not positive: too few respondents to "
                          "estimate shares among those asked")
    return AmongAsked(result, tuple(pv.labels[:k]), named, ordinal)


def column_coefficients(k: int, groups: Sequence[Sequence[int]], ordinal: bool,
                        extra: int = 1) -> np.ndarray:
    """(k + extra, m): each column's coefficients c on the k options and the extra values
    (0 there): the options, then the groups, then (ordinal) the scores 1..k."""
    columns = [np.eye(k + extra)[:, :k]]
    for members in groups:
        c = np.zeros((k + extra, 1))
        c[list(members), 0] = 1.0
        columns.append(c)
    if ordinal:
        columns.append(np.concatenate([np.arange(1, k + 1, dtype=float),
                                       np.zeros(extra)])[:, None])
    return np.hstack(columns)


def randomization_estimates(z: np.ndarray, coefficients: np.ndarray, extra: int = 1
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per respondent, unbiased estimates (module docstring) of the randomization variance of
    each column c·z, of the share asked 1 − z_na, and of their covariance, from the one-hot
    answers' pseudo-values z (n, k + extra), the extra values last (their sum S stands for
    "not asked", module docstring)."""
    values = z @ coefficients
    z_na = z[:, z.shape[1] - extra:].sum(axis=1)
    noise = values * values - z @ (coefficients * coefficients)
    den_noise = (z_na * z_na - z_na)[:, None]
    cross = -values * z_na[:, None]
    return noise, den_noise, cross


@dataclass(frozen=True)
class AskedMean:
    """A hidden integer question's extra values' shares of everyone (its special values, then
    "not asked": `extras`, one row each) and mean among those who answered (either None, with
    `note` saying why)."""

    extras: DesignEstimates | None
    mean: DesignEstimates | None
    note: str | None = None
    method: str = ""  # the mechanism's note on how (AskedNumber.note)


@dataclass(frozen=True)
class AskedPairs:
    """A number's [bit, number] reports (or, with special values, [status code, number]) as
    pseudo-values over the design's rows (module docstring): `extras` the
    extra values' indicators (1 − Z for "not asked" alone; Z_e = ([code = e] − q)/(p − q) per
    extra value with status codes), `asked` Z of an answer, each with Z² − Z, and `centred`
    y − d, unbiased for answered·(x − d), with its randomization variance estimate; `note`
    the mechanism's."""

    extras: PseudoValues
    asked: PseudoValues
    centred: PseudoValues
    default: float
    note: str = ""


def asked_pairs(mechanism: Any, reports: np.ndarray, present: np.ndarray) -> AskedPairs:
    """The pseudo-values of a number's stored pairs ([bit, number], or with special values
    [status code, number]; `reports` of the rows where `present`), as its mechanism reads
    them (`Mechanism.asked_number`); DesignError for a mechanism that sends no such pair."""
    found = mechanism.asked_number(reports)
    if found is None:
        raise DesignError(f"design-based estimates of a number sent by {mechanism.name} as "
                          f"pairs are not built; the plain report (without weights) gives its "
                          f"extra values' shares and its mean among those who answered")
    mask = np.asarray(present, dtype=bool)
    z = np.zeros(mask.size)
    y = np.zeros(mask.size)
    y_noise = np.zeros(mask.size)
    extra_z = np.zeros((mask.size, found.extras.shape[1]))
    z[mask] = found.asked
    y[mask] = found.centred
    y_noise[mask] = found.noise
    extra_z[mask] = found.extras
    z_noise = (z * z - z)[:, None]
    extra_noise = extra_z * extra_z - extra_z  # "not asked" alone: (1 − Z)² − (1 − Z) = Z² − Z
    qid, name = mechanism.question_id, mechanism.name
    return AskedPairs(
        PseudoValues(qid, name, found.labels, extra_z, extra_noise, mask, "shares", False),
        PseudoValues(qid, name, ("asked",), z[:, None], z_noise, mask, "shares", False),
        PseudoValues(qid, name, ("mean",), y[:, None], y_noise[:, None], mask, "mean", False),
        float(found.default), found.note)


def asked_value(pairs: AskedPairs) -> PseudoValues:
    """(y − d) + d·Z, unbiased for asked·x (x the answer, 0 when not asked): its mean among
    those asked is Σ w value / Σ w Z (the export's `_value`), its Horvitz-Thompson total the
    total of the answers over those asked. Randomization variance σ² + d²·(Z² − Z): the bit
    and the noise are drawn independently."""
    d = float(pairs.default)
    mask = pairs.asked.present[:, None]
    z, z_noise = pairs.asked.values, pairs.asked.noise
    return replace(pairs.centred, labels=("value",),
                   values=(pairs.centred.values + d * z) * mask,
                   noise=(pairs.centred.noise + d * d * z_noise) * mask)


def asked_mean(design: Any, mechanism: Any, reports: np.ndarray, present: np.ndarray, *,
               domain: np.ndarray | None = None, variance: Variance = "linearized",
               confidence: float = 0.95, quantile: str = "t") -> AskedMean:
    """The extra values' shares (special values, "not asked") and the mean among those who
    answered of an integer question sent as pairs (`reports` of the rows where `present`),
    module docstring."""
    pv = asked_pairs(mechanism, reports, present)
    shares = estimate(design, pv.extras, domain=domain, variance=variance,
                      confidence=confidence, quantile=quantile)[0]
    used = pv.asked.present if domain is None else pv.asked.present & np.asarray(domain,
                                                                                 dtype=bool)
    if float((design.weights * used) @ pv.asked.values[:, 0]) <= 0:
        return AskedMean(shares, None, "the estimated share who answered is not positive: too "
                                       "few respondents to estimate the mean among them",
                         pv.note)
    result = ratio(design, pv.centred, pv.asked, domain=domain, variance=variance,
                   confidence=confidence, quantile=quantile)
    return AskedMean(shares, replace(result, estimates=result.estimates + pv.default),
                     method=pv.note)
