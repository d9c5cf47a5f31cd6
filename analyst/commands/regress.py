"""`ldpsurvey regress`: regression of a randomized outcome on covariates, through the channels,
from a server (HTTP) or a server database (--db, read-only) with the same function."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from ldpsurvey.shared.cli_help import language_tag

from ..reports.language import LanguageRequest, request
from ..reports.regression_format import REGRESSION_FORMATS, render_regression
from ..source_options import source_options
from .design import INTERVAL_QUANTILES, design_options, options_from
from .output import emit


@click.command("regress", short_help="Logistic/linear regression through the randomization.")
@source_options
@click.option("--outcome", required=True,
              help="The outcome question: yes/no or categorical (logistic), integer or "
                   "decimal (linear).")
@click.option("--level", help="For a categorical outcome: the option modelled against the rest.")
@click.option("--covariates", default="",
              help="Comma-separated covariate questions: disclosed ones, and at most two "
                   "randomized yes/no or categorical ones; also covariates the invitation "
                   "codes carry (invites create --carry; docs/sensitive-module.md).")
@click.option("--format", "fmt", type=click.Choice(list(REGRESSION_FORMATS)), default="table",
              show_default=True, help="Output format (html: a page with a forest plot).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file instead of standard output.")
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.95, show_default=True, help="Confidence level of the intervals.")
@click.option("--timeout", type=float, default=120.0, show_default=True,
              help="HTTP timeout in seconds.")
@click.option("--lang", default=None, metavar="TAG", callback=language_tag,
              help="Name questions and options in this language of the survey (a BCP 47 tag "
                   "such as es), in every format: JSON adds `labels`, CSV text columns. "
                   "--outcome, --level and --covariates stay ids and labels. A language "
                   "the survey has no text in is an error.")
@click.option("--interval-quantile", type=click.Choice(INTERVAL_QUANTILES),
              help="Design-based fits: t (default) uses Student's t with the residual degrees "
                   "of freedom, the design's (R's degf) + 1 - coefficients, as R's svyglm "
                   "confint and summary; normal the normal quantile.")
@design_options
def regress(server_url: str | None, db_path: str | None, survey_id: str, version: int | None,
            token: str | None, outcome: str, level: str | None, covariates: str, fmt: str,
            out_path: Path | None, confidence: float, timeout: float, lang: str | None,
            interval_quantile: str | None, **design: Any) -> None:
    """Regress a randomized outcome on covariates by maximum likelihood through the known
    randomization (docs/regression.md): coefficients, odds ratios, intervals, p-values and
    what privacy costs each standard error.

    With a design (--weighted, --frame, a calibration; docs/weights.md): pseudo-likelihood
    weights and design-based (sandwich) standard errors over PSUs within strata; intervals
    and p-values from t with the residual degrees of freedom (--interval-quantile)."""
    if (server_url is None) == (db_path is None):
        raise click.UsageError("give exactly one of --server URL or --db PATH|URL")
    if server_url is not None and not token:
        raise click.UsageError("--server needs --token (or LDPSURVEY_TOKEN)")
    options = options_from(design)
    if interval_quantile is not None:
        if options is None:
            raise click.UsageError("--interval-quantile goes with a design-based fit "
                                   "(--weighted, --frame, a calibration, --variance or "
                                   "--lonely-psu)")
        options = replace(options, quantile=interval_quantile)
    wanted = request(lang)
    click.echo(f"fitting {outcome} on {covariates or 'an intercept'}...", err=True)
    if options is not None:
        doc, survey = _design_based(server_url, db_path, survey_id, version, token, outcome, level,
                                    covariates, confidence, timeout, options, wanted)
    elif server_url is not None:
        assert token is not None
        doc, survey = _fetch(server_url, survey_id, token, outcome, level, covariates,
                             confidence, version, timeout)
    else:
        assert db_path is not None
        doc, survey = _from_db(db_path, survey_id, outcome, level, covariates, confidence,
                               version, wanted)
    text = render_regression(doc, fmt, survey,
                             None if wanted is None else wanted.language(survey))
    emit(text, out_path, f"{fmt} regression")


def _design_based(server_url: str | None, db_path: str | None, survey_id: str,
                  version: int | None, token: str | None, outcome: str, level: str | None,
                  covariates: str, confidence: float, timeout: float, options: Any,
                  wanted: LanguageRequest | None) -> tuple[Any, Any]:
    """(design-based regression document, the survey of its version); a --lang the survey
    lacks is refused before the weighting."""
    from ldpsurvey.server import regression

    from ..design.estimates import weighted
    from ..design.regress import design_regression
    from ..design.report import check_language, design_source, progress

    spec = regression.Spec(outcome, regression.parse_covariates(covariates), level)
    with design_source(server_url, db_path, survey_id, version, token, timeout) as source:
        check_language(source, wanted)
        w = weighted(source, options, progress)
        return design_regression(w, spec, confidence, progress), w.version.survey


def _fetch(server_url: str, survey_id: str, token: str, outcome: str, level: str | None,
           covariates: str, confidence: float, version: int | None, timeout: float
           ) -> tuple[Any, Any]:
    """(regression document, the survey of its version) from the server."""
    from ..reports.sources import fetch_with_survey

    params = {"outcome": outcome, "confidence": repr(float(confidence))}
    if covariates:
        params["covariates"] = covariates
    if level is not None:
        params["level"] = level
    return fetch_with_survey(server_url, survey_id, "regression", params, token, version,
                             timeout)


def _from_db(target: str, survey_id: str, outcome: str, level: str | None, covariates: str,
             confidence: float, version: int | None, wanted: LanguageRequest | None
             ) -> tuple[Any, Any]:
    """(regression document, the survey of its version) from a store; a --lang the survey
    lacks is refused before the fit."""
    from ldpsurvey.server import regression, surveys

    from ..reports.sources import read_only_store

    with read_only_store(target) as store:
        record = surveys.get(store, survey_id, version)
        survey = record.manifest["survey"]
        if wanted is not None:
            wanted.language(survey)
        spec = regression.Spec(outcome, regression.parse_covariates(covariates), level)
        return regression.regression(store, survey_id, record.version, spec, confidence), survey
