"""Fields, NTT and Lagrange-basis helpers checked against direct (monomial) arithmetic.

The vectors exercise these only through the degree-2 gadgets; here the general paths (several
missing values, evaluation at a node, both fields, larger sizes) are checked directly.
"""

from __future__ import annotations

import secrets

import pytest
from ldpsurvey.shared.prio3 import DecodeError, Field64, Field128
from ldpsurvey.shared.prio3.gadgets import Mul, ParallelSum, PolyEval
from ldpsurvey.shared.prio3.poly import (
    batch_inverse,
    double_evaluations,
    extend_values_to_power_of_2,
    lagrange_weights,
    next_power_of_2,
)

FIELDS = [Field64, Field128]


def _horner(coeffs, x, p):
    acc = 0
    for c in reversed(coeffs):
        acc = (acc * x + c) % p
    return acc


def _rand_poly(field, degree):
    return [secrets.randbelow(field.MODULUS) for _ in range(degree + 1)]


@pytest.mark.parametrize("field", FIELDS)
def test_field_constants(field):
    p = field.MODULUS
    for base in (2, 3, 5, 7):
        assert pow(base, p - 1, p) == 1  # Fermat: consistent with p prime
    assert pow(field.GENERATOR, field.GEN_ORDER, p) == 1
    assert pow(field.GENERATOR, field.GEN_ORDER // 2, p) == p - 1  # order exactly GEN_ORDER
    assert (p - 1) % field.GEN_ORDER == 0
    assert 8 * field.ENCODED_SIZE == field.SAMPLE_MASK.bit_length() >= p.bit_length()


@pytest.mark.parametrize("field", FIELDS)
def test_encode_decode_roundtrip_and_bounds(field):
    vec = [0, 1, field.MODULUS - 1] + [secrets.randbelow(field.MODULUS) for _ in range(20)]
    assert field.decode_vec(field.encode_vec(vec)) == vec
    assert field.decode_vec(b"") == []
    with pytest.raises(DecodeError):
        field.decode_vec(field.encode_vec([1]) + field.MODULUS.to_bytes(field.ENCODED_SIZE,
                                                                         "little"))


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("n", [1, 2, 4, 16, 64])
def test_ntt_matches_direct_evaluation(field, n):
    p = field.MODULUS
    coeffs = _rand_poly(field, n - 1)
    nodes = field.nth_root_powers(n)
    assert field.ntt(coeffs, n) == [_horner(coeffs, w, p) for w in nodes]
    s = field.nth_root(2 * n)
    assert field.ntt(coeffs, n, set_s=True) == [_horner(coeffs, s * w % p, p) for w in nodes]
    assert field.inv_ntt(field.ntt(coeffs, n), n) == coeffs


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize(("known", "n"), [(3, 4), (7, 8), (5, 8), (9, 16), (1, 2), (8, 8)])
def test_extend_values(field, known, n):
    p = field.MODULUS
    coeffs = _rand_poly(field, known - 1)
    nodes = field.nth_root_powers(n)
    full = [_horner(coeffs, w, p) for w in nodes]
    assert extend_values_to_power_of_2(field, full[:known], n) == full


@pytest.mark.parametrize("field", FIELDS)
def test_lagrange_weights_and_doubling(field):
    p = field.MODULUS
    n = 8
    coeffs = _rand_poly(field, n - 1)
    values = field.ntt(coeffs, n)
    t = secrets.randbelow(p)
    w = lagrange_weights(field, n, t)
    assert sum(a * b for a, b in zip(w, values, strict=True)) % p == _horner(coeffs, t, p)
    node = field.nth_root_powers(n)[3]
    w = lagrange_weights(field, n, node)
    assert sum(a * b for a, b in zip(w, values, strict=True)) % p == values[3]
    assert double_evaluations(field, values) == field.ntt(coeffs, 2 * n)


def test_batch_inverse_and_next_power():
    p = Field128.MODULUS
    xs = [secrets.randbelow(p - 1) + 1 for _ in range(10)]
    assert batch_inverse(xs, p) == [pow(x, -1, p) for x in xs]
    assert [next_power_of_2(n) for n in (1, 2, 3, 5, 8, 9)] == [1, 2, 4, 8, 8, 16]


@pytest.mark.parametrize("field", FIELDS)
def test_gadget_polynomials_compose(field):
    """eval_poly(wire polys) evaluated at a point equals the gadget on the wires there."""
    p = field.MODULUS
    n = 4
    wires = [[secrets.randbelow(p) for _ in range(n)] for _ in range(6)]
    t = secrets.randbelow(p)
    at_t = [sum(a * b for a, b in zip(lagrange_weights(field, n, t), w, strict=True)) % p
            for w in wires]
    for gadget, arity in ((Mul(), 2), (ParallelSum(Mul(), 3), 6), (PolyEval([0, -1, 1], 3), 1),
                          (PolyEval([5, 0, 2, 1], 3), 1)):
        out = gadget.eval_poly(field, wires[:arity])
        m = len(out)
        got = sum(a * b for a, b in zip(lagrange_weights(field, m, t), out, strict=True)) % p
        assert got == gadget.eval(field, at_t[:arity])
