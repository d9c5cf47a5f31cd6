"""`Design.build`: frame values that cannot be a design are refused naming the row and the
problem (missing, non-numeric, negative, zero, infinite weights; fpc values that disagree within
a stratum, are smaller than the PSUs sampled, or mix sizes with fractions); labels are nested in
strata; an fpc as a sampling fraction is R's second convention."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ldpsurvey.shared.design import Design
from ldpsurvey.shared.errors import DesignError

STRATA = ["a", "a", "a", "b", "b", "b"]
PSUS = ["1", "1", "2", "1", "2", "2"]


@pytest.mark.parametrize(("weight", "message"), [
    (None, "row 3: weight is missing"),
    ("", "row 3: weight is missing"),
    ("abc", "row 3: weight 'abc' is not a number"),
    (-2.0, "row 3: weight -2.0 must be positive"),
    (0, "row 3: weight 0 must be positive"),
    (math.inf, "row 3: weight must be finite"),
    (math.nan, "row 3: weight is missing"),
    (True, "row 3: weight must be a number, not a boolean"),
    (1e308, "row 3: weight 1e+308 is above 1e+15"),
])
def test_bad_weights_are_refused_naming_the_row(weight, message) -> None:
    weights = [1.0, 2.0, weight, 1.0, 1.0, 1.0]
    with pytest.raises(DesignError) as caught:
        Design.build(weights, STRATA, PSUS)
    assert caught.value.message.startswith(message), caught.value.message
    assert caught.value.details["row"] == 2


def test_rows_can_be_named_by_the_caller() -> None:
    with pytest.raises(DesignError, match=r"^submission s3: weight"):
        Design.build([1, 1, -1, 1, 1, 1], STRATA, PSUS,
                     row_names=[f"submission s{i + 1}" for i in range(6)])


@pytest.mark.parametrize(("fpc", "message"), [
    ([10, 10, 12, 20, 20, 20], "row 3: fpc 12 differs from 10 given for other rows of "
                               "stratum 'a'"),
    ([1, 1, 1, 20, 20, 20], "stratum 'a': the fpc says 1 PSUs in the population, fewer than "
                            "the 2 sampled"),
    ([10, 10, 10, 0.5, 0.5, 0.5], "row 4: fpc 0.5 is a fraction where other rows give "
                                  "population sizes"),
    ([10, 10, 10, 20, 0, 20], "row 5: fpc 0 must be positive"),
    ([10, 10, None, 20, 20, 20], "row 3: fpc is missing"),
    ([1e308] * 6, "stratum 'a': the fpc says 1e+308 PSUs in the population, above 1e+15"),
    ([1e-300] * 6, "stratum 'a': the sampling fraction implies 2e+300 PSUs in the population"),
])
def test_bad_fpc_values_are_refused(fpc, message) -> None:
    with pytest.raises(DesignError) as caught:
        Design.build([1.0] * 6, STRATA, PSUS, fpc)
    assert caught.value.message.startswith(message), caught.value.message


def test_a_missing_stratum_or_psu_label_is_refused() -> None:
    with pytest.raises(DesignError, match=r"^row 2: stratum is missing"):
        Design.build([1.0] * 6, ["a", "", "a", "b", "b", "b"], PSUS)
    with pytest.raises(DesignError, match=r"^row 6: PSU is missing"):
        Design.build([1.0] * 6, STRATA, [*PSUS[:5], None])


def test_psus_are_nested_in_strata_and_fractions_are_r_convention() -> None:
    design = Design.build([1.0] * 6, STRATA, PSUS, [0.5] * 6)
    assert design.psu_count == 4  # PSU "1" of a and of b are two clusters
    assert design.stratum_count == 2
    np.testing.assert_allclose(design.population_psus, [4.0, 4.0])  # 2 sampled / 0.5
    np.testing.assert_allclose(design.sampling_fractions, [0.5, 0.5])
    assert "stratified cluster sample: 2 strata, 4 PSUs, 6 respondents" in design.describe()


def test_lonely_psu_option_must_be_known() -> None:
    with pytest.raises(DesignError, match="lonely_psu must be one of fail, remove"):
        Design.build([1.0] * 6, STRATA, PSUS, lonely_psu="drop")


def test_without_strata_and_psus_it_is_an_element_sample() -> None:
    design = Design.build(np.full(5, 2.0))
    assert (design.stratum_count, design.psu_count, design.n) == (1, 5, 5)
    assert not design.has_fpc


def test_calibrated_weights_must_be_finite() -> None:
    from ldpsurvey.shared.errors import CalibrationError

    class Step:
        def describe(self) -> str:
            return "raked to region"

    design = Design.build([1.0] * 6, STRATA, PSUS)
    with pytest.raises(CalibrationError, match="raked to region: the calibrated weights are "
                       "not finite"):
        design.with_weights(np.array([1.0, 1.0, np.inf, 1.0, 1.0, 1.0]), Step())


def test_the_bootstrap_draws_from_a_large_population_without_building_it() -> None:
    """R's bootweights draws n_h PSUs without replacement from rep(PSUs, length = N_h). The
    draws are the same as from that pseudo-population written out (the reference below), and a
    stratum of 10^12 PSUs (an element sample of a country) is drawn without building 10^12
    entries (it was a MemoryError; 10^7 took 15 s)."""
    from ldpsurvey.shared.design import build_replicates

    strata = [f"s{i % 4}" for i in range(40)]
    design = Design.build([1.0] * 40, strata, fpc=[25.0] * 40)
    boot = build_replicates(design, "bootstrap", replicates=30, seed=11)
    rng = np.random.default_rng(11)  # the reference: the pseudo-population written out
    expected = np.zeros((30, design.psu_count))
    for s in range(design.stratum_count):
        members = np.flatnonzero(design.psu_stratum == s)
        for r in range(30):
            order = rng.permutation(members)
            pseudo = np.resize(order, int(design.population_psus[s]))
            np.add.at(expected[r], rng.choice(pseudo, size=members.size, replace=False), 1.0)
    assert np.array_equal(boot.factors, expected)
    huge = Design.build([1.0] * 40, strata, fpc=[1e12] * 40)
    factors = build_replicates(huge, "bootstrap", replicates=50, seed=3).factors
    assert np.all(factors.sum(axis=1) == 40) and factors.max() <= 10


def test_text_labels_read_from_a_database_build_the_design_text_arrays_build() -> None:
    """Labels as an object array of str (server/report_columns.py, numbered by a dict:
    `_text_labels`) give the design that the same labels as a numpy text array or a list
    give: the same sorted labels (surrounding spaces stripped), codes, PSUs nested in
    strata; and an empty label is refused naming its first row, as there."""
    rng = np.random.default_rng(7)
    pool = ["s10", " s2", "s2", "s1 ", "é", "s9", "Z", "a b"]
    strata = [pool[i] for i in rng.integers(0, len(pool), 500)]
    psus = [f"p{i}" for i in rng.integers(0, 40, 500)]
    weights = rng.random(500) + 1.0
    fast = Design.build(weights, np.array(strata, dtype=object), np.array(psus, dtype=object))
    for strata_, psus_ in ((np.array(strata, dtype=str), np.array(psus, dtype=str)),
                           (strata, psus)):
        slow = Design.build(weights, strata_, psus_)
        assert fast.stratum_labels == slow.stratum_labels
        assert fast.psu_labels == slow.psu_labels
        assert np.array_equal(fast.strata, slow.strata)
        assert np.array_equal(fast.psus, slow.psus)
    assert "s2" in fast.stratum_labels and " s2" not in fast.stratum_labels
    holes = np.array(["a", "b", " ", "a", "", "b"], dtype=object)
    with pytest.raises(DesignError, match=r"^row 3: stratum is missing"):
        Design.build([1.0] * 6, holes, np.array(PSUS, dtype=object))
    mixed = np.array(["a", "a", "a", 3, 3, 3], dtype=object)  # not all text: the general path
    assert Design.build([1.0] * 6, mixed, PSUS).stratum_labels == ("3", "a")


def test_labels_numbered_by_a_database_build_the_design_their_texts_build() -> None:
    """Labels as codes into a survey's numbered labels (`NumberedLabels`: how the server's
    database stores them, numbered in the order they came, some never used by a respondent)
    give the design that the labels themselves give: the same sorted labels (surrounding
    spaces stripped, so " s2" and "s2" are one stratum), codes, PSUs nested in strata; a
    missing label (code -1, or a label of blanks) is refused naming its first row, as there."""
    from ldpsurvey.shared.design import NumberedLabels

    rng = np.random.default_rng(8)
    pool = ["s10", " s2", "s2", "s1 ", "é", "s9", "Z", "a b", "never used"]
    psu_pool = [f"p{i}" for i in range(45)]
    strata = NumberedLabels(rng.integers(0, len(pool) - 1, 500), pool)
    psus = NumberedLabels(rng.integers(0, 40, 500), psu_pool)
    weights = rng.random(500) + 1.0
    fast = Design.build(weights, strata, psus)
    slow = Design.build(weights, strata.texts(), psus.texts())
    assert fast.stratum_labels == slow.stratum_labels and "never used" not in fast.stratum_labels
    assert fast.psu_labels == slow.psu_labels
    assert np.array_equal(fast.strata, slow.strata) and np.array_equal(fast.psus, slow.psus)
    for codes in ([0, 1, 2, 0, -1, 1], [0, 1, 3, 0, 1, 1]):  # row 3 a label of blanks
        holes = NumberedLabels(np.array(codes), ["a", "b", " ", " "])
        with pytest.raises(DesignError, match=r"^row (5|3): stratum is missing"):
            Design.build([1.0] * 6, holes, np.array(PSUS, dtype=object))
        with pytest.raises(DesignError, match=r"^row (5|3): stratum is missing"):
            Design.build([1.0] * 6, holes.texts(), np.array(PSUS, dtype=object))
