"""`ldpsurvey report`: an estimate report from a server (HTTP) or a local database."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from ldpsurvey.shared.cli_help import language_tag

from ..reports.language import LanguageRequest, request
from ..reports.model import FORMATS, render
from ..source_options import source_options
from .design import INTERVAL_QUANTILES, design_options, options_from
from .output import emit


@click.command("report", short_help="Estimates as a table, JSON, CSV, Markdown or HTML.")
@source_options
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="table",
              show_default=True, help="Output format.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file instead of standard output.")
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.95, show_default=True, help="Confidence level of the intervals.")
@click.option("--timeout", type=float, default=30.0, show_default=True,
              help="HTTP timeout in seconds.")
@click.option("--crosstab", nargs=2, metavar="ROWS COLS",
              help="Instead: joint and conditional estimates of two questions "
                   "(docs/crosstabs.md); a side may be QUESTION:GROUP, one of the question's "
                   "declared groups against the rest.")
@click.option("--by", "by", metavar="QUESTION",
              help="Instead: every randomized question's estimates within each subgroup of a "
                   "disclosed question (docs/disclosed.md), or of a covariate the invitation "
                   "codes carry (invites create --carry; docs/sensitive-module.md).")
@click.option("--bins", help="Bin edges for the integer question(s) of --crosstab or --by "
                             "(or a disclosed decimal of --by, in its units), e.g. 0,5,10 "
                             "(refused when no question takes bins).")
@click.option("--row-bins", help="Crosstab bin edges for an integer ROWS question.")
@click.option("--col-bins", help="Crosstab bin edges for an integer COLS question.")
@click.option("--crosstab-source", type=click.Choice(["auto", "declared", "reports"]),
              default="auto", show_default=True,
              help="declared: the survey's declared crosstab; reports: a pass over the stored "
                   "reports; auto: declared when the survey declares this pair.")
@click.option("--batch", "batch_id",
              help="Two-server survey: report this batch from the leader (--server); collects "
                   "it if it is not yet (a batch is collected once, later calls return the "
                   "same noisy totals). 'all': every aggregated batch of the version together, "
                   "with the design options (--weighted, --poststratify, --variance groups; "
                   "docs/weights.md).")
@click.option("--lang", default=None, metavar="TAG", callback=language_tag,
              help="Label questions, options, groups and regions in this language of the "
                   "survey (a BCP 47 tag such as es), in every report (crosstabs, --by, "
                   "--batch, designs) and format: JSON adds `labels`, CSV text columns. "
                   "Estimates keep the option labels as values. A language the survey has no "
                   "text in is an error.")
@click.option("--interval-quantile", type=click.Choice(INTERVAL_QUANTILES),
              help="Design-based intervals: t (default) uses Student's t with the design's "
                   "degrees of freedom (PSUs minus strata, R's degf; Stata's svy); normal the "
                   "normal quantile (R's confint default).")
@design_options
def report(server_url: str | None, db_path: str | None, survey_id: str, version: int | None,
           token: str | None, fmt: str, out_path: Path | None, confidence: float,
           timeout: float, crosstab: tuple[str, str] | None, bins: str | None,
           row_bins: str | None, col_bins: str | None, crosstab_source: str,
           by: str | None, batch_id: str | None, lang: str | None,
           interval_quantile: str | None, **design: Any) -> None:
    """Estimates of a survey as a table, JSON, CSV, Markdown or a self-contained HTML page.

    Per question: n, ε and mechanism; per option the unbiased estimate, its standard error,
    interval, worst-case variance bound and the consistent (non-negative) view; groups; for
    integer questions the mean and the estimated distribution.

    With a design (--weighted, --frame, a calibration, --variance or --lonely-psu; see
    docs/weights.md): design-based estimates with their design effect split into sampling and
    privacy and the effective n; the HTML page shows them beside the unweighted ones.
    """
    from ..reports.sources import db_report, fetch_report

    if (server_url is None) == (db_path is None):
        raise click.UsageError("give exactly one of --server URL or --db PATH|URL")
    if server_url is not None and not token:
        raise click.UsageError("--server needs --token (or LDPSURVEY_TOKEN)")
    if crosstab is None and by is None and (bins or row_bins or col_bins):
        raise click.UsageError("--bins, --row-bins and --col-bins need --crosstab ROWS COLS "
                               "(--bins also works with --by QUESTION)")
    if by is not None and (row_bins or col_bins):
        raise click.UsageError("--row-bins and --col-bins need --crosstab ROWS COLS; with --by, "
                               "give --bins")
    if by is not None and crosstab is not None:
        raise click.UsageError("give --by QUESTION or --crosstab ROWS COLS, not both")
    if by is not None and batch_id is not None:
        raise click.UsageError("--batch reports a two-server batch: drop --by")
    options = options_from(design)
    if interval_quantile is not None:
        if options is None or batch_id == "all":
            raise click.UsageError("--interval-quantile goes with a design-based report of an "
                                   "LDP survey (--weighted, --frame, a calibration, "
                                   "--variance or --lonely-psu)")
        options = replace(options, quantile=interval_quantile)
    wanted = request(lang)
    if batch_id == "all":
        text = _two_server_design_text(server_url, survey_id, token, version, options, fmt,
                                       confidence, timeout, crosstab, wanted)
    elif options is not None:
        text = _design_text(server_url, db_path, survey_id, version, token, fmt, confidence,
                            timeout, options, by, (bins, row_bins, col_bins), crosstab,
                            batch_id, wanted)
    elif batch_id is not None:
        text = _two_server_text(server_url, survey_id, batch_id, token, fmt, confidence,
                                timeout, crosstab, version, wanted)
    elif by is not None:
        text = _subgroup_text(server_url, db_path, survey_id, version, token, fmt, confidence,
                              timeout, by, bins, wanted)
    elif crosstab is not None:
        text = _crosstab_text(server_url, db_path, survey_id, version, token, fmt, confidence,
                              timeout, crosstab, bins, row_bins, col_bins, crosstab_source,
                              wanted)
    else:
        if server_url is not None:
            assert token is not None
            estimates = fetch_report(server_url, survey_id, token, confidence, version, timeout)
        else:
            assert db_path is not None
            estimates = db_report(db_path, survey_id, confidence, version)
        text = render(estimates if wanted is None else wanted.report(estimates), fmt)
    emit(text, out_path, f"{fmt} report")


def _design_text(server_url: str | None, db_path: str | None, survey_id: str,
                 version: int | None, token: str | None, fmt: str, confidence: float,
                 timeout: float, options: Any, by: str | None,
                 all_bins: tuple[str | None, str | None, str | None],
                 crosstab: tuple[str, str] | None, batch_id: str | None,
                 wanted: LanguageRequest | None = None) -> str:
    """A design-based report (docs/weights.md)."""
    from ldpsurvey.shared.joint_features import parse_bins

    from ..design.report import (
        design_crosstab_text,
        design_report_text,
        design_source,
        design_subgroup_text,
    )

    if batch_id is not None:
        raise click.UsageError("design options take every batch of a two-server survey "
                               "together: --batch all (docs/weights.md, \"Two-server "
                               "surveys\")")
    bins, row_bins, col_bins = all_bins
    with design_source(server_url, db_path, survey_id, version, token, timeout) as source:
        if crosstab is not None:
            return design_crosstab_text(source, options, fmt, confidence, crosstab,
                                        parse_bins(bins), parse_bins(row_bins),
                                        parse_bins(col_bins), wanted)
        if by is not None:
            return design_subgroup_text(source, options, fmt, confidence, by, parse_bins(bins),
                                        wanted)
        return design_report_text(source, options, fmt, confidence, wanted)


def _two_server_design_text(server_url: str | None, survey_id: str, token: str | None,
                            version: int | None, options: Any, fmt: str, confidence: float,
                            timeout: float, crosstab: tuple[str, str] | None,
                            wanted: LanguageRequest | None = None) -> str:
    """Every batch of a two-server survey version, combined by its design (cells, groups)."""
    from ..design.estimates import DesignOptions
    from ..design.two_server import two_server_design_text

    if server_url is None:
        raise click.UsageError("--batch all reads the leader: give --server")
    if crosstab is not None:
        raise click.UsageError("--batch all reports the survey's declared crosstabs: drop "
                               "--crosstab")
    assert token is not None
    return two_server_design_text(server_url, survey_id, token, version,
                                  options if options is not None else DesignOptions(), fmt,
                                  confidence, timeout, wanted)


def _subgroup_text(server_url: str | None, db_path: str | None, survey_id: str,
                   version: int | None, token: str | None, fmt: str, confidence: float,
                   timeout: float, by: str, bins: str | None,
                   wanted: LanguageRequest | None = None) -> str:
    """The subgroup report of a disclosed question in one format (same function as HTTP)."""
    from ldpsurvey.shared.joint_features import parse_bins

    from ..reports.subgroups import db_subgroups, fetch_subgroups, render_subgroups

    edges = parse_bins(bins)
    if server_url is not None:
        assert token is not None
        document, survey = fetch_subgroups(server_url, survey_id, token, by, confidence,
                                           version, timeout, edges)
    else:
        assert db_path is not None
        document, survey = db_subgroups(db_path, survey_id, by, confidence, version, edges)
    return render_subgroups(survey, document, fmt,
                            None if wanted is None else wanted.language(survey))


def _two_server_text(server_url: str | None, survey_id: str, batch_id: str,
                     token: str | None, fmt: str, confidence: float, timeout: float,
                     crosstab: tuple[str, str] | None, version: int | None,
                     wanted: LanguageRequest | None = None) -> str:
    from ..reports.two_server import render_two_server
    from ..reports.two_server_sources import fetch_two_server_report

    if server_url is None:
        raise click.UsageError("--batch reads the leader: give --server")
    if crosstab is not None or version is not None:
        raise click.UsageError("--batch reports the batch's own survey version and its "
                               "declared crosstabs: drop --crosstab/--survey-version")
    assert token is not None
    report = fetch_two_server_report(server_url, survey_id, batch_id, token, confidence, timeout)
    return render_two_server(report if wanted is None else wanted.report(report), fmt)


def _crosstab_text(server_url: str | None, db_path: str | None, survey_id: str,
                   version: int | None, token: str | None, fmt: str, confidence: float,
                   timeout: float, pair: tuple[str, str], bins: str | None,
                   row_bins: str | None, col_bins: str | None, source: str,
                   wanted: LanguageRequest | None = None) -> str:
    """The crosstab report of two questions in one format (same endpoint/function as HTTP)."""
    from ldpsurvey.shared.joint_features import parse_bins

    from ..reports.crosstab_sources import CrosstabQuery, db_crosstab, fetch_crosstab
    from ..reports.crosstab_view import render_crosstab

    query = CrosstabQuery(pair[0], pair[1], parse_bins(row_bins), parse_bins(col_bins), source,
                          confidence, parse_bins(bins))
    if server_url is not None:
        assert token is not None
        report = fetch_crosstab(server_url, survey_id, token, query, version, timeout)
    else:
        assert db_path is not None
        report = db_crosstab(db_path, survey_id, query, version)
    return render_crosstab(report if wanted is None else wanted.crosstab(report), fmt)

