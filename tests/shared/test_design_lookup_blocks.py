"""A lookup's grouped sums (shared/design/pseudo.py `Lookup.sums_times`).

By report value, in blocks of groups: equal to the whole (groups x report values) sums times
the table, bit for bit with one BLAS thread (as every `ldpsurvey` command runs: the checks run
in a child process so), to rounding with several, without allocating them. A 12-option subset
question (4,097 report values) on a design with ~10^5 (PSU, cell) groups made gigabytes of
sums, nearly all zeros (bench/bench_design.py: its linearized estimates took 4-9 s at 2 x 10^5
rows where 1d941c0 took 0.3-0.4 s; in blocks still 1.2 s, its replicate estimates 1.2 s
against 0.2 s).

Where groups x report values is many times the rows (`Lookup.by_value`), per column instead:
the same estimates to rounding, with neither the whole sums nor a block of them."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from ldpsurvey.shared.design import (
    Design,
    Margin,
    build_replicates,
    estimate,
    pseudo_values,
    rake,
)
from ldpsurvey.shared.design import pseudo as pseudo_module
from ldpsurvey.shared.design.groups import groups_of
from ldpsurvey.shared.design.pseudo import Lookup
from ldpsurvey.shared.mechanisms import mechanism_class
from ldpsurvey.shared.survey import Question


def subset_question(n: int, rng: np.random.Generator) -> tuple[Question, object, np.ndarray]:
    q = Question(id="media", text="media", type="categorical", epsilon=2.0, mechanism="ss",
                 options=tuple(f"o{j}" for j in range(12)))
    m = mechanism_class("ss").from_question(q)
    return q, m, m.perturb_many(rng.integers(0, 12, n), rng)


def one_blas_thread(check: str) -> None:
    """Run `check` of this module in a child process with one BLAS thread."""
    done = subprocess.run([sys.executable, __file__, check], capture_output=True, text=True,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1",
                               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def products(count: int, block: int) -> tuple[np.ndarray, np.ndarray]:
    """(whole, blocked) products of random sums over `count` groups."""
    rng = np.random.default_rng(count)
    n, size = 30_000, 301
    lookup = Lookup(rng.integers(0, size, n), rng.standard_normal((size, 7)),
                    rng.standard_normal((size, 7)))
    groups, weights = rng.integers(0, count, n), rng.random(n) * 3
    whole = lookup.sums(weights, groups, count) @ lookup.table
    saved = pseudo_module.MAX_GROUP_SUMS, pseudo_module.GROUP_BLOCK, pseudo_module.SUMS_PER_ROW
    # by report value, in blocks (these groups x values would otherwise be summed per column)
    pseudo_module.MAX_GROUP_SUMS, pseudo_module.GROUP_BLOCK = 1_000, block
    pseudo_module.SUMS_PER_ROW = 1 << 62
    try:
        blocked = lookup.sums_times(weights, groups, count, lookup.table)
    finally:
        (pseudo_module.MAX_GROUP_SUMS, pseudo_module.GROUP_BLOCK,
         pseudo_module.SUMS_PER_ROW) = saved
    return whole, blocked


CASES = [(5_000, 64), (4_099, 64), (3_000, 1_024)]


def check_products_bit_for_bit() -> None:
    for count, block in CASES:
        whole, blocked = products(count, block)
        assert blocked.shape == whole.shape
        assert np.array_equal(blocked, whole), (count, block)


def test_blocks_equal_the_whole_product_bit_for_bit_with_one_blas_thread() -> None:
    one_blas_thread("check_products_bit_for_bit")


@pytest.mark.parametrize(("count", "block"), CASES)
def test_blocks_equal_the_whole_product_to_rounding_here(count: int, block: int) -> None:
    whole, blocked = products(count, block)
    assert np.allclose(blocked, whole, rtol=1e-12, atol=1e-12)


def raked_design(n: int, psus: int, rng: np.random.Generator) -> Design:
    psu = rng.integers(0, psus, n)
    weight = np.exp(rng.normal(3.0, 0.4, n))
    design = Design.build(weight, psu // 50, psu, np.full(n, 250.0))
    total = float(weight.sum()) * 1.1
    sex, region = rng.integers(0, 2, n), rng.integers(0, 5, n)
    return rake(design, [Margin("sex", sex, {0: total * 0.49, 1: total * 0.51}),
                         Margin("region", region, {j: total / 5 for j in range(5)})])


def check_subset_estimates() -> None:
    """The estimates equal the whole-sums path's bit for bit, and the peak memory stays far
    below the (groups x 4,097) sums (here 300 PSUs x 10 cells x 4,097 x 8 B: ~100 MB at
    most, whatever groups have rows; with blocks of 64 groups, ~2 MB each)."""
    monkeypatch = pytest.MonkeyPatch()
    rng = np.random.default_rng(40)
    n = 20_000
    design = raked_design(n, 300, rng)
    q, m, reports = subset_question(n, rng)
    pv = pseudo_values(q, m, reports)
    assert pv.rows is not None and pv.rows.size == 4_097
    monkeypatch.setattr(pseudo_module, "SUMS_PER_ROW", 1 << 62)  # by report value
    monkeypatch.setattr(pseudo_module, "MAX_GROUP_SUMS", 1 << 16)
    monkeypatch.setattr(pseudo_module, "GROUP_BLOCK", 64)
    tracemalloc.start()
    try:
        blocked = estimate(design, pv)[0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40e6, f"peak {peak / 1e6:.0f} MB"
    monkeypatch.setattr(pseudo_module, "MAX_GROUP_SUMS", 1 << 62)
    whole = estimate(design, pv)[0]
    assert np.array_equal(blocked.estimates, whole.estimates)
    assert np.array_equal(blocked.covariance, whole.covariance)
    assert np.array_equal(blocked.std_errors, whole.std_errors)
    monkeypatch.undo()


def test_a_subset_question_on_many_groups_is_estimated_without_the_whole_sums() -> None:
    one_blas_thread("check_subset_estimates")


def estimates_by(design: Design, pv, sums_per_row: int, variance="linearized"
                 ) -> tuple[np.ndarray, np.ndarray, float]:
    """(estimates, covariance, peak traced bytes) of `pv` with `SUMS_PER_ROW` set so."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(pseudo_module, "SUMS_PER_ROW", sums_per_row)
    tracemalloc.start()
    try:
        found = estimate(design, pv, variance=variance)[0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        monkeypatch.undo()
    return found.estimates, found.covariance, peak


@pytest.mark.parametrize("replicated", [False, True])
def test_many_groups_times_many_values_are_summed_per_column_to_the_same_estimates(
        replicated: bool) -> None:
    """On 3,000 (PSU, cell) groups at 20,000 rows, the subset question's 4,097 report values
    make 12 x 10^6 sums by value (600 per row): `by_value` sums per column instead (the
    default), a 3-option question's 4 values by value. Both ways give the same estimates and
    covariance to 1e-12, and the default's peak memory stays below one block of sums by value
    (`MAX_GROUP_SUMS` float64s, 32 MB: what the estimates took before)."""
    rng = np.random.default_rng(41)
    n = 20_000
    design = raked_design(n, 300, rng)
    q, m, reports = subset_question(n, rng)
    pv = pseudo_values(q, m, reports)
    variance = (build_replicates(design, "bootstrap", replicates=10, seed=3) if replicated
                else "linearized")
    count = groups_of(design).count
    assert count > 2_000 and not pv.rows.by_value(count)
    small = Question(id="drink", text="drink", type="categorical", epsilon=1.0,
                     mechanism="grr", options=("a", "b", "c"))
    small_m = mechanism_class("grr").from_question(small)
    small_pv = pseudo_values(small, small_m, small_m.perturb_many(rng.integers(0, 3, n), rng))
    assert small_pv.rows.size == 4 and small_pv.rows.by_value(count)
    per_column = estimates_by(design, pv, pseudo_module.SUMS_PER_ROW, variance)
    by_value = estimates_by(design, pv, 1 << 62, variance)
    forced_columns = estimates_by(design, pv, 0, variance)
    for found in (by_value, forced_columns):
        assert np.allclose(found[0], per_column[0], rtol=1e-12, atol=0)
        assert np.allclose(found[1], per_column[1], rtol=1e-12,
                           atol=1e-12 * np.abs(per_column[1]).max())
    assert per_column[2] < 16e6, f"peak {per_column[2] / 1e6:.0f} MB"
    assert by_value[2] > 32e6  # what the peak guards against: a block of sums by value


if __name__ == "__main__":
    globals()[sys.argv[1]]()
