"""What a two-server report of several batches combined by their design adds to each format
(`report --batch all`, shared/two_server/design.py): the method (pooled, weighted per cell,
post-stratified), the variance (the per-cell formula, or the delete-a-group jackknife with its
degrees of freedom), the cells and random groups with their respondents, what adding up the
batches' noise costs, and the privacy accounting per respondent and per cell."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from html import escape
from typing import Any

EXPLANATION = (
    "The leader batched each cell (the stratum on the respondents' invitation codes) and each "
    "random group apart, and both servers added their own noise to every batch. The estimate "
    "adds up the batches (a cell's share is its batches' total over its respondents) and, "
    "with cells, combines the cells by their population counts or design weights. With random "
    "groups, the standard error comes from how much the estimate moves when each group in "
    "turn is left out (the delete-a-group jackknife): that spread carries the clustering, the "
    "sampling, any local randomization and the servers' noise at once, and has one degree of "
    "freedom fewer than there are groups, so the interval uses Student's t.")


def design_of(estimates: Mapping[str, Any]) -> Mapping[str, Any] | None:
    design = estimates.get("design")
    return design if isinstance(design, Mapping) else None


def _cell_line(c: Mapping[str, Any]) -> str:
    name = "all respondents" if c.get("cell") is None else f"cell {c['cell']}"
    extra = []
    if c.get("population") is not None:
        extra.append(f"population {float(c['population']):,.0f}")
    if c.get("weight") is not None:
        extra.append(f"weight {float(c['weight']):g}")
    groups = c.get("groups") or []
    extra.append(f"{c['batches']} batch{'' if c['batches'] == 1 else 'es'}"
                 + (f" in {len(groups)} group{'' if len(groups) == 1 else 's'}" if groups
                    else ""))
    return f"{name}: {int(c['respondents']):,} respondents ({', '.join(extra)})"


def _noise_line(item: Mapping[str, Any]) -> str:
    share, ratio = item.get("noise_share"), item.get("variance_vs_one_batch")
    if share is None or ratio is None:
        return f"{item['question']}: the noise's part cannot be computed"
    return (f"{item['question']}: the {item['batches']} batches' noise is {share:.1%} of the "
            f"formula variance; one batch of the same respondents would have "
            f"{1 / ratio:.1%} of it (variance x{ratio:.3g} for the batching)")


def design_lines(estimates: Mapping[str, Any]) -> list[str]:
    """Plain-text lines of the design block (table and Markdown)."""
    design = design_of(estimates)
    if design is None:
        return []
    lines = [f"Design: {design['method']}; variance: {design['variance_words']}."]
    lines += [f"  {_cell_line(c)}" for c in design.get("cells", [])]
    if design.get("waiting_uploads"):
        lines.append(f"  {int(design['waiting_uploads']):,} upload(s) still wait for a batch "
                     "and are not counted")
    lines.append("What the batching's noise costs (B batches carry B draws of each server's "
                 "noise):")
    lines += [f"  {_noise_line(item)}" for item in design.get("noise", [])]
    lines.append("Privacy accounting per respondent and per cell:")
    lines += [f"  {s}" for s in design.get("accounting", [])]
    return lines


def design_table(estimates: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for line in design_lines(estimates):
        indent = len(line) - len(line.lstrip())
        out += textwrap.wrap(line, 94, initial_indent=" " * indent,
                             subsequent_indent=" " * (indent + 2)) or [""]
    return [*out, ""] if out else []


def design_markdown(estimates: Mapping[str, Any], md_escape: Any) -> list[str]:
    design = design_of(estimates)
    if design is None:
        return []
    lines = ["## Design", "", md_escape(f"{design['method']}; variance: "
                                        f"{design['variance_words']}."), ""]
    lines += [f"- {md_escape(_cell_line(c))}" for c in design.get("cells", [])]
    if design.get("waiting_uploads"):
        lines.append(f"- {int(design['waiting_uploads']):,} upload(s) still wait for a batch "
                     "and are not counted")
    lines += ["", "**What the batching's noise costs.**", ""]
    lines += [f"- {md_escape(_noise_line(item))}" for item in design.get("noise", [])]
    lines += ["", "**Privacy accounting per respondent and per cell.**", ""]
    lines += [f"- {md_escape(s)}" for s in design.get("accounting", [])]
    lines += ["", md_escape(EXPLANATION), ""]
    return lines


def design_html(estimates: Mapping[str, Any]) -> str:
    design = design_of(estimates)
    if design is None:
        return ""
    cells = "".join(f"<li>{escape(_cell_line(c))}</li>" for c in design.get("cells", []))
    waiting = (f"<p>{int(design['waiting_uploads']):,} upload(s) still wait for a batch and "
               "are not counted.</p>" if design.get("waiting_uploads") else "")
    noise = "".join(f"<li>{escape(_noise_line(i))}</li>" for i in design.get("noise", []))
    accounting = "".join(f"<li>{escape(s)}</li>" for s in design.get("accounting", []))
    return (f'<div class="explain"><h2>Design</h2><p>{escape(str(design["method"]))}; '
            f'variance: {escape(str(design["variance_words"]))}.</p><ul>{cells}</ul>{waiting}'
            f"<h3>What the batching's noise costs</h3><ul>{noise}</ul>"
            f"<h3>Privacy accounting per respondent and per cell</h3><ul>{accounting}</ul>"
            f"<p>{escape(EXPLANATION)}</p></div>")


CSV_COLUMNS = ("design", "variance_method", "degrees_of_freedom")


def csv_values(estimates: Mapping[str, Any]) -> list[str]:
    design = design_of(estimates)
    if design is None:
        return []
    df = design.get("degrees_of_freedom")
    return [str(design["method"]), str(design["variance"]), "" if df is None else str(df)]
