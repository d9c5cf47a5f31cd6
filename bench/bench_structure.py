"""The code's structure in numbers (issue 40's targets): import circles and type switches.

Run: `python bench/bench_structure.py` (`--list`: also each switch counted, as path:line).
Prints numbers, asserts nothing (tests/test_structure.py holds the line). Issue 40's targets:
import circles (Python and page) 11 -> 0; comparisons with a question type's name in the role
folders -> at most 15 (however spelled: tests/support/structure.py's `name_switches`, which
counts "disclosed" too); any comparison of a question's type or isinstance on a question class
-> at most 30; comparisons of a `type` (or with a type's name) in the page -> at most 10;
analyst/ top level -> at most 15 modules.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.structure import (
    ROOT,
    import_circles,
    page_import_graph,
    python_import_graph,
    switch_counts,
    switch_report,
)


def main() -> None:
    python = import_circles(python_import_graph())
    page = import_circles(page_import_graph())
    import_time = import_circles(python_import_graph(module_level_only=True))
    print(f"import circles: {len(python)} Python ({len(import_time)} at import time), "
          f"{len(page)} page (target 0)")
    for circle in [*python, *page]:
        print(f"  {len(circle):2d}: {', '.join(sorted(circle))}")
    counts = switch_counts()
    print(f"comparisons with a question type's name or \"disclosed\", however spelled "
          f"(Python): {counts.python_name_switches} (target <= 15)")
    print(f"lines comparing a type or its name / isinstance on a question (Python): "
          f"{counts.python_type_comparisons} (target <= 30)")
    print(f"comparisons of a type or with a type's name (page): "
          f"{counts.page_type_comparisons} (target <= 10)")
    if "--list" in sys.argv[1:]:
        for line in switch_report():
            print(f"  {line}")
    top = sorted(p.name for p in (ROOT / "analyst").glob("*.py") if p.name != "__init__.py")
    print(f"analyst/ top-level modules: {len(top)} (target <= 15)")


if __name__ == "__main__":
    main()
