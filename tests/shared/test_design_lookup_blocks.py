"""A lookup's grouped sums in blocks of groups (shared/design/pseudo.py `Lookup.sums_times`):
equal to the whole (groups x report values) sums times the table, bit for bit with one BLAS
thread (as every `ldpsurvey` command runs: the checks run in a child process so), to rounding
with several, without allocating them. A 12-option subset question (4,097 report values) on
a design with ~10^5 (PSU, cell) groups made gigabytes of sums, nearly all zeros
(bench/bench_design.py: its linearized estimates took 4-9 s at 2 x 10^5 rows where 1d941c0
took 0.3-0.4 s)."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from ldpsurvey.shared.design import Design, Margin, estimate, pseudo_values, rake
from ldpsurvey.shared.design import pseudo as pseudo_module
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
    saved = pseudo_module.MAX_GROUP_SUMS, pseudo_module.GROUP_BLOCK
    pseudo_module.MAX_GROUP_SUMS, pseudo_module.GROUP_BLOCK = 1_000, block
    try:
        blocked = lookup.sums_times(weights, groups, count, lookup.table)
    finally:
        pseudo_module.MAX_GROUP_SUMS, pseudo_module.GROUP_BLOCK = saved
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


if __name__ == "__main__":
    globals()[sys.argv[1]]()
