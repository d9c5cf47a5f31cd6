"""`ldpsurvey regress` with a design (docs/weights.md): the same fit as today's regression
(server/regression.py, through the channels), with pseudo-likelihood weights and the sandwich
standard errors over PSUs within strata (shared/design/regression.py, equal to R's svyglm).

The rows are the respondents who answered the outcome and every covariate; the others stay in
the design (a domain, as R's svyglm on a subset), so the PSUs and strata they belong to still
count in the variance. With `--variance jk1|jkn|bootstrap` the model is refitted on every
replicate's (recalibrated) weights and the standard errors are the replicates' spread (R's
svyglm on a svrepdesign; the replicates built without the fpc, as the sandwich leaves it out).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from ldpsurvey.server.regression import Spec, check_spec, fit_columns
from ldpsurvey.shared.design.regression import (
    FPC_NOTE,
    fit_options,
    regression_replicates,
    replicate_covariance,
)
from ldpsurvey.shared.errors import AnalysisError

from .estimates import Weighted


def design_regression(w: Weighted, spec: Spec, confidence: float,
                      progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The regression document, design-based: the fit's coefficients with design-based
    standard errors, and the `design` block of the report documents."""
    compiled = w.version.compiled
    questions = {q.id: q for q in compiled.survey.questions}
    check_spec(spec, questions, compiled.mechanisms)
    qids = [spec.outcome, *spec.covariates]
    complete = np.ones(w.respondents.n, dtype=bool)
    for qid in qids:
        complete &= w.respondents.column(qid)[0]
    rows = np.flatnonzero(complete)
    columns = []
    for qid in qids:
        reports = w.respondents.rows_reports(qid, rows)
        if not w.respondents.validated:
            reports = compiled.mechanisms[qid].validate_reports(reports)
        columns.append(np.asarray(reports))
    if not rows.size:
        raise AnalysisError("no submission answers the outcome and every covariate yet")
    dropped = w.respondents.n - rows.size
    options = fit_options(w.design, rows)
    design_df = w.degrees_of_freedom()
    # t with the residual df degf + 1 - coefficients (R's svyglm), or the normal quantile
    t_df = {"design_df": design_df} if w.options.quantile == "t" else {}

    def fit(**extra: Any) -> Any:
        return fit_columns(columns, dropped, spec, questions, compiled.mechanisms, confidence,
                           **extra)

    def refit(weights: np.ndarray) -> Any:
        """A replicate's fit: the rows a replicate drops (weight 0) add nothing to the
        pseudo-likelihood, so they are left out (the same fit, without 0/0 terms)."""
        keep = weights > 0
        return fit_columns([c[keep] for c in columns], dropped, spec, questions,
                           compiled.mechanisms, confidence, weights=weights[keep])

    if w.options.variance == "linearized":
        result = fit(**options, **t_df)
        how = "standard errors from the sandwich over PSUs within strata"
    else:
        replicates = regression_replicates(w.design, w.options.variance,
                                           w.options.replicates)
        if progress is not None:
            progress(f"refitting the model on {replicates.count} replicates...")
        full = fit(weights=options["weights"])
        if not full.converged:
            raise AnalysisError("the fit did not converge, so no replicate variance: "
                                "the data cannot separate these coefficients")
        covariance = replicate_covariance(w.design, replicates, _estimates(full),
                                          _refit(refit), rows)
        result = fit(weights=options["weights"], variance=lambda _influence: covariance, **t_df)
        how = (f"standard errors from {replicates.describe()}: the model refitted on each "
               "replicate's weights")
    result.notes.insert(0, f"design-based: {w.design.describe()}; pseudo-likelihood weights, "
                           f"{how}")
    if w.design.has_fpc:
        result.notes.append(FPC_NOTE)
    # design.df: the design's degf (as every design-based document); residual_df: the t's
    return {"survey": w.version.id, "version": w.version.version, "sha256": w.version.sha256,
            "covariates": list(spec.covariates), **result.to_dict(),
            "design": {**w.describe(), "df": design_df, "residual_df": result.df}}


def _estimates(result: Any) -> np.ndarray:
    return np.array([c.estimate for c in result.coefficients], dtype=float)


def _refit(fit: Any) -> Any:
    """One replicate's coefficients (a fit that does not converge on a replicate's weights
    gives no replicate variance: refused, naming it)."""
    count = [0]

    def refit(weights: np.ndarray) -> np.ndarray:
        count[0] += 1
        result = fit(weights=weights)
        if not result.converged:
            raise AnalysisError(f"the fit did not converge on replicate {count[0]}'s weights: "
                                "no replicate variance (use --variance linearized)")
        return _estimates(result)

    return refit
