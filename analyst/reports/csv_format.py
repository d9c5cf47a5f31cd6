"""CSV: one row per (question, option); groups, means and distribution values are rows too,
told apart by the `kind` column; a question's warnings (kind `warning`, the text in `option`)
come first. Numbers are raw (shares in [0, 1], means in answer units, totals in people or
answer units)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from .model import NUMBER_FIELDS, Report

COLUMNS = ("survey", "version", "question", "kind", "option", "members", "mechanism", "epsilon",
           "n", "confidence", *NUMBER_FIELDS)


# Design-based reports add these (docs/weights.md); without a design the CSV is unchanged.
DESIGN_COLUMNS = ("population", "deff", "deff_sampling", "deff_privacy", "effective_n")
# `report --lang` adds these: the question's and the row's text in that language.
LANGUAGE_COLUMNS = ("question_text", "option_text")
# Design-based reports add these after DESIGN_COLUMNS, so the columns before keep their places
# and `report --lang` still adds its two at the very end: the row's Horvitz-Thompson total (a
# population count; an integer's population total), its standard error and interval; empty
# where there is none (a mean score, or weights not scaled to a population:
# docs/design-based.md).
TOTAL_COLUMNS = ("total", "total_std_error", "total_ci_low", "total_ci_high")
# And then these (docs/design-based.md §6): the design effect's sampling factor interval
# (high empty: unbounded), whether the split is supported (the interval excludes 1, or the
# answer is disclosed), the design's degrees of freedom (R's degf) and the interval quantile
# (t with df, or normal).
INTERVAL_COLUMNS = ("deff_sampling_low", "deff_sampling_high", "deff_split_supported", "df",
                    "interval_quantile")


def render_csv(report: Report) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    design_block = report.estimates.get("design") or {}
    design = bool(design_block)
    added = DESIGN_COLUMNS + TOTAL_COLUMNS + INTERVAL_COLUMNS
    lang = report.language is not None  # report --lang: the text in two more columns
    writer.writerow(COLUMNS + (added if design else ())
                    + (LANGUAGE_COLUMNS if lang else ()))
    version = report.estimates.get("version", "")
    for q in report.questions():
        for warning in q.warnings:  # e.g. a location map that cannot be read at this n
            writer.writerow([report.survey["id"], version, q.id, "warning", warning, "",
                             q.mechanism, repr(q.epsilon), q.n, q.confidence,
                             *("" for _ in NUMBER_FIELDS),
                             # report --lang: the question's text in its column
                             *((*("" for _ in added if design),
                                q.text, "") if lang else ())])
        for r in q.rows:
            writer.writerow([report.survey["id"], version, q.id, r.kind, r.label,
                             "|".join(r.members), q.mechanism, repr(q.epsilon), q.n,
                             q.confidence,
                             *("" if getattr(r, f) is None else repr(getattr(r, f))
                               for f in NUMBER_FIELDS),
                             *(_design_cells(q.population, r.deff) if design else ()),
                             *(_total_cells(r.total) if design else ()),
                             *(_interval_cells(r.deff, design_block) if design else ()),
                             *((q.text, r.display) if lang else ())])
    return out.getvalue()


def _total_cells(total: Mapping[str, Any] | None) -> list[str]:
    t = total or {}
    return ["" if t.get(k) is None else repr(float(t[k]))
            for k in ("estimate", "std_error", "ci_low", "ci_high")]


def _interval_cells(deff: Mapping[str, Any] | None, design: Mapping[str, Any]) -> list[str]:
    d = deff or {}
    supported = d.get("split_supported")
    return ["" if d.get(k) is None else repr(float(d[k]))
            for k in ("sampling_low", "sampling_high")] + [
        "" if supported is None else str(bool(supported)).lower(),
        "" if design.get("df") is None else str(design["df"]),
        str(design.get("interval_quantile") or "")]


def _design_cells(population: float | None, deff: Mapping[str, Any] | None) -> list[str]:
    d = deff or {}
    return ["" if x is None else repr(float(x))
            for x in (population, d.get("total"), d.get("sampling"), d.get("privacy"),
                      d.get("effective_n"))]
