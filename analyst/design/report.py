"""`ldpsurvey report` with a design (docs/weights.md): read the submissions and their designs
from `--db` or `--server`, weight (and calibrate) them, and render the design-based document in
any report format, with today's unweighted estimates beside them where a format shows both."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

from ..reports.language import LanguageRequest
from .data import DesignSource, RemoteSource, db_source
from .estimates import DesignOptions, estimate_document, subgroup_document, weighted


@contextmanager
def design_source(server_url: str | None, db_path: str | None, survey_id: str,
                  version: int | None, token: str | None,
                  timeout: float) -> Iterator[DesignSource]:
    """The source of a design-based analysis: the database read-only, or the analyst API."""
    if server_url is not None:
        assert token is not None
        yield RemoteSource(server_url, survey_id, token, version, timeout)
        return
    assert db_path is not None
    with db_source(db_path, survey_id, version) as source:
        yield source


def progress(message: str) -> None:
    click.echo(message, err=True)


def check_language(source: DesignSource, lang: LanguageRequest | None) -> None:
    """Refuse a --lang the survey lacks before the weighting, which is the long part at 10^6."""
    if lang is not None:
        lang.language(source.version().survey)


def design_report_text(source: DesignSource, options: DesignOptions, fmt: str,
                       confidence: float, lang: LanguageRequest | None = None) -> str:
    """The design-based report of a survey version in one format (labelled in `lang`, a
    --lang request, when given)."""
    from ..reports.model import Report, render

    check_language(source, lang)
    w = weighted(source, options, progress)
    unweighted = source.estimates(confidence)
    document = estimate_document(w, confidence, unweighted)
    report = Report(w.version.survey, document, unweighted=unweighted)
    return render(report if lang is None else lang.report(report), fmt)


def design_subgroup_text(source: DesignSource, options: DesignOptions, fmt: str,
                         confidence: float, by: str, bins: Sequence[int] | None,
                         lang: LanguageRequest | None = None) -> str:
    """The design-based subgroup report of a disclosed question in one format."""
    from ..reports.subgroups import render_subgroups

    check_language(source, lang)
    w = weighted(source, options, progress)
    document: dict[str, Any] = subgroup_document(w, by, confidence, bins)
    return render_subgroups(w.version.survey, document, fmt,
                            None if lang is None else lang.language(w.version.survey))


def design_crosstab_text(source: DesignSource, options: DesignOptions, fmt: str,
                         confidence: float, pair: tuple[str, str],
                         bins: Sequence[int] | None = None,
                         row_bins: Sequence[int] | None = None,
                         col_bins: Sequence[int] | None = None,
                         lang: LanguageRequest | None = None) -> str:
    """The design-based crosstab of two sides (a question, or QUESTION:GROUP) in one format;
    `bins` go to whichever side is an integer question, `row_bins`/`col_bins` to one side."""
    from ldpsurvey.shared.joint_features import survey_pair_bins

    from ..reports.crosstab_view import CrosstabReport, render_crosstab
    from .crosstab import crosstab_document

    version = source.version()
    check_language(source, lang)
    if bins is not None:
        row_bins, col_bins = survey_pair_bins(version.compiled.survey, pair,
                                              ",".join(map(str, bins)))
    w = weighted(source, options, progress)
    document = crosstab_document(w, pair[0], pair[1], confidence, row_bins, col_bins)
    report = CrosstabReport(document, w.version.survey)
    return render_crosstab(report if lang is None else lang.crosstab(report), fmt)
