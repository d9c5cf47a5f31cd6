"""What the survey-csv export (export.py) writes for a hidden question (skip logic whose
condition reads a randomized answer, docs/skip-logic.md), so that R's `svyratio` gives the
estimates among those asked that `ldpsurvey report` gives (shared/design/among_asked.py).

A hidden question with options (binary, categorical, ordinal, check-all-that-apply) keeps its
shares of everyone (the options, "(not asked)", the declared groups) and gains:
- `<q>_asked`, 1 − z_na: unbiased for "asked", the ratios' denominator;
- for an ordinal question `<q>_score`, the options scored 1..k and "not asked" 0 (the mean
  score among those asked is its ratio to `_asked`; the mean score of everyone, which would
  score "not asked" as an option, is not exported, as `report` does not give it).
Each ratio's numerator is an option's column, a group's column or the score.

A hidden integer question (asked_geometric's [bit, number] reports) gets
- `<q>_not_asked`, 1 − Z (its mean is the share not asked);
- `<q>_asked`, Z = (b − q)/(p − q), unbiased for "asked";
- `<q>_value`, (y − d) + d·Z, unbiased for asked·x (x the answer; 0 when not asked), so that
  the mean among those asked is simply Σ w value / Σ w asked. That is `report`'s
  d + Σ w (y − d)/Σ w Z exactly, and its linearized residual value − R·Z = (y − d) − (R − d)·Z
  is `report`'s, so every variance (linearized, calibrated, replicate) is the same.

The randomization terms (with an fpc): each column's V̂ as usual, plus `ldp_cross_<column>`,
each numerator's unbiased estimate Ĉ of its randomization covariance with `_asked` (both read
off one report): −(c·z)·z_na for an option, group or score (among_asked.py); d·(Z² − Z) for
the integer's value (its y noise is independent of the bit). The ratio's residual then has the
randomization variance V̂(num) + R²·V̂(asked) − 2R·Ĉ; for the integer value this is
σ² + (R − d)²·(Z² − Z), `report`'s term.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .among_asked import asked_pairs, asked_value, column_coefficients, randomization_estimates
from .pseudo import PseudoValues


@dataclass(frozen=True)
class AskedColumns:
    """A hidden question's ratios among those asked, for the export.

    `extra` holds the columns its shares of everyone do not: `asked` (the denominator) first.
    Ratio j has the label `labels[j]` and the numerator `numerators[j]`, an index into the
    question's columns followed by `extra`'s; `cross` (n, len(labels)) each numerator's
    randomization-covariance estimate with `asked` (module docstring)."""

    labels: tuple[str, ...]
    extra: PseudoValues
    numerators: tuple[int, ...]
    cross: np.ndarray


def asked_share_columns(question: Any, groups: dict[str, Any], pv: PseudoValues
                        ) -> tuple[PseudoValues, AskedColumns]:
    """(the shares of everyone to export, the ratios among those asked) of a hidden question
    with options, from its pseudo-values `pv` (analyst/design/estimates.pseudo_values: the options,
    "not asked", an ordinal question's mean score, then the groups)."""
    k = len(question.labels) - 1  # the options; "not asked" is the last label
    ordinal = question.unit.scores(question) is not None  # a mean score among those asked
    keep = [j for j in range(pv.values.shape[1]) if not (ordinal and j == k + 1)]
    everyone = replace(pv, labels=tuple(pv.labels[j] for j in keep), values=pv.values[:, keep],
                       noise=pv.noise[:, keep])
    named = list(groups.items())
    coefficients = column_coefficients(k, [list(m) for _, m in named], ordinal)
    full = pv.values[:, :k + 1]
    noise, den_noise, cross = randomization_estimates(full, coefficients)
    mask = pv.present[:, None]
    extra_values = [(1.0 - full[:, k:]) * mask]
    extra_noise = [den_noise * mask]
    labels = ["asked"]
    if ordinal:
        extra_values.append((full @ coefficients[:, -1:]) * mask)
        extra_noise.append(noise[:, -1:] * mask)
        labels.append("score")
    extra = PseudoValues(pv.question, pv.mechanism, tuple(labels), np.hstack(extra_values),
                         np.hstack(extra_noise), pv.present, "shares", False)
    m = len(keep)
    numerators = (*range(k), *(k + 1 + g for g in range(len(named))),
                  *((m + 1,) if ordinal else ()))
    ratio_labels = (*pv.labels[:k], *(str(name) for name, _ in named),
                    *(("mean score",) if ordinal else ()))
    return everyone, AskedColumns(ratio_labels, extra, numerators, cross * mask)


def asked_integer_columns(mechanism: Any, reports: np.ndarray, present: np.ndarray
                          ) -> tuple[PseudoValues, AskedColumns]:
    """(the share not asked to export, the mean among those asked) of a hidden integer
    question from its stored [bit, number] pairs (module docstring)."""
    pairs = asked_pairs(mechanism, reports, present)
    d = float(pairs.default)
    z, z_noise = pairs.asked.values, pairs.asked.noise
    mask = pairs.asked.present[:, None]
    value = asked_value(pairs)
    extra = replace(pairs.asked, labels=("asked", "value"), kind="mean",
                    values=np.hstack([z, value.values]),
                    noise=np.hstack([z_noise, value.noise]))
    return pairs.extras, AskedColumns(("mean",), extra, (2,), d * z_noise * mask)
