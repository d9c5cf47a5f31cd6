"""`ldpsurvey import xlsform` of a 200-row XLSForm: the target is under 2 s (issue 34).

Run: `python bench/bench_import.py [--rows 200] [--repeat 5]`. Prints numbers, asserts nothing.
`--form PATH` times the import of a real form instead, with --skip-unsupported and --epsilon 1
as tests/analyst/test_xlsform_problems.py imports them (the IMPACT MSNA, 710 rows:
`--form ../shared/xlsforms/impact_msna_en_fr.xlsx`); `--integer-max N` adds that option (the
MSNA keeps 320 questions, 62 of them optional follow-ups made required; with `--integer-max 50`
370, 82 of them).

The form is written once with openpyxl: English and Spanish labels, hints and choices, a mix
of yes/no, categorical (5 options), ordinal (likert), check-all-that-apply (6 options, at most
3) and integer (0..30) rows, one in five with a relevant on an earlier question, every row
with its ldp_epsilon. Timed: the whole import (pyxform reading and checking the workbook, the
mapping, Survey.from_dict building and proving every mechanism, the TOML written and read
back and built), best and median of --repeat runs, then `Survey.from_dict` alone for comparison.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from ldpsurvey.analyst.xlsform_import import ImportOptions, import_xlsform
from ldpsurvey.shared.survey import Survey
from openpyxl import Workbook

EN, ES = "English (en)", "Español (es)"


def write_form(path: Path, rows: int) -> None:
    book = Workbook()
    survey = book.active
    survey.title = "survey"
    survey.append(["type", "name", f"label::{EN}", f"label::{ES}", f"hint::{EN}", f"hint::{ES}",
                   "required", "relevant", "constraint", "appearance", "ldp_epsilon"])
    kinds = ("select_one yn", "select_one five", "select_one scale", "select_multiple six",
             "integer")
    for i in range(rows):
        kind = kinds[i % len(kinds)]
        relevant = f"${{q{i - 5}}} = 'yes'" if i % 5 == 0 and i >= 5 else None
        constraint = {"integer": ". >= 0 and . <= 30",
                      "select_multiple six": "count-selected(.) <= 3"}.get(kind)
        survey.append([kind, f"q{i}", f"Question {i} in English?", f"¿Pregunta {i} en español?",
                       f"Hint {i}", f"Pista {i}", "yes", relevant, constraint,
                       "likert" if kind == "select_one scale" else None, 0.5])
    choices = book.create_sheet("choices")
    choices.append(["list_name", "name", f"label::{EN}", f"label::{ES}"])
    for name, count in (("yn", 0), ("five", 5), ("scale", 4), ("six", 6)):
        if name == "yn":
            choices.append(["yn", "yes", "Yes", "Sí"])
            choices.append(["yn", "no", "No", "No"])
            continue
        for j in range(count):
            choices.append([name, f"{name}{j}", f"Option {j}", f"Opción {j}"])
    settings = book.create_sheet("settings")
    settings.append(["form_title", "form_id", "version", "default_language"])
    settings.append(["Bench form", "bench_form", "1", EN])
    book.save(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--form", type=Path, default=None,
                        help="a real XLSForm to import instead of the written one")
    parser.add_argument("--integer-max", type=int, default=None,
                        help="with --form: the max of integers bounded below only")
    args = parser.parse_args()
    options = (ImportOptions() if args.form is None
               else ImportOptions(epsilon=1, skip_unsupported=True,
                                  integer_max=args.integer_max))
    with tempfile.TemporaryDirectory() as tmp:
        path = args.form or Path(tmp) / "bench.xlsx"
        if args.form is None:
            write_form(path, args.rows)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = import_xlsform(path, options)
            times.append(time.perf_counter() - start)
        data = result.data
        start = time.perf_counter()
        Survey.from_dict(data)
        parse = time.perf_counter() - start
    what = (f"{args.rows} rows" if args.form is None
            else f"{args.form.name}, --skip-unsupported --epsilon 1"
            + ("" if args.integer_max is None else f" --integer-max {args.integer_max}"))
    print(f"import xlsform, {what} ({len(result.survey.questions)} questions, "
          f"languages {' + '.join([result.survey.language or 'en', *result.survey.translations])}"
          f", {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}):")
    print(f"  best {min(times):.3f} s, median {statistics.median(times):.3f} s over "
          f"{args.repeat} runs (target < 2 s)")
    print(f"  of which Survey.from_dict alone: {parse:.3f} s (the import builds the survey "
          "once, from the TOML it writes)")


if __name__ == "__main__":
    main()
