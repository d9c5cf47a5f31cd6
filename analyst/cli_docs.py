"""Generated documentation: the CLI reference from `--help`, and the mechanism trade-off table
from the planner. `tests/test_readme.py` fails when README.md or docs/cli.md drift from these.

    python -m ldpsurvey.analyst.cli_docs --write   # regenerate README sections and docs/cli.md
    python -m ldpsurvey.analyst.cli_docs --check   # exit 1 if anything is out of date
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from .cli import cli

WIDTH = 100
ROOT = Path(__file__).resolve().parents[1]
CLI_DOC = Path("docs") / "cli.md"
EPSILONS = (0.5, 1.0, 2.0, 4.0)
# The table of options' shares: a yes/no question, then categorical ones of 5, 16, 64 options.
CATEGORY_PLANS = (("binary", 2), ("categorical", 5), ("categorical", 16), ("categorical", 64))
MARGIN = 0.02
INTEGER_RANGE = 31  # answers 0..30, as in the sample survey
MEAN_MARGIN = 0.5
ORDINAL_K = 5
SCORE_MARGIN = 0.1


# --- the CLI -------------------------------------------------------------------------------


def walk(command: click.Command = cli, path: tuple[str, ...] = ("ldpsurvey",),
         parent: click.Context | None = None) -> list[tuple[tuple[str, ...], click.Context]]:
    """Every command and subcommand, depth first, each with a context for its help."""
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(command, info_name=path[-1], parent=parent, **settings)
    found = [(path, ctx)]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found += walk(sub, (*path, name), ctx)
    return found


def command_names() -> list[str]:
    """'ldpsurvey token create' style names of every command, the root included."""
    return [" ".join(path) for path, _ in walk()]


def cli_reference() -> str:
    """docs/cli.md: the `--help` of every command."""
    parts = ["# CLI reference", "",
             "Generated from `--help` by `python -m ldpsurvey.analyst.cli_docs --write`; "
             "do not edit by hand.", ""]
    for path, ctx in walk():
        parts += [f"## {' '.join(path)}", "", "```text", ctx.get_help().rstrip(), "```", ""]
    return "\n".join(parts)


def cli_summary() -> str:
    """The README's command table: one line per command, linking to its full help."""
    rows = ["| command | what it does |", "|---|---|"]
    for path, ctx in walk()[1:]:
        name = " ".join(path)
        anchor = re.sub(r"[^a-z0-9 -]", "", name.lower()).replace(" ", "-")
        text = ctx.command.get_short_help_str(limit=200).replace("|", "\\|")
        rows.append(f"| [`{name}`](docs/cli.md#{anchor}) | {text} |")
    return "\n".join(rows)


# --- mechanisms ----------------------------------------------------------------------------


def mechanism_tables() -> str:
    """Registered mechanisms and, from the planner, respondents needed per (k, ε)."""
    from ldpsurvey.shared.mechanisms import (
        DISTRIBUTION_MECHANISMS,
        MEAN_MECHANISMS,
        MECHANISMS,
        SET_MECHANISMS,
    )
    from ldpsurvey.shared.mechanisms.registry import PAIR_MECHANISMS

    from .plan.survey import plan_k

    lines = ["| mechanism | question types | what a report is | limits |", "|---|---|---|---|"]
    for name, cls in sorted({**MECHANISMS, **SET_MECHANISMS, **MEAN_MECHANISMS,
                             **DISTRIBUTION_MECHANISMS, **PAIR_MECHANISMS}.items()):
        lines.append(f"| `{name}` | {', '.join(sorted(cls.question_types))} | {cls.summary} | "
                     f"{cls.describe_limits()} |")
    lines += ["", f"Respondents needed for a margin of error of ±{MARGIN * 100:g} percentage "
              "points on every option's share (95% confidence, worst case over the truth); "
              "**bold** is the mechanism `auto` picks. `auto` ranks by the error averaged over "
              "options (what a typical option sees), so where every respondent could give the "
              "same answer the worst case can favour another mechanism (often `sue`). From "
              f"`ldpsurvey plan --k K --epsilon E --margin {MARGIN}`.", "",
              "| k options | mechanism | " + " | ".join(f"ε = {e:g}" for e in EPSILONS) + " |",
              "|---:|---|" + "---:|" * len(EPSILONS)]
    for qtype, k in CATEGORY_PLANS:
        plans = [plan_k(k, e, margin=MARGIN, question_type=qtype) for e in EPSILONS]
        names = sorted({r.mechanism for p in plans for r in p.rows})
        for name in names:
            cells = []
            for p in plans:
                row = next((r for r in p.rows if r.mechanism == name), None)
                cell = "–" if row is None else f"{row.n:,}"
                cells.append(f"**{cell}**" if row is not None and row.auto else cell)
            lines.append(f"| {k} | `{name}` | " + " | ".join(cells) + " |")
    plans = [plan_k(INTEGER_RANGE, e, margin=MEAN_MARGIN, question_type="integer")
             for e in EPSILONS]
    lines += ["", f"Integer answers in 0..{INTEGER_RANGE - 1}: respondents needed for a margin "
              f"of ±{MEAN_MARGIN:g} on the mean (in the answer's units).", ""]
    lines += _simple_table(plans)
    plans = [plan_k(ORDINAL_K, e, margin=SCORE_MARGIN, question_type="ordinal")
             for e in EPSILONS]
    lines += ["", f"Ordinal questions with {ORDINAL_K} options scored 1..{ORDINAL_K}: "
              f"respondents needed for a margin of ±{SCORE_MARGIN:g} on the mean score "
              "(`auto` ranks ordinal mechanisms by it).", ""]
    lines += _simple_table(plans)
    return "\n".join(lines)


def _simple_table(plans: list) -> list[str]:
    lines = ["| mechanism | " + " | ".join(f"ε = {e:g}" for e in EPSILONS) + " |",
             "|---|" + "---:|" * len(EPSILONS)]
    for name in sorted({r.mechanism for p in plans for r in p.rows}):
        cells = []
        for p in plans:
            row = next((r for r in p.rows if r.mechanism == name), None)
            cell = "–" if row is None else f"{row.n:,}"
            cells.append(f"**{cell}**" if row is not None and row.auto else cell)
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return lines


# --- README sections -------------------------------------------------------------------------

SECTIONS = {"cli-summary": cli_summary, "mechanisms": mechanism_tables}


def section_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- generated:{name} -->\n)(.*?)(<!-- /generated:{name} -->)", re.S)


def updated_readme(text: str) -> str:
    """README text with every generated section replaced by its current content."""
    for name, make in SECTIONS.items():
        pattern = section_pattern(name)
        if not pattern.search(text):
            raise SystemExit(f"README.md has no <!-- generated:{name} --> section")
        body = make()
        text = pattern.sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(3), text)
    return text


def outdated(root: Path = ROOT) -> list[str]:
    """Generated files that differ from what the code produces now."""
    stale = []
    readme = (root / "README.md").read_text(encoding="utf-8")
    if updated_readme(readme) != readme:
        stale.append("README.md")
    doc = root / CLI_DOC
    if not doc.is_file() or doc.read_text(encoding="utf-8") != cli_reference():
        stale.append(str(CLI_DOC))
    return stale


def write(root: Path = ROOT) -> None:
    readme = root / "README.md"
    readme.write_text(updated_readme(readme.read_text(encoding="utf-8")), encoding="utf-8")
    (root / CLI_DOC).parent.mkdir(exist_ok=True)
    (root / CLI_DOC).write_text(cli_reference(), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--write"]:
        write()
        return 0
    if args == ["--check"]:
        stale = outdated()
        for name in stale:
            print(f"{name} is out of date: run python -m ldpsurvey.analyst.cli_docs --write")
        return 1 if stale else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
