"""Markdown: a heading and a pipe table per question, the ε budget, and what the numbers mean."""

from __future__ import annotations

from .model import GROUP, MEAN, QuestionView, Report, Row, fmt, interval, pct
from .text import EXPLANATION_MD


def render_markdown(report: Report) -> str:
    lines = [f"# {_esc(report.title)}", "",
             f"Survey `{report.survey['id']}` version {report.estimates.get('version', '?')}: "
             f"{report.n_submissions:,} submissions, {report.confidence:.0%} intervals.", "",
             "## Privacy budget", "",
             "| question | epsilon |", "|---|---:|"]
    lines += [f"| {_esc(q['id'])} | {float(q['epsilon']):g} |" for q in report.survey["questions"]]
    lines += [f"| **total per respondent** | **{report.total_epsilon:g}** |", ""]
    for q in report.questions():
        lines += _question(q, report)
    lines += ["## Reading these numbers", "", EXPLANATION_MD, ""]
    return "\n".join(lines)


def _question(q: QuestionView, report: Report) -> list[str]:
    out = [f"## {_esc(q.id)}", "", f"{_esc(q.text)}", "",
           f"{q.type}, mechanism `{q.mechanism}`, epsilon {q.epsilon:g}, n = {q.n:,}"
           + (" (optional)" if q.optional else ""), ""]
    out += [f"> {_esc(note)}" for note in q.notes] + ([""] if q.notes else [])
    truth = report.truth
    header = ["kind", "option", "estimate", "std error", f"{q.confidence:.0%} interval",
              "variance bound", "consistent"] + (["true"] if truth else [])
    out += ["| " + " | ".join(header) + " |",
            "|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|"]
    for r in q.rows:
        out.append("| " + " | ".join(_cells(q, r, report)) + " |")
    out.append("")
    return out


def _cells(q: QuestionView, r: Row, report: Report) -> list[str]:
    label = r.label if r.kind != GROUP else f"{r.label} ({' + '.join(r.members)})"
    cells = [r.kind, _esc(label), fmt(q, r, r.estimate), fmt(q, r, r.std_error),
             interval(q, r), "–" if r.variance_bound is None else f"{r.variance_bound:.3g}",
             "" if r.kind == MEAN else pct(r.consistent)]
    if report.truth:
        cells.append(fmt(q, r, report.truth.of(q.id, r.kind, r.label)))
    return cells


def _esc(text: str) -> str:
    """Text safe inside a Markdown table cell or heading."""
    return (str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
            .replace("<", "&lt;"))


__all__ = ["render_markdown"]
