"""Polynomials in the Lagrange basis over the roots of unity (the draft's `Lagrange` class).

A polynomial of degree < n is the list of its values at W_n ** i, i < n. Evaluation at a
point t off the nodes uses p(t) = (t**n - 1) / n * sum_i v_i * W_n**i / (t - W_n**i) with one
batched inversion; the result equals the draft's inversion-free formula exactly.
"""

from __future__ import annotations

from ldpsurvey.shared.prio3.field import Field


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (n >= 1)."""
    return 1 << (n - 1).bit_length()


def batch_inverse(values: list[int], p: int) -> list[int]:
    """Inverses of non-zero values with one modular exponentiation (Montgomery's trick)."""
    prefix = [1] * (len(values) + 1)
    acc = 1
    for i, v in enumerate(values):
        acc = acc * v % p
        prefix[i + 1] = acc
    inv = pow(acc, -1, p)
    out = [0] * len(values)
    for i in range(len(values) - 1, -1, -1):
        out[i] = inv * prefix[i] % p
        inv = inv * values[i] % p
    return out


def lagrange_weights(field: type[Field], n: int, t: int) -> list[int]:
    """Weights c_i with p(t) = sum_i c_i * v_i for every polynomial given by n values."""
    p = field.MODULUS
    nodes = field.nth_root_powers(n)
    t_n = pow(t, n, p)
    if t_n == 1:  # t is a node: the value there is the answer
        return [1 if w == t % p else 0 for w in nodes]
    scale = (t_n - 1) * pow(n, -1, p) % p
    inverses = batch_inverse([(t - w) % p for w in nodes], p)
    return [scale * w % p * d % p for w, d in zip(nodes, inverses, strict=True)]


def eval_with_weights(weights: list[int], values: list[int], p: int) -> int:
    """sum(weights[i] * values[i]) mod p: one reduction at the end."""
    return sum(map(int.__mul__, weights, values)) % p


def double_evaluations(field: type[Field], values: list[int]) -> list[int]:
    """From values at the n-th roots to values at the 2n-th roots (n a power of two)."""
    n = len(values)
    odd = field.ntt(field.inv_ntt(values, n), n, set_s=True)
    out = [0] * (2 * n)
    out[0::2] = values
    out[1::2] = odd
    return out


def poly_mul(field: type[Field], a: list[int], b: list[int]) -> list[int]:
    """Product of two polynomials given by n values each, as 2n values."""
    p = field.MODULUS
    return [x * y % p for x, y in zip(double_evaluations(field, a), double_evaluations(field, b),
                                      strict=True)]


def extend_values_to_power_of_2(field: type[Field], values: list[int], n: int) -> list[int]:
    """Values at all n-th roots of the polynomial of degree < len(values) given at the first ones.

    One missing value (the FLP's degree-2 gadgets) has a closed form: the coefficient of
    x**(n-1) is zero, so sum_k v_k W**k = 0 and v_(n-1) = -W * sum_(k<n-1) v_k W**k.
    More missing values are interpolated with the barycentric formula.
    """
    p = field.MODULUS
    known = len(values)
    if known == n:
        return list(values)
    nodes = field.nth_root_powers(n)
    if known == n - 1:
        s = sum(map(int.__mul__, values, nodes)) % p
        return [*values, (-s * nodes[1]) % p]
    xs = nodes[:known]
    denoms = []
    for i in range(known):
        d = 1
        for j in range(known):
            if j != i:
                d = d * (xs[i] - xs[j]) % p
        denoms.append(d)
    bary = batch_inverse(denoms, p)
    out = list(values)
    for k in range(known, n):
        x = nodes[k]
        diffs = [(x - xj) % p for xj in xs]
        full = 1
        for d in diffs:
            full = full * d % p
        inv_diffs = batch_inverse(diffs, p)
        acc = 0
        for i in range(known):
            acc += values[i] * bary[i] % p * inv_diffs[i]
        out.append(acc % p * full % p)
    return out
