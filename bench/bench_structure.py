"""The code's structure in numbers (issue 40's targets): import circles and type switches.

Run: `python bench/bench_structure.py`. Prints numbers, asserts nothing (tests/test_structure.py
holds the line). Issue 40's targets: import circles (Python and page) 11 -> 0; comparisons with
a question type's name in the role folders -> at most 15; any comparison of a question's type
or isinstance on a question class -> at most 30; comparisons of a `type` in the page -> at most
10; analyst/ top level -> at most 15 modules.
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
    print(f"comparisons with a question type's name (Python): "
          f"{counts.python_name_switches} (target <= 15)")
    print(f"comparisons of a type / isinstance on a question (Python): "
          f"{counts.python_type_comparisons} (target <= 30)")
    print(f"comparisons of a type (page): {counts.page_type_comparisons} (target <= 10)")
    top = sorted(p.name for p in (ROOT / "analyst").glob("*.py") if p.name != "__init__.py")
    print(f"analyst/ top-level modules: {len(top)} (target <= 15)")


if __name__ == "__main__":
    main()
