"""The `ldpsurvey` command runs one BLAS thread unless the environment says otherwise
(analyst/cli.py): OpenBLAS's threads spun on the second core in the design-based estimators'
matrix-vector products (report --rake at 10^6: 10.5 s CPU with them, 7.7 s without;
bench/bench_design_report.py). OpenBLAS reads the setting when numpy loads, so it must be set
before anything the command imports loads numpy."""

from __future__ import annotations

import os
import subprocess
import sys

# the root command imports a subcommand's module when it runs it (analyst/cli.py COMMANDS):
# `report`'s loads numpy
PROBE = ("import importlib, sys; import ldpsurvey.analyst; before = 'numpy' in sys.modules; "
         "import ldpsurvey.analyst.cli as cli, os; "
         "importlib.import_module(cli.COMMANDS['report'][0].split(':')[0]); "
         "print(before, 'numpy' in sys.modules, os.environ['OPENBLAS_NUM_THREADS'])")


def _probe(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", PROBE], env={**clean, **env},
                         capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_the_command_sets_one_blas_thread_before_numpy_loads() -> None:
    assert _probe() == ["False", "True", "1"]


def test_a_thread_count_in_the_environment_is_kept() -> None:
    assert _probe(OPENBLAS_NUM_THREADS="2") == ["False", "True", "2"]
