"""Every select_one, select_multiple, integer and decimal row an XLSForm import leaves out,
grouped by the reason at the root of it (docs/xlsform.md, "Rows left out, by reason"): a row
inside a repeat; else the row its condition, group or piped text reads, followed to the row
that is left out for a reason of its own (a calculation over a repeat, an integer bounded on
one side, ...). tests/analyst/test_xlsform_problems.py checks that the tables in the docs are
what this writes for the real forms.

    cd tests && python -m support.xlsform_left_out FORM [--integer-max N] [--media DIR]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ldpsurvey.analyst.xlsform_import import (
    ImportOptions,
    ImportResult,
    RowProblem,
    import_xlsform,
)
from ldpsurvey.analyst.xlsform_import.reading import read

QUESTION_TYPES = ("select_one", "select_multiple", "integer", "decimal", "range",
                  "select_one_from_file", "select_multiple_from_file")
_READS = re.compile(r"(?:inside the refused \S+ '[^']*'|it reads \$\{[^}]*\}|its text shows "
                    r"\$\{[^}]*\}) \(row (\d+)")


@dataclass(frozen=True)
class LeftOut:
    """A question row left out, and the reason at the root of it."""

    row: int
    name: str
    type: str
    reason: str  # the root reason, as the table groups it


def _repeats(elements: Sequence[Mapping[str, Any]], inside: str | None,
             found: dict[str, str]) -> dict[str, str]:
    """Row name -> the (outermost) repeat it is inside."""
    for el in elements:
        repeat = inside or (str(el.get("name")) if el.get("type") in ("repeat", "loop")
                            else None)
        if inside is not None and el.get("name"):
            found[str(el["name"])] = inside
        _repeats(el.get("children") or (), repeat, found)
    return found


def _root(problem: RowProblem, by_row: Mapping[int, RowProblem]) -> RowProblem:
    """The row left out for a reason of its own that this one goes with."""
    seen = set()
    while True:
        found = _READS.search(problem.reason)
        if found is None or int(found[1]) in seen or int(found[1]) not in by_row:
            return problem
        seen.add(int(found[1]))
        problem = by_row[int(found[1])]


def _reason(problem: RowProblem, root: RowProblem) -> str:
    """The table's wording of a root reason (the row's own, or what it goes with)."""
    own = problem is root
    base = root.type.split()[0]
    if base == "calculate" and "over the repeat" in root.reason:
        repeat = re.search(r"over the repeat '([^']*)'", root.reason)[1]
        return (f"its condition (or its group's) reads a count over the repeat {repeat!r}, "
                "which cannot be evaluated on the device")
    if base == "integer" and "bounds only one side" in root.reason:
        return ("an integer bounded on one side only" if own else
                "its condition reads an integer bounded on one side only")
    if base == "integer" and "without a range" in root.reason:
        return ("an integer without any constraint" if own else
                "its condition reads an integer without any constraint")
    if root.topic == "choice filters that cannot be kept" and "never shows" in root.reason:
        return ("a choice list of which ODK shows no choice" if own else
                "its text or filter reads a row of which ODK shows no choice")
    return root.topic if own else f"it reads a row left out ({root.topic})"


def left_out(result: ImportResult, form: Path) -> list[LeftOut]:
    """The question rows `result` left out, each with its root reason."""
    repeats = _repeats(read(form).json.get("children") or (), None, {})
    by_row = {p.row: p for p in result.left_out if p.row is not None}
    out = []
    for p in result.left_out:
        if p.row is None or p.type.split()[0] not in QUESTION_TYPES:
            continue
        reason = (f"inside the repeat {repeats[p.name]!r}" if p.name in repeats
                  else _reason(p, _root(p, by_row)))
        out.append(LeftOut(p.row, p.name, p.type.split()[0], reason))
    return out


def _rows(rows: Iterable[LeftOut]) -> str:
    """Row numbers, consecutive runs as ranges; with the names where there are few."""
    rows = sorted(rows, key=lambda r: r.row)
    if len(rows) <= 6:
        return ", ".join(f"{r.row} `{r.name}`" for r in rows)
    numbers = [r.row for r in rows]
    runs, start = [], numbers[0]
    for previous, n in zip(numbers, [*numbers[1:], None], strict=True):
        if n != previous + 1:
            runs.append(str(start) if start == previous else f"{start}-{previous}")
            start = n
    return ", ".join(runs)


def table(rows: Sequence[LeftOut]) -> str:
    """The markdown table: one line a reason, most rows first."""
    reasons: dict[str, list[LeftOut]] = {}
    for r in rows:
        reasons.setdefault(r.reason, []).append(r)
    lines = ["| reason | rows | which |", "|---|---|---|"]
    for reason, found in sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"| {reason} | {len(found)} | {_rows(found)} |")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> None:
    form = Path(argv[0])
    integer_max = int(argv[argv.index("--integer-max") + 1]) if "--integer-max" in argv \
        else None
    media = (Path(argv[argv.index("--media") + 1]),) if "--media" in argv else ()
    result = import_xlsform(form, ImportOptions(epsilon=1, skip_unsupported=True, version=1,
                                                integer_max=integer_max, media=media))
    print(table(left_out(result, form)))


if __name__ == "__main__":
    main(sys.argv[1:])
