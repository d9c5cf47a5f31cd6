"""The value columns of a question's table, the same in every text format (terminal, Markdown,
HTML): the estimate, its standard error and interval, the worst-case bound and the consistent
view, a design-based report's design effect and totals instead of the bound (design_view.py),
and the truth when known. Here rather than in model.py, which every view module imports, so
that model.py imports none of them back."""

from __future__ import annotations

from .design_view import design_columns
from .model import NUMBER_KINDS, Column, QuestionView, Row, Truth, fmt, interval, pct


def columns(q: QuestionView, truth: Truth | None) -> list[Column]:
    """The value columns after the label, in order: the same in every text format."""
    cols = [Column("estimate", lambda q, r, t: fmt(q, r, r.estimate)),
            Column("std error", lambda q, r, t: fmt(q, r, r.std_error)),
            Column(f"{q.confidence:.0%} interval", lambda q, r, t: interval(q, r)),
            Column("s.e. bound", lambda q, r, t: fmt(q, r, r.std_error_bound)),
            Column("consistent",
                   lambda q, r, t: "" if r.kind in NUMBER_KINDS else pct(r.consistent))]
    if q.design_based:
        cols = [c for c in cols if c.header != "s.e. bound"] + design_columns(q)
    if truth is not None:
        cols.append(Column("true", lambda q, r, t: fmt(q, r, t.of(q.id, r.kind, r.label))))
    return cols


def value_cells(q: QuestionView, r: Row, truth: Truth | None) -> list[str]:
    return [c.cell(q, r, truth) for c in columns(q, truth)]
