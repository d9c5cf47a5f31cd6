"""Export for the analysts' own tools (`ldpsurvey export --format survey-csv`): one CSV row per
submission with its pseudo-values, design and disclosed covariates, plus an R script
(svydesign or svrepdesign, the calibration, svymean) and Stata `svyset` lines.

The pseudo-values are post-processing of the reports the server already holds: exporting
them spends no ε. Columns, in order:

- `submission_id`; `weight` (the design weight, before calibration), `stratum`, `psu`, `fpc`
  (when the design has them);
- each disclosed covariate as given (option labels; integers);
- each calibration variable as `cal_<name>` (categories, or a linear calibration's model
  columns), so that the script redoes the calibration with the same population totals;
- the pseudo-values, `<question>_<option>` (and `_mean_score`, `_mean`); empty where the
  respondent did not answer (R's na.rm = TRUE then estimates over those who did, a domain);
- a hidden question (skip logic on a randomized answer): `<question>_asked`, the denominator of
  its shares (or mean) among those asked, and `_score` (ordinal) or `_not_asked` and `_value`
  (integer) (export_asked.py);
- with an fpc (or a lonely PSU taken with certainty): `ldp_noise_<column>`, each value's
  randomization-variance estimate V̂, `ldp_cross_<column>` for each numerator among those asked
  (its randomization-covariance estimate with `_asked`), and `ldp_fraction`, the share c_h of
  the randomization variance the linearized formula leaves out (docs/design-based.md), which
  the script adds back;
- with replicate weights: `rep_1`..`rep_R`, each replicate's final (recalibrated) weight.

The R script reproduces ldpsurvey's estimates and standard errors (a test runs it: to 1e-8):
`svymean` of everyone's columns, `svyratio` of a hidden question's numerators over its `_asked`
column, and, when the weights are scaled to a population (estimators.totals_refusal), the
Horvitz-Thompson totals `report` gives with `svytotal` (each option's population count, an
integer's total; a hidden integer's total over those asked is its `_value` column's); its
column map says which column is which answer. The Stata file has the matching `svy: mean`,
`svy: ratio` and `svy: total` lines.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from ..errors import DesignError
from .calibration import LinearCalibration, PostStratification, Raking
from .estimators import totals_refusal
from .export_asked import AskedColumns
from .linearization import randomization_fractions
from .pseudo import PseudoValues
from .replicates import Replicates
from .sample import Design

STATA_SINGLE_UNIT = {"fail": "missing", "remove": "certainty", "certainty": "certainty",
                     "adjust": "centered", "average": "scaled"}


def column_name(*parts: str) -> str:
    """An R- and Stata-safe column name: letters, digits and '_', starting with a letter."""
    text = "_".join(re.sub(r"[^0-9A-Za-z]+", "_", p).strip("_") for p in parts)
    text = re.sub(r"_+", "_", text) or "x"
    return text if text[0].isalpha() else f"x_{text}"


@dataclass(frozen=True)
class QuestionColumns:
    """One question's CSV columns: its pseudo-values' (`columns`, whose means are the
    estimates of everyone) and, for a hidden question, its ratios among those asked
    (`asked`) with their extra columns (`asked_columns`, the denominator first)."""

    values: PseudoValues
    columns: tuple[str, ...]
    asked: AskedColumns | None = None
    asked_columns: tuple[str, ...] = ()

    @property
    def written(self) -> tuple[str, ...]:
        return (*self.columns, *self.asked_columns)

    def total_columns(self) -> tuple[str, ...]:
        """The columns whose Horvitz-Thompson totals `report` gives: every column of
        everyone's but a mean score (a total of scores counts nothing), and a hidden integer
        question's `_value` (its total over those asked)."""
        extra = () if self.asked is None else self.asked.extra.labels
        return (*(c for c, label in zip(self.columns, self.values.labels, strict=True)
                  if label != "mean score"),
                *(c for c, label in zip(self.asked_columns, extra, strict=True)
                  if label == "value"))

    def numerator_columns(self) -> tuple[str, ...]:
        assert self.asked is not None
        return tuple(self.written[j] for j in self.asked.numerators)


@dataclass(frozen=True)
class Layout:
    """Which CSV column holds what (built once by `layout`)."""

    questions: tuple[QuestionColumns, ...]
    covariates: tuple[tuple[str, str], ...]  # (covariate name, column)
    calibration: tuple[tuple[Any, tuple[str, ...]], ...]  # (step, its columns)
    noise: bool
    replicate_columns: tuple[str, ...]


def layout(design: Design, questions: Sequence[PseudoValues],
           covariates: Mapping[str, Sequence[Any]], replicates: Replicates | None,
           asked: Mapping[str, AskedColumns] | None = None) -> Layout:
    taken = {"submission_id", "weight", "stratum", "psu", "fpc", "ldp_fraction"}

    def unique(name: str) -> str:
        candidate, i = name, 2
        while candidate in taken:
            candidate, i = f"{name}_{i}", i + 1
        taken.add(candidate)
        return candidate

    cov = tuple((name, unique(column_name(name))) for name in covariates)
    steps = []
    for step in design.calibration:
        if isinstance(step, PostStratification | Raking):
            names = (step.name,) if isinstance(step, PostStratification) else step.names
            steps.append((step, tuple(unique(column_name("cal", n)) for n in names)))
        elif isinstance(step, LinearCalibration):
            steps.append((step, tuple(unique(column_name("cal", n)) for n in step.names)))
        else:
            raise DesignError(f"cannot export a calibration step of type {type(step).__name__}")
    asked = asked or {}
    cols = []
    for pv in questions:
        names = tuple(unique(column_name(pv.question, label)) for label in pv.labels)
        extra = asked.get(pv.question)
        cols.append(QuestionColumns(pv, names, extra, () if extra is None else tuple(
            unique(column_name(pv.question, label)) for label in extra.extra.labels)))
    if set(asked) - {pv.question for pv in questions}:
        raise DesignError("ratios among those asked of a question that is not exported")
    noise = bool(randomization_fractions(design).any())
    reps = tuple(f"rep_{r + 1}" for r in range(replicates.count)) if replicates else ()
    return Layout(tuple(cols), cov, tuple(steps), noise, reps)


def _number(value: float) -> str:
    return repr(float(value)) if math.isfinite(value) else ""


def write_csv(handle: IO[str], design: Design, ids: Sequence[str],
              questions: Sequence[PseudoValues], covariates: Mapping[str, Sequence[Any]],
              replicates: Replicates | None = None,
              asked: Mapping[str, AskedColumns] | None = None) -> Layout:
    """The survey CSV (module docstring) to `handle`; returns its layout for the scripts.
    `asked`: per hidden question id, its ratios among those asked (export_asked.py)."""
    if len(ids) != design.n:
        raise DesignError(f"{len(ids)} submission ids for a design of {design.n}")
    plan = layout(design, questions, covariates, replicates, asked)
    header = ["submission_id", "weight"]
    if design.stratum_count > 1:
        header.append("stratum")
    header.append("psu")
    if design.has_fpc:
        header.append("fpc")
    header += [c for _, c in plan.covariates]
    for _, columns in plan.calibration:
        header += list(columns)
    for q in plan.questions:
        header += list(q.written)
    if plan.noise:
        for q in plan.questions:
            header += [f"ldp_noise_{c}" for c in q.written]
            if q.asked is not None:
                header += [f"ldp_cross_{c}" for c in q.numerator_columns()]
        header.append("ldp_fraction")
    header += list(plan.replicate_columns)

    base = design.base_weights
    assert base is not None
    fields: list[list[str]] = [list(ids), [_number(w) for w in base]]
    if design.stratum_count > 1:
        fields.append([design.stratum_labels[s] for s in design.strata.tolist()])
    fields.append([f"{design.psu_labels[p][0]}/{design.psu_labels[p][1]}"
                   if design.stratum_count > 1 else design.psu_labels[p][1]
                   for p in design.psus.tolist()])
    if design.has_fpc:
        fields.append([_number(design.population_psus[s]) for s in design.strata.tolist()])
    for name, _ in plan.covariates:
        values = covariates[name]
        if len(values) != design.n:
            raise DesignError(f"covariate {name!r} has {len(values)} values for {design.n}")
        fields.append(["" if v is None else _label(v) for v in values])
    for step, _ in plan.calibration:
        fields += _calibration_fields(step)
    for q in plan.questions:
        fields += _present_fields(q.values.values, q.values.present)
        if q.asked is not None:
            fields += _present_fields(q.asked.extra.values, q.values.present)
    if plan.noise:
        for q in plan.questions:
            fields += _present_fields(q.values.noise, q.values.present)
            if q.asked is not None:
                fields += _present_fields(q.asked.extra.noise, q.values.present)
                fields += _present_fields(q.asked.cross, q.values.present)
        fractions = randomization_fractions(design)[design.strata]
        fields.append([_number(v) for v in fractions.tolist()])
    if replicates is not None:
        for weights in _replicate_weights(design, replicates):
            fields.append([_number(v) for v in weights.tolist()])
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(zip(*fields, strict=True))
    return plan


def _present_fields(values: np.ndarray, present: np.ndarray) -> list[list[str]]:
    """Each column of `values` as CSV fields, empty where the respondent did not answer."""
    rows = present.tolist()
    return [[_number(v) if answered else "" for v, answered
             in zip(values[:, j].tolist(), rows, strict=True)] for j in range(values.shape[1])]


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _calibration_fields(step: Any) -> list[list[str]]:
    if isinstance(step, PostStratification):
        return [[str(label) for label in np.asarray(step.labels, dtype=object)[
            step.model.joint].tolist()]]
    if isinstance(step, Raking):
        return [[str(v) for v in np.asarray(labels, dtype=object)[level[step.model.joint]]]
                for labels, level in zip(step.labels, step.levels, strict=True)]
    assert isinstance(step, LinearCalibration)
    return [[_number(v) for v in column.tolist()] for column in step.model.rows.T]


def _replicate_weights(design: Design, replicates: Replicates) -> list[np.ndarray]:
    base = design.base_weights
    assert base is not None
    out = []
    for r in range(replicates.count):
        weights = base * replicates.factors[r][design.psus]
        for step in design.calibration:
            weights = step.recalibrate(weights)
        out.append(weights)
    return out


# --- the R script ------------------------------------------------------------------------------


def _r_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _r_numbers(values: Sequence[float] | np.ndarray) -> str:
    return "c(" + ", ".join(repr(float(v)) for v in np.asarray(values).tolist()) + ")"


def r_script(csv_file: str, design: Design, plan: Layout, replicates: Replicates | None,
             confidence: float = 0.95) -> str:
    """An R script that reads the CSV and prints every question's estimates with ldpsurvey's
    standard errors (module docstring)."""
    lines = [
        "# Generated by `ldpsurvey export --format survey-csv`: design-based estimates from",
        "# the pseudo-values (each respondent's unbiased estimate of their answer;",
        "# docs/design-based.md).",
        "suppressPackageStartupMessages(library(survey))",
        f"options(survey.lonely.psu = {_r_string(design.lonely_psu)})",
        f"d <- read.csv({_r_string(csv_file)}, colClasses = c(submission_id = \"character\"))",
        "# columns: " + "; ".join(f"{q.values.question}: {', '.join(q.written)}"
                                  for q in plan.questions),
    ]
    for q in plan.questions:
        if q.asked is not None:
            lines.append(f"# {q.values.question} among those asked: "
                         + ", ".join(f"{label} = {c} / {q.asked_columns[0]}" for label, c
                                     in zip(q.asked.labels, q.numerator_columns(), strict=True)))
    for step, columns in plan.calibration:
        lines += _r_categories(step, columns)
    strata = ", strata = ~stratum" if design.stratum_count > 1 else ""
    fpc = ", fpc = ~fpc" if design.has_fpc else ""
    lines.append(f"des <- svydesign(ids = ~psu{strata}, weights = ~weight{fpc}, data = d, "
                 "nest = TRUE)")
    for step, columns in plan.calibration:
        lines += _r_calibration(step, columns)
    if replicates is not None:
        lines.append("# replicate weights: each replicate's final (recalibrated) weight")
        kind = {"jk1": "JK1", "jkn": "JKn", "bootstrap": "bootstrap"}[replicates.kind]
        lines.append(
            f"des <- svrepdesign(data = d, repweights = \"^rep_[0-9]+$\", "
            f"weights = weights(des), type = \"{kind}\", combined.weights = TRUE, "
            f"scale = {replicates.scale!r}, rscales = {_r_numbers(replicates.rscales)}, "
            "mse = FALSE)")
    z = "ldp_q"
    lines += [
        "# intervals: Student's t with the design's degrees of freedom (R's degf: PSUs - strata,",
        "# or the replicate weights' rank - 1), as confint(..., df = degf(des)) and Stata's svy;",
        "# for the normal quantile (report --interval-quantile normal) use "
        f"qnorm({0.5 + confidence / 2!r})",
        f"ldp_q <- qt({0.5 + confidence / 2!r}, df = degf(des))",
        "cat(\"design degrees of freedom:\", degf(des), \"\\n\")",
        "# with an fpc, the share of the randomization's variance the design formula leaves out",
        "ldp_added <- function(columns, w) {",
        "  if (is.null(d$ldp_fraction)) return(0 * seq_along(columns))",
        "  sapply(columns, function(col) {",
        "    present <- !is.na(d[[col]])",
        "    a <- ifelse(present, w, 0) / sum(w[present])",
        "    sum(d$ldp_fraction * a^2 * ifelse(present, d[[paste0(\"ldp_noise_\", col)]], 0))",
        "  })",
        "}",
        "ldp_estimates <- function(columns) {",
        "  est <- svymean(reformulate(columns), des, na.rm = TRUE)",
        "  se <- sqrt(diag(vcov(est)) + ldp_added(columns, weights(des, \"sampling\")))",
        f"  data.frame(estimate = coef(est), std_error = se, ci_low = coef(est) - {z} * se,",
        f"             ci_high = coef(est) + {z} * se)",
        "}",
    ]
    if any(q.asked is not None for q in plan.questions):
        lines += [
            "# among those asked (skip logic): each column's ratio to the question's _asked",
            "# column; with an fpc the randomization term of the residual num - R * asked,",
            "# V(num) + R^2 V(asked) - 2 R C(num, asked), as ldpsurvey adds it",
            "ldp_ratio_added <- function(columns, asked, ratios, w) {",
            "  if (is.null(d$ldp_fraction)) return(0 * ratios)",
            "  mapply(function(col, r) {",
            "    present <- !is.na(d[[col]]) & !is.na(d[[asked]])",
            "    a <- ifelse(present, w, 0) / sum((w * d[[asked]])[present])",
            "    v <- d[[paste0(\"ldp_noise_\", col)]] +",
            "      r^2 * d[[paste0(\"ldp_noise_\", asked)]] -",
            "      2 * r * d[[paste0(\"ldp_cross_\", col)]]",
            "    sum(d$ldp_fraction * a^2 * ifelse(present, v, 0))",
            "  }, columns, ratios)",
            "}",
            "ldp_ratios <- function(columns, asked) {",
            "  est <- svyratio(reformulate(columns), reformulate(asked), des, na.rm = TRUE)",
            "  ratios <- as.vector(coef(est))",
            "  se <- sqrt(as.vector(SE(est))^2 +",
            "             ldp_ratio_added(columns, asked, ratios, weights(des, \"sampling\")))",
            f"  data.frame(estimate = ratios, std_error = se, ci_low = ratios - {z} * se,",
            f"             ci_high = ratios + {z} * se, row.names = columns)",
            "}",
        ]
    refusal = totals_refusal(design)
    if refusal is None:
        lines += _r_totals(z)
    else:
        lines.append(f"# no svytotal lines: {refusal}")
    lines.append("ldp_results <- list()")
    for q in plan.questions:
        cols = "c(" + ", ".join(_r_string(c) for c in q.columns) + ")"
        lines.append(f"ldp_results[[{_r_string(q.values.question)}]] <- ldp_estimates({cols})")
        if q.asked is not None:
            cols = "c(" + ", ".join(_r_string(c) for c in q.numerator_columns()) + ")"
            lines.append(f"ldp_results[[{_r_string(q.values.question + ' among those asked')}]]"
                         f" <- ldp_ratios({cols}, {_r_string(q.asked_columns[0])})")
    for q in plan.questions:  # after the means and ratios, which keep their places
        if refusal is None and q.total_columns():
            cols = "c(" + ", ".join(_r_string(c) for c in q.total_columns()) + ")"
            lines.append(f"ldp_results[[{_r_string(q.values.question + ' total')}]]"
                         f" <- ldp_totals({cols})")
    lines.append("for (q in names(ldp_results)) { cat(\"\\n\", q, \"\\n\"); "
                 "print(ldp_results[[q]]) }")
    return "\n".join(lines) + "\n"


def _r_totals(z: str) -> list[str]:
    """The R functions of the Horvitz-Thompson totals (svytotal) with, under an fpc, the
    randomization term a_i = w_i leaves out, as ldpsurvey adds it."""
    return [
        "# totals (Horvitz-Thompson: each option's population count, an integer's total;",
        "# an option's count among those asked is its count); with an fpc the randomization",
        "# term with a_i = w_i, as ldpsurvey adds it",
        "ldp_total_added <- function(columns, w) {",
        "  if (is.null(d$ldp_fraction)) return(0 * seq_along(columns))",
        "  sapply(columns, function(col) {",
        "    present <- !is.na(d[[col]])",
        "    a <- ifelse(present, w, 0)",
        "    sum(d$ldp_fraction * a^2 * ifelse(present, d[[paste0(\"ldp_noise_\", col)]], 0))",
        "  })",
        "}",
        "ldp_totals <- function(columns) {",
        "  est <- svytotal(reformulate(columns), des, na.rm = TRUE)",
        "  se <- sqrt(diag(vcov(est)) + ldp_total_added(columns, weights(des, \"sampling\")))",
        f"  data.frame(estimate = coef(est), std_error = se, ci_low = coef(est) - {z} * se,",
        f"             ci_high = coef(est) + {z} * se)",
        "}",
    ]


def _r_categories(step: Any, columns: tuple[str, ...]) -> list[str]:
    """Calibration categories as factors whose first level is ldpsurvey's reference."""
    if isinstance(step, LinearCalibration):
        return []
    groups = (step.labels,) if isinstance(step, PostStratification) else step.labels
    return [f"d${column} <- factor(d${column}, levels = "
            f"c({', '.join(_r_string(str(label)) for label in labels)}))"
            for column, labels in zip(columns, groups, strict=True)]


def _r_calibration(step: Any, columns: tuple[str, ...]) -> list[str]:
    if isinstance(step, PostStratification):
        labels = ", ".join(_r_string(str(label)) for label in step.labels)
        return [f"des <- postStratify(des, ~{columns[0]}, data.frame({columns[0]} = c({labels}),"
                f" Freq = {_r_numbers(step.totals)}))"]
    if isinstance(step, Raking):
        # calibrate(calfun = "raking") reaches rake()'s weights and linearizes exactly (rake()
        # itself approximates the linearization: docs/design-based.md)
        totals = [float(step.totals[0].sum())]
        for total in step.totals:
            totals += [float(t) for t in total[1:]]
        return [f"des <- calibrate(des, ~{' + '.join(columns)}, {_r_numbers(totals)}, "
                f"calfun = \"raking\", epsilon = {max(step.tolerance, 1e-13)!r}, "
                f"maxit = {max(step.max_iterations, 50)})"]
    assert isinstance(step, LinearCalibration)
    lower, upper = step.bounds
    bounds = ("" if (lower, upper) == (-math.inf, math.inf)
              else f", bounds = c({lower!r}, {upper!r}), epsilon = {step.tolerance!r}, "
                   f"maxit = {step.max_iterations}")
    return [f"des <- calibrate(des, ~0 + {' + '.join(columns)}, {_r_numbers(step.totals)}, "
            f"calfun = \"linear\"{bounds})"]


# --- Stata ---------------------------------------------------------------------------------


def stata_script(csv_file: str, design: Design, plan: Layout,
                 replicates: Replicates | None) -> str:
    """Stata lines: import, svyset, svy: mean. Calibration is in the weights only when
    replicates carry it (Stata's svyset has no raking); the comments say what differs."""
    lines = [f"* Generated by `ldpsurvey export --format survey-csv` ({csv_file})",
             *([] if replicates is not None else [
                 "* svy: intervals use Student's t with the design's degrees of freedom "
                 f"({design.degrees_of_freedom} = PSUs - strata), as ldpsurvey's report does"]),
             f"import delimited using \"{csv_file}\", clear varnames(1) stringcols(1)"]
    strata = " strata(stratum)" if design.stratum_count > 1 else ""
    fpc = " fpc(fpc)" if design.has_fpc else ""
    single = f" singleunit({STATA_SINGLE_UNIT[design.lonely_psu]})"
    if replicates is None:
        if design.calibration:
            lines.append("* calibration: Stata's svyset does not rake or calibrate; use "
                         "replicate weights (export --replicates) or R's script for it")
        lines.append(f"svyset psu [pweight=weight],{strata}{fpc}{single} vce(linearized)")
    else:
        first, last = plan.replicate_columns[0], plan.replicate_columns[-1]
        if replicates.kind == "bootstrap":
            lines.append(f"svyset [pweight=weight], bsrweight({first}-{last}) "
                         f"bsn(1) vce(bootstrap) mse")
            lines.append(f"* R's scale for these replicates is {replicates.scale!r}; Stata's "
                         "bootstrap uses 1/R: multiply Stata's variances by "
                         f"{replicates.scale * replicates.count!r}")
        else:
            lines.append(f"svyset [pweight=weight], jkrweight({first}-{last}) vce(jackknife) "
                         "mse")
            lines.append("* JKn multipliers: each replicate's (n_h - 1)/n_h (times 1 - f_h) is "
                         "R's rscales; see the R script")
    if plan.noise:
        lines.append("* with an fpc, add the randomization term: sum of ldp_fraction * a_i^2 * "
                     "ldp_noise_<column> (a_i = weight / sum of weights), as the R script does")
    asked = [q for q in plan.questions if q.asked is not None]
    if asked:
        lines.append("* among those asked (skip logic): svy: ratio of each column over the "
                     "question's _asked column (as the R script's svyratio)")
        if plan.noise:
            lines.append("* with an fpc, add to each ratio R's variance: sum of ldp_fraction * "
                         "b_i^2 * (ldp_noise_<column> + R^2 * ldp_noise_<q>_asked - 2 * R * "
                         "ldp_cross_<column>), b_i = weight / sum of weight * <q>_asked")
        lines.append("* these svy: ratio lines are written, not run: no test here has Stata "
                     "(the R script is the one checked against ldpsurvey report)")
    refusal = totals_refusal(design)
    if refusal is None:
        lines.append("* totals (population counts; an integer's total): svy: total"
                     + ("; with an fpc add sum of ldp_fraction * weight^2 * ldp_noise_<column>"
                        if plan.noise else ""))
    else:
        lines.append(f"* no svy: total lines: {refusal}")
    for q in plan.questions:
        lines.append(f"svy: mean {' '.join(q.columns)}  // {q.values.question}")
        if q.asked is not None:
            den = q.asked_columns[0]
            pairs = " ".join(f"({column_name('r', c)[:32]}: {c}/{den})"
                             for c in q.numerator_columns())
            lines.append(f"svy: ratio {pairs}  // {q.values.question} among those asked")
    for q in plan.questions:
        if refusal is None and q.total_columns():
            lines.append(f"svy: total {' '.join(q.total_columns())}  // {q.values.question} "
                         "totals")
    return "\n".join(lines) + "\n"
