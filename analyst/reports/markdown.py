"""Markdown: a heading and a pipe table per question, the ε budget, and what the numbers mean."""

from __future__ import annotations

from .columns import columns, value_cells
from .design_view import design_lines, reading_guide
from .model import (
    ASKED_GROUP,
    DISTRIBUTION,
    GROUP,
    OPTION,
    QuestionView,
    Report,
    Row,
    epsilon_cell,
    epsilon_words,
    hidden_options_note,
    listed_options,
    shows_negative,
)
from .text import explanation_md


def render_markdown(report: Report) -> str:
    lines = [f"# {md_escape(report.title)}", "",
             f"Survey `{report.survey['id']}` version {report.estimates.get('version', '?')}: "
             f"{report.n_submissions:,} submissions, {report.confidence:.0%} intervals.", "",
             *(f"{md_escape(line.strip())}  " for line in design_lines(report)),
             *([""] if design_lines(report) else []),
             "## Privacy budget", "",
             "| question | epsilon |", "|---|---:|"]
    lines += [f"| {md_escape(q.get('text') or q['id'])} `{q['id']}` | {epsilon_cell(q)} |"
              for q in report.survey["questions"]]
    lines += [f"| **total per respondent** | **{report.total_epsilon:g}** |", ""]
    questions = report.questions()
    for q in questions:
        lines += _question(q, report)
    guide = reading_guide(report) if report.estimates.get("design") else ()
    lines += ["## Reading these numbers", "", explanation_md(shows_negative(questions), guide),
              ""]
    return "\n".join(lines)


def _question(q: QuestionView, report: Report) -> list[str]:
    out = [f"## {md_escape(q.text or q.id)}", "",
           f"`{q.id}`: {q.type}, mechanism `{q.mechanism}`, {epsilon_words(q)}, n = {q.n:,}"
           + (" (optional)" if q.optional else ""), ""]
    out += [f"> **Warning:** {md_escape(w)}" for w in q.warnings] + ([""] if q.warnings else [])
    out += [f"> {md_escape(note)}" for note in q.notes] + ([""] if q.notes else [])
    truth = report.truth
    header = ["kind", "option", *(c.header for c in columns(q, truth))]
    out += ["| " + " | ".join(header) + " |",
            "|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|"]
    listed, hidden = listed_options(q)
    rows = listed + [r for r in q.rows if r.kind not in (OPTION, DISTRIBUTION)]
    if q.distribution_is_informative():
        rows += q.of_kind(DISTRIBUTION)
    for r in rows:
        out.append("| " + " | ".join(_cells(q, r, report)) + " |")
    out.append("")
    if hidden:
        out += [hidden_options_note(hidden), ""]
    if q.of_kind(DISTRIBUTION) and not q.distribution_is_informative() and q.n:
        out += [md_escape(q.distribution_summary()), ""]
    return out


def _cells(q: QuestionView, r: Row, report: Report) -> list[str]:
    label = r.display if r.kind not in (GROUP, ASKED_GROUP) else \
        f"{r.display} ({' + '.join(r.display_members)})"
    return [r.kind, md_escape(label), *value_cells(q, r, report.truth)]


def md_escape(text: str) -> str:
    """Text safe inside a Markdown table cell or heading."""
    return (str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
            .replace("<", "&lt;"))


__all__ = ["render_markdown"]
