"""Design-based estimation on randomized answers (issue 35; docs/design-based.md).

The pieces, in the order an analysis uses them:
- `Design.build(weights, strata, psus, fpc, lonely_psu=...)` (sample.py): the validated design.
- `poststratify`, `rake`, `calibrate`, `model_matrix`, `Margin` (its cells labels or `Coded`),
  `require_disclosed`
  (calibration.py): weights calibrated to population totals of disclosed covariates.
- `pseudo_values(question, mechanism, reports, present)` (pseudo.py): each respondent's
  unbiased estimates of their answer's indicators (or value) and their randomization variance.
- `mean`, `total`, `ratio`, `estimate` (estimators.py): Hájek / Horvitz-Thompson estimates with
  linearized or replicate variances and the design effect split (sampling × privacy);
  `totals_refusal(design)` says why totals would not count a population (None: they do).
- `replicates.build(design, "jk1" | "jkn" | "bootstrap")` (replicates.py): replicate weights as R's
  as.svrepdesign builds them, passed as `variance=` to the estimators.
"""

from .calibration import (
    Coded,
    Margin,
    calibrate,
    model_matrix,
    poststratify,
    rake,
    require_disclosed,
)
from .estimators import (
    DesignEffect,
    DesignEstimate,
    DesignEstimates,
    estimate,
    mean,
    ratio,
    total,
    totals_refusal,
)
from .pseudo import PseudoValues, from_values, pseudo_values
from .replicates import Replicates
from .replicates import build as build_replicates
from .sample import LONELY_PSU, Design, NumberedLabels

__all__ = [
    "LONELY_PSU",
    "Coded",
    "Design",
    "DesignEffect",
    "DesignEstimate",
    "DesignEstimates",
    "Margin",
    "NumberedLabels",
    "PseudoValues",
    "Replicates",
    "build_replicates",
    "calibrate",
    "estimate",
    "from_values",
    "mean",
    "model_matrix",
    "poststratify",
    "pseudo_values",
    "rake",
    "ratio",
    "require_disclosed",
    "total",
    "totals_refusal",
]
