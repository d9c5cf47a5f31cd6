"""A terminal table per question: estimate, std error, interval, s.e. bound, consistent view."""

from __future__ import annotations

import textwrap

from .model import DISTRIBUTION, GROUP, MEAN, OPTION, QuestionView, Report, Row, fmt, interval, pct

MAX_ROWS = 40  # options listed per question in the terminal; other formats list them all


def render_table(report: Report) -> str:
    conf = f"{report.confidence:.0%}"
    lines = [f"{report.title} ({report.survey['id']} v{report.estimates.get('version', '?')})",
             f"{report.n_submissions:,} submission{'' if report.n_submissions == 1 else 's'}; "
             f"total epsilon per respondent "
             f"{report.total_epsilon:g}; {conf} intervals",
             ""]
    for q in report.questions():
        lines += question_block(q, report)
        lines.append("")
    lines.append("estimate: unbiased, can be negative by noise; consistent: non-negative, sums "
                 "to 100% (Norm-Sub);")
    lines.append("s.e. bound: worst-case standard error over every possible truth "
                 "(square root of the variance bound).")
    return "\n".join(lines) + "\n"


def question_block(q: QuestionView, report: Report) -> list[str]:
    head = [f"{q.id}: {q.text}",
            f"  {q.type}, {q.mechanism}, epsilon {q.epsilon:g}, n = {q.n:,}"
            + (" (optional)" if q.optional else "")]
    head += [f"  note: {note}" for note in q.notes]
    truth = report.truth
    with_truth = truth is not None
    header = ["", "estimate", "std err", f"{q.confidence:.0%} interval", "s.e. bound",
              "consistent"] + (["true"] if with_truth else [])
    body: list[list[str]] = []
    notes: list[str] = []
    for kind, title in ((OPTION, None), (GROUP, "groups"), (MEAN, None),
                        (DISTRIBUTION, "distribution")):
        rows = q.of_kind(kind)
        if not rows or (kind == DISTRIBUTION and not q.distribution_is_informative()):
            continue
        if title:
            body.append([f"{title}:"] + [""] * (len(header) - 1))
        hidden = max(0, len(rows) - MAX_ROWS) if kind == OPTION else 0
        if hidden:
            keep = set(sorted(range(len(rows)), key=lambda i: -(rows[i].estimate or 0))
                       [:MAX_ROWS])
            rows = [r for i, r in enumerate(rows) if i in keep]
        for r in rows:
            body.append(_cells(q, r, truth))
            if r.kind == GROUP:
                notes.append(f"{r.label} = {' + '.join(r.members)}")
        if hidden:
            notes.append(f"{hidden:,} more options not shown: the {MAX_ROWS} largest are listed; "
                         "--format csv lists all.")
    out = head + ["  " + line for line in _grid(header, body)] + [f"  {n}" for n in notes]
    if q.of_kind(DISTRIBUTION) and not q.distribution_is_informative() and q.n:
        out += ["  " + line for line in textwrap.wrap(q.distribution_summary(), 96)]
    return out


def _cells(q: QuestionView, r: Row, truth) -> list[str]:
    label = r.label
    if r.kind == DISTRIBUTION:
        label = f"  {r.label}"
    cells = [label, fmt(q, r, r.estimate), fmt(q, r, r.std_error), interval(q, r),
             fmt(q, r, r.std_error_bound),
             "" if r.kind == MEAN else pct(r.consistent)]
    if truth is not None:
        cells.append(fmt(q, r, truth.of(q.id, r.kind, r.label)))
    return cells


def _grid(header: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        first = row[0].ljust(widths[0])
        rest = [cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return [line(header), "  ".join("-" * w for w in widths), *map(line, body)]
