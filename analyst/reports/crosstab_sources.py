"""Where a crosstab report's numbers come from: the server's crosstab endpoint over HTTP, or
the same server function on a local database opened read-only (one estimator either way)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ldpsurvey.shared.errors import ReportRenderError

from .crosstab_view import CrosstabReport
from .sources import fetch_with_survey


@dataclass(frozen=True)
class CrosstabQuery:
    """Which crosstab: two question ids, optional bins, the source and confidence level."""

    rows: str
    cols: str
    row_bins: Sequence[int] | None = None
    col_bins: Sequence[int] | None = None
    source: str = "auto"
    confidence: float = 0.95
    bins: Sequence[int] | None = None  # for whichever of the two is an integer question

    def params(self) -> dict[str, str]:
        out = {"rows": self.rows, "cols": self.cols, "source": self.source,
               "confidence": repr(float(self.confidence))}
        for name, bins in (("row_bins", self.row_bins), ("col_bins", self.col_bins),
                           ("bins", self.bins)):
            if bins is not None:
                out[name] = ",".join(str(b) for b in bins)
        return out


def fetch_crosstab(server_url: str, survey_id: str, token: str, query: CrosstabQuery,
                   version: int | None = None, timeout: float = 30.0) -> CrosstabReport:
    """GET the crosstab (analyst token) and the survey version it is of (public)."""
    doc, survey = fetch_with_survey(server_url, survey_id, "crosstab", query.params(), token,
                                    version, timeout)
    return CrosstabReport(document=doc, survey=survey)


def db_crosstab(target: str | Path, survey_id: str, query: CrosstabQuery,
                version: int | None = None) -> CrosstabReport:
    """The crosstab of a survey in a server database: a SQLite file (opened read-only) or a
    postgresql:// URL."""
    from ldpsurvey.server import crosstabs, surveys
    from ldpsurvey.server.common.errors import StoreError
    from ldpsurvey.server.store import open_store

    try:
        store = open_store(target, read_only=True, migrate=False)
    except StoreError as exc:
        raise ReportRenderError(exc.message) from None
    try:
        record = surveys.get(store, survey_id, version)
        doc = crosstabs.crosstab(store, survey_id, record.version, query.rows, query.cols,
                                 query.row_bins, query.col_bins, query.confidence, query.source,
                                 query.bins)
        return CrosstabReport(document=doc, survey=record.manifest["survey"])
    except sqlite3.Error as exc:
        raise ReportRenderError(f"cannot read database {target}: {exc}") from None
    finally:
        store.close()
