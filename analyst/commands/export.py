"""`ldpsurvey export --format survey-csv`: the submissions with their pseudo-values, design and
disclosed covariates for the analysts' own tools, with a generated R script and Stata lines
(shared/design/export.py; docs/design-based.md, "Export"), with svytotal / `svy: total` lines
for the totals `report` gives when the weights are scaled to a population.

The pseudo-values are post-processing of the stored reports: exporting them spends no ε. The
design comes as for `report` (docs/weights.md): --weighted (the invitation codes' designs),
--frame FILE --key QUESTION, optionally calibrated (--poststratify, --rake, --calibrate); with
--variance jk1|jkn|bootstrap the replicate weights are exported too. Without any design option
every respondent has weight 1 and is their own PSU (a simple random sample).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from ldpsurvey.shared.errors import AnalysisError, DesignError

from ..source_options import source_options
from .design import design_options, options_from


@click.command("export", short_help="Submissions with pseudo-values, for R and Stata.")
@source_options
@click.option("--format", "fmt", type=click.Choice(["survey-csv"]), default="survey-csv",
              show_default=True, help="survey-csv: one row per submission, an R script and "
                                      "Stata svyset lines.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              required=True, help="Directory to write <survey>-v<version>.csv, .R and .do to "
                                  "(made if missing).")
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.95, show_default=True, help="Confidence level of the script's intervals.")
@click.option("--timeout", type=float, default=30.0, show_default=True,
              help="HTTP timeout in seconds.")
@design_options
def export(server_url: str | None, db_path: str | None, survey_id: str, version: int | None,
           token: str | None, fmt: str, out_dir: Path, confidence: float, timeout: float,
           **design: Any) -> None:
    """Export a survey version's submissions for R's survey package and Stata's svy.

    One CSV row per submission: submission_id, the design (weight, stratum, psu, fpc), every
    disclosed answer, the calibration variables, and each randomized answer's pseudo-values
    (its unbiased per-respondent estimates; no ε is spent), plus replicate weights with
    --variance jk1|jkn|bootstrap. The R script (svydesign or svrepdesign, the calibration,
    svymean, svyratio for a skip-logic question's shares or mean among those asked, and
    svytotal for population counts when the weights are scaled to a population) prints the
    same estimates and standard errors as `ldpsurvey report` with the same options.
    """
    from ldpsurvey.shared.design.export import r_script, stata_script, write_csv
    from ldpsurvey.shared.design.export_asked import asked_integer_columns, asked_share_columns

    from ..design.estimates import pseudo_values, weighted
    from ..design.report import design_source, progress

    if (server_url is None) == (db_path is None):
        raise click.UsageError("give exactly one of --server URL or --db PATH|URL")
    if server_url is not None and not token:
        raise click.UsageError("--server needs --token (or LDPSURVEY_TOKEN)")
    options = options_from(design)
    simple = options is None
    with design_source(server_url, db_path, survey_id, version, token, timeout) as source:
        w = _unweighted(source) if simple else weighted(source, options, progress)
    survey = w.version.compiled.survey
    questions, covariates, asked = [], {}, {}
    for question in survey.questions:
        present, reports = w.respondents.column(question.id)
        if question.disclosed:
            covariates[question.id] = _disclosed_values(question, w, present, reports)
            continue
        mechanism = w.version.compiled.mechanisms[question.id]
        hidden = getattr(question, "not_asked", False)  # skip logic on a randomized answer
        if question.extended and question.unit.numeric:  # asked_geometric's pairs
            present, reports = w.respondents.reports(question.id, mechanism)
            try:
                everyone, asked[question.id] = asked_integer_columns(mechanism, reports,
                                                                     present)
            except DesignError as exc:  # a hidden decimal's grid report (asked_grid)
                progress(f"left out {question.id!r}: {exc.message}")
                continue
            questions.append(everyone)
            continue
        try:
            pv = pseudo_values(w, question.id)
        except DesignError as exc:
            progress(f"left out {question.id!r}: {exc.message}")
            continue
        if hidden and pv.kind == "shares":
            pv, asked[question.id] = asked_share_columns(
                question, getattr(mechanism, "groups", {}) or {}, pv)
        questions.append(pv)
    if not questions:
        raise AnalysisError(f"survey {survey.id!r} has no randomized question with "
                            "pseudo-values to export")
    replicates = None if simple else w.variance()
    if isinstance(replicates, str):
        replicates = None
    stem = f"{w.version.id}-v{w.version.version}"
    csv_path, r_path, stata_path = (out_dir / f"{stem}{ext}" for ext in (".csv", ".R", ".do"))
    progress(f"writing {w.respondents.n:,} rows...")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with csv_path.open("w", encoding="utf-8", newline="") as handle:
            plan = write_csv(handle, w.design, list(w.respondents.ids), questions, covariates,
                             replicates, asked)
        r_path.write_text(r_script(csv_path.name, w.design, plan, replicates, confidence),
                          encoding="utf-8")
        stata_path.write_text(stata_script(csv_path.name, w.design, plan, replicates),
                              encoding="utf-8")
    except OSError as exc:
        raise AnalysisError(f"cannot write to {out_dir}: {exc.strerror or exc}") from None
    click.echo(f"wrote {csv_path} ({w.respondents.n:,} submissions; {w.design.describe()}), "
               f"{r_path} and {stata_path}", err=True)


def _unweighted(source: Any) -> Any:
    """Every respondent with weight 1, each their own PSU: a simple random sample."""
    from ldpsurvey.shared.design import Design

    from ..design.data import equal_weights, refuse_two_server
    from ..design.estimates import DesignOptions, Weighted
    from ..design.report import progress

    version = source.version()
    refuse_two_server(version)
    progress(f"reading the submissions of {version.id} v{version.version}...")
    respondents = source.respondents()
    if respondents.n == 0:
        raise AnalysisError(f"survey {version.id!r} version {version.version} has no "
                            "submissions yet: nothing to export")
    joined = equal_weights(respondents)
    return Weighted(version, respondents, Design.build(joined.weights), joined, DesignOptions())


def _disclosed_values(question: Any, w: Any, present: Any, reports: list[Any]) -> list[Any]:
    """A disclosed question's answers as given (option labels, yes/no, integers); None where
    not answered."""
    mechanism = w.version.compiled.mechanisms[question.id]
    values = iter(mechanism.validate_reports(reports))
    out: list[Any] = []
    for answered in present.tolist():
        if not answered:
            out.append(None)
            continue
        out.append(question.unit.data_value(question, next(values)))
    return out
