"""The FLP gadgets of draft-irtf-cfrg-vdaf: Mul, PolyEval and ParallelSum."""

from __future__ import annotations

from ldpsurvey.shared.prio3.field import Field
from ldpsurvey.shared.prio3.poly import double_evaluations, next_power_of_2


def wire_poly_len(gadget_calls: int) -> int:
    """Values per wire polynomial: the seed plus one per call, rounded up to a power of two."""
    return next_power_of_2(1 + gadget_calls)


def gadget_poly_len(degree: int, wire_len: int) -> int:
    """Values of the gadget polynomial that the proof carries."""
    return degree * (wire_len - 1) + 1


class Gadget:
    """A non-affine sub-circuit: `eval` on field values, `eval_poly` on Lagrange polynomials."""

    ARITY: int
    DEGREE: int

    def eval(self, field: type[Field], inp: list[int]) -> int:
        raise NotImplementedError

    def eval_poly(self, field: type[Field], inp_poly: list[list[int]]) -> list[int]:
        raise NotImplementedError


class Mul(Gadget):
    """x * y."""

    ARITY = 2
    DEGREE = 2

    def eval(self, field: type[Field], inp: list[int]) -> int:
        return inp[0] * inp[1] % field.MODULUS

    def eval_poly(self, field: type[Field], inp_poly: list[list[int]]) -> list[int]:
        p = field.MODULUS
        a = double_evaluations(field, inp_poly[0])
        b = double_evaluations(field, inp_poly[1])
        return [x * y % p for x, y in zip(a, b, strict=True)]


class PolyEval(Gadget):
    """x -> poly(x) for fixed integer coefficients (lowest degree first)."""

    ARITY = 1

    def __init__(self, coeffs: list[int], num_calls: int) -> None:
        while len(coeffs) > 1 and coeffs[-1] == 0:
            coeffs = coeffs[:-1]
        if not coeffs or coeffs == [0]:
            raise ValueError("PolyEval needs a non-zero polynomial")
        self.coeffs = list(coeffs)
        self.DEGREE = len(coeffs) - 1
        self.n = next_power_of_2(gadget_poly_len(self.DEGREE, wire_poly_len(num_calls)))

    def _horner(self, p: int, x: int) -> int:
        acc = 0
        for c in reversed(self.coeffs):
            acc = (acc * x + c) % p
        return acc

    def eval(self, field: type[Field], inp: list[int]) -> int:
        return self._horner(field.MODULUS, inp[0])

    def eval_poly(self, field: type[Field], inp_poly: list[list[int]]) -> list[int]:
        values = inp_poly[0]
        mono = field.inv_ntt(values, len(values))
        p = field.MODULUS
        return [self._horner(p, x) for x in field.ntt(mono, self.n)]


class ParallelSum(Gadget):
    """sum over `count` chunks of subcircuit(chunk)."""

    def __init__(self, subcircuit: Gadget, count: int) -> None:
        self.subcircuit = subcircuit
        self.count = count
        self.ARITY = subcircuit.ARITY * count
        self.DEGREE = subcircuit.DEGREE
        self._mul = isinstance(subcircuit, Mul)

    def eval(self, field: type[Field], inp: list[int]) -> int:
        if self._mul:  # sum of pairwise products, one reduction
            return sum(map(int.__mul__, inp[0::2], inp[1::2])) % field.MODULUS
        a = self.subcircuit.ARITY
        return sum(
            self.subcircuit.eval(field, inp[i * a:(i + 1) * a]) for i in range(self.count)
        ) % field.MODULUS

    def eval_poly(self, field: type[Field], inp_poly: list[list[int]]) -> list[int]:
        p = field.MODULUS
        out_len = next_power_of_2(gadget_poly_len(self.DEGREE, len(inp_poly[0])))
        total = [0] * out_len
        a = self.subcircuit.ARITY
        if self._mul:
            for i in range(self.count):
                x = double_evaluations(field, inp_poly[2 * i])
                y = double_evaluations(field, inp_poly[2 * i + 1])
                total = [t + u * v for t, u, v in zip(total, x, y, strict=True)]
            return [t % p for t in total]
        for i in range(self.count):
            part = self.subcircuit.eval_poly(field, inp_poly[i * a:(i + 1) * a])
            total = [t + u for t, u in zip(total, part, strict=True)]
        return [t % p for t in total]
