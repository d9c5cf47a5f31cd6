"""R's survey package as a test oracle: one Rscript run per test module, data in by CSV, results
out as JSON (R's jsonlite is not needed: `emit()` below writes numbers with 17 digits).

`run_r(script, tables)` writes each table (name -> {column: values}) as `<name>.csv` in a
temporary directory, runs `Rscript` on `PRELUDE + script` there, and returns the JSON object
the script printed with `emit(list(name = value, ...))`. Without Rscript or the survey package
the calling test skips with the reason, except under CI (CI=true), where it fails: CI installs
R (.ci/run), so a missing R there is a broken CI, not a reason to skip.
"""

from __future__ import annotations

import csv
import functools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

PRELUDE = r"""
suppressPackageStartupMessages(library(survey))
num <- function(x) {
  x <- as.numeric(x)
  s <- ifelse(is.na(x), "null", sprintf("%.17g", x))
  s[is.infinite(x)] <- "null"
  paste0("[", paste(s, collapse = ","), "]")
}
emit <- function(values) {
  body <- paste(sprintf("\"%s\": %s", names(values), vapply(values, num, "")), collapse = ",\n")
  cat("<<JSON\n{", body, "}\nJSON>>\n", sep = "")
}
"""


@functools.cache
def unavailable_reason() -> str | None:
    """Why R's survey package cannot be run here (None: it can)."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        return "Rscript is not installed (Debian: r-base-core r-cran-survey r-cran-mass)"
    probe = subprocess.run([rscript, "-e", "library(survey); library(MASS)"],
                           capture_output=True, text=True, timeout=120, check=False)
    if probe.returncode != 0:
        return f"R's survey or MASS package is missing: {probe.stderr.strip()[-300:]}"
    return None


def require_r() -> None:
    """Skip (outside CI) or fail (under CI=true) when R's survey cannot run."""
    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"R oracle tests must run under CI: {reason}")
    pytest.skip(f"R oracle tests skipped: {reason}")


def write_csv(path: Path, table: Mapping[str, Sequence[Any] | np.ndarray]) -> None:
    """A table as CSV with full float precision (repr of each float)."""
    names = list(table)
    columns = [np.asarray(table[name]).tolist() for name in names]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(names)
        for row in zip(*columns, strict=True):
            writer.writerow([repr(v) if isinstance(v, float) else v for v in row])


def run_r(script: str, tables: Mapping[str, Mapping[str, Sequence[Any] | np.ndarray]],
          timeout: float = 300, files: Mapping[str, str] | None = None
          ) -> dict[str, list[float | None]]:
    """Run `script` (after PRELUDE) with the tables as CSV files (and `files`: name -> text,
    written as they are); the emitted JSON object."""
    require_r()
    with tempfile.TemporaryDirectory(prefix="ldp-r-") as tmp:
        folder = Path(tmp)
        for name, table in tables.items():
            write_csv(folder / f"{name}.csv", table)
        for name, text in (files or {}).items():
            (folder / name).write_text(text)
        (folder / "script.R").write_text(PRELUDE + script)
        done = subprocess.run(["Rscript", "--vanilla", "script.R"], cwd=folder,
                              capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0 or "<<JSON" not in done.stdout:
        raise AssertionError(f"Rscript failed ({done.returncode}):\n{done.stderr[-3000:]}\n"
                             f"{done.stdout[-2000:]}")
    body = done.stdout.split("<<JSON\n", 1)[1].split("\nJSON>>", 1)[0]
    return json.loads(body)


def r_strings(values: Sequence[str]) -> str:
    """An R character vector literal."""
    return "c(" + ", ".join(json.dumps(v) for v in values) + ")"


def r_numbers(values: Sequence[float] | np.ndarray) -> str:
    """An R numeric vector literal with full precision."""
    return "c(" + ", ".join(repr(float(v)) for v in np.asarray(values).tolist()) + ")"


__all__ = ["r_numbers", "r_strings", "require_r", "run_r", "unavailable_reason"]
