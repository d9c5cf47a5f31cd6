"""shared/design/keys.py: numbering integer keys by counting gives np.unique's answer."""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.design.keys import unique_keys


@pytest.mark.parametrize("bound", [1, 7, 5000, 10**9])
def test_counted_keys_are_numbered_as_np_unique_numbers_them(bound: int) -> None:
    """Sorted distinct keys, each key's index among them and each one's first row, equal to
    np.unique's, whether counted (a bound near n) or sorted (a bound far above n)."""
    rng = np.random.default_rng(11)
    keys = rng.integers(0, bound, 3000, dtype=np.int64)
    uniques, first, inverse = unique_keys(keys, bound, first=True)
    expected = np.unique(keys, return_index=True, return_inverse=True)
    assert np.array_equal(uniques, expected[0]) and np.array_equal(first, expected[1])
    assert np.array_equal(inverse, expected[2].reshape(-1)) and inverse.dtype == np.int64
    plain = unique_keys(keys, bound)
    assert len(plain) == 2 and np.array_equal(plain[1], inverse)
    assert np.array_equal(uniques[inverse], keys)


def test_negative_or_no_keys_are_numbered_by_np_unique() -> None:
    keys = np.array([3, -2, 3, 0], dtype=np.int64)
    uniques, inverse = unique_keys(keys, 4)
    assert uniques.tolist() == [-2, 0, 3] and inverse.tolist() == [2, 0, 2, 1]
    empty = unique_keys(np.zeros(0, dtype=np.int64), 4, first=True)
    assert all(part.size == 0 for part in empty)
