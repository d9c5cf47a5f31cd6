"""A terminal table per question, with the columns every text format shares (columns.py)."""

from __future__ import annotations

import textwrap

from .columns import columns, value_cells
from .design_view import DESIGN_COLUMN_NOTES, design_lines
from .model import (
    ASKED_GROUP,
    ASKED_MEAN,
    ASKED_OPTION,
    CDF,
    COLUMN_NOTES,
    DISTRIBUTION,
    GROUP,
    MEAN,
    OPTION,
    QUANTILE,
    QuestionView,
    Report,
    Row,
    epsilon_words,
    hidden_options_note,
    listed_options,
)


def render_table(report: Report) -> str:
    conf = f"{report.confidence:.0%}"
    lines = [f"{report.title} ({report.survey['id']} v{report.estimates.get('version', '?')})",
             f"{report.n_submissions:,} submission{'' if report.n_submissions == 1 else 's'}; "
             f"total epsilon per respondent "
             f"{report.total_epsilon:g}; {conf} intervals",
             *design_lines(report),
             ""]
    for q in report.questions():
        lines += question_block(q, report)
        lines.append("")
    lines += textwrap.wrap(DESIGN_COLUMN_NOTES if report.estimates.get("design")
                           else COLUMN_NOTES, 96)
    return "\n".join(lines) + "\n"


def question_block(q: QuestionView, report: Report) -> list[str]:
    head = [f"{q.id}: {q.text}",
            f"  {q.type}, {q.mechanism}, {epsilon_words(q)}, n = {q.n:,}"
            + (" (optional)" if q.optional else "")]
    head += [f"  WARNING: {warning}" for warning in q.warnings]
    head += [f"  note: {note}" for note in q.notes]
    truth = report.truth
    header = ["", *(c.header for c in columns(q, truth))]
    body: list[list[str]] = []
    notes: list[str] = []
    for kind, title in ((OPTION, None), (GROUP, "groups"), (MEAN, None), (QUANTILE, None),
                        (DISTRIBUTION, "distribution"), (CDF, "CDF"),
                        (ASKED_OPTION, q.among_title),
                        (ASKED_GROUP, f"groups {q.among_title}"),
                        (ASKED_MEAN, None if q.of_kind(ASKED_OPTION) else q.among_title)):
        rows = q.of_kind(kind)
        if not rows or (kind == DISTRIBUTION and not q.distribution_is_informative()):
            continue
        if title:
            body.append([f"{title}:"] + [""] * (len(header) - 1))
        hidden = 0
        if kind == OPTION:
            rows, hidden = listed_options(q)
        for r in rows:
            body.append(_cells(q, r, truth))
            if r.kind == GROUP:
                notes.append(f"{r.display} = {' + '.join(r.display_members)}")
        if hidden:
            notes.append(hidden_options_note(hidden))
    out = head + ["  " + line for line in text_grid(header, body)] + [f"  {n}" for n in notes]
    if q.of_kind(DISTRIBUTION) and not q.distribution_is_informative() and q.n:
        out += ["  " + line for line in textwrap.wrap(q.distribution_summary(), 96)]
    return out


def _cells(q: QuestionView, r: Row, truth) -> list[str]:
    label = f"  {r.label}" if r.kind == DISTRIBUTION else r.display
    return [label, *value_cells(q, r, truth)]


def text_grid(header: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        first = row[0].ljust(widths[0])
        rest = [cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return [line(header), "  ".join("-" * w for w in widths), *map(line, body)]
