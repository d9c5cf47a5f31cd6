"""`ldpsurvey regress` with a design (docs/weights.md): the same fit as today's regression
(server/regression.py, through the channels), with pseudo-likelihood weights and the sandwich
standard errors over PSUs within strata (shared/design/regression.py, equal to R's svyglm).

The rows are the respondents who answered the outcome and every covariate; the others stay in
the design (a domain, as R's svyglm on a subset), so the PSUs and strata they belong to still
count in the variance. Only the linearized variance is offered: replicate weights would refit
the model once per replicate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..server.regression import Spec, check_spec, fit_columns
from ..shared.design.regression import FPC_NOTE, fit_options
from ..shared.errors import AnalysisError
from .design_estimates import Weighted


def design_regression(w: Weighted, spec: Spec, confidence: float) -> dict[str, Any]:
    """The regression document, design-based: the fit's coefficients with design-based
    standard errors, and the `design` block of the report documents."""
    if w.options.variance != "linearized":
        raise AnalysisError("regress takes the linearized (sandwich) variance; replicate "
                            "weights (--variance jk1|jkn|bootstrap) are for report and export")
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
        mechanism = compiled.mechanisms[qid]
        reports = [w.respondents.answers[i][qid] for i in rows]
        columns.append(np.asarray(mechanism.validate_reports(reports)))
    if not rows.size:
        raise AnalysisError("no submission answers the outcome and every covariate yet")
    result = fit_columns(columns, w.respondents.n - rows.size, spec, questions,
                         compiled.mechanisms, confidence, **fit_options(w.design, rows))
    result.notes.insert(0, f"design-based: {w.design.describe()}; pseudo-likelihood weights, "
                           "standard errors from the sandwich over PSUs within strata")
    if w.design.has_fpc:
        result.notes.append(FPC_NOTE)
    return {"survey": w.version.id, "version": w.version.version, "sha256": w.version.sha256,
            "covariates": list(spec.covariates), **result.to_dict(), "design": w.describe()}
