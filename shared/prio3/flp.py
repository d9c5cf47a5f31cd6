"""FlpBBCGGI19: the fully linear proof of draft-irtf-cfrg-vdaf over a validity circuit.

prove() records each gadget's input wires while evaluating the circuit, builds the wire
polynomials (seed, one value per call, zero padding: Lagrange values at the p-th roots of
unity) and sends the wire seeds and the gadget polynomial's first values. query() evaluates
the circuit on shares with gadget outputs read off the gadget polynomial, and tests the
gadget polynomial against the wire polynomials at a random point t. decide() finishes it.
"""

from __future__ import annotations

from typing import Any

from ldpsurvey.shared.prio3.circuits import Valid
from ldpsurvey.shared.prio3.errors import VerifyError
from ldpsurvey.shared.prio3.gadgets import gadget_poly_len, wire_poly_len
from ldpsurvey.shared.prio3.poly import (
    double_evaluations,
    eval_with_weights,
    extend_values_to_power_of_2,
    lagrange_weights,
    next_power_of_2,
)


class _Recorder:
    """Stands in for one gadget: records input wires, returns the output it is given."""

    __slots__ = ("k", "values", "wires")

    def __init__(self, seeds: list[int], p: int, values: list[int] | None) -> None:
        self.wires = [[s] + [0] * (p - 1) for s in seeds]
        self.k = 0
        self.values = values


class FlpBBCGGI19:
    """The FLP for one validity circuit; lengths as in the draft's parameter table."""

    def __init__(self, valid: Valid) -> None:
        self.valid = valid
        self.field = valid.field
        self.MEAS_LEN = valid.MEAS_LEN
        self.OUTPUT_LEN = valid.OUTPUT_LEN
        self.JOINT_RAND_LEN = valid.JOINT_RAND_LEN
        self.PROVE_RAND_LEN = valid.prove_rand_len()
        self.QUERY_RAND_LEN = valid.query_rand_len()
        # Per gadget: (wire length p, gadget poly length, full evaluation size, step).
        self._shapes = []
        proof_len = 0
        for g, calls in zip(valid.GADGETS, valid.GADGET_CALLS, strict=True):
            p = wire_poly_len(calls)
            glen = gadget_poly_len(g.DEGREE, p)
            size = next_power_of_2(glen)
            self._shapes.append((p, glen, size, size // p))
            proof_len += g.ARITY + glen
        self.PROOF_LEN = proof_len
        self.VERIFIER_LEN = 1 + sum(g.ARITY + 1 for g in valid.GADGETS)

    def encode(self, measurement: Any) -> list[int]:
        return self.valid.encode(measurement)

    def truncate(self, meas: list[int]) -> list[int]:
        return self.valid.truncate(meas)

    def decode(self, output: list[int], num_measurements: int) -> Any:
        return self.valid.decode(output, num_measurements)

    def prove(self, meas: list[int], prove_rand: list[int], joint_rand: list[int]) -> list[int]:
        field = self.field
        recorders = []
        calls = []
        offset = 0
        for g, (p, _, _, _) in zip(self.valid.GADGETS, self._shapes, strict=True):
            rec = _Recorder(prove_rand[offset:offset + g.ARITY], p, None)
            offset += g.ARITY
            recorders.append(rec)
            calls.append(self._prove_call(g, rec))
        self.valid.eval(meas, joint_rand, 1, calls)
        proof: list[int] = []
        for g, rec, (_, glen, _, _) in zip(self.valid.GADGETS, recorders, self._shapes,
                                           strict=True):
            proof += [w[0] for w in rec.wires]
            proof += g.eval_poly(field, rec.wires)[:glen]
        return proof

    def _prove_call(self, gadget, rec: _Recorder):
        field = self.field

        def call(inp: list[int]) -> int:
            rec.k += 1
            k = rec.k
            for wire, x in zip(rec.wires, inp, strict=True):
                wire[k] = x
            return gadget.eval(field, inp)

        return call

    def query(self, meas: list[int], proof: list[int], query_rand: list[int],
              joint_rand: list[int], num_shares: int) -> list[int]:
        field = self.field
        mod = field.MODULUS
        recorders = []
        calls = []
        offset = 0
        for g, (p, glen, size, _) in zip(self.valid.GADGETS, self._shapes, strict=True):
            seeds = proof[offset:offset + g.ARITY]
            gpoly = proof[offset + g.ARITY:offset + g.ARITY + glen]
            offset += g.ARITY + glen
            values = extend_values_to_power_of_2(field, gpoly, next_power_of_2(glen))
            while len(values) < size:
                values = double_evaluations(field, values)
            rec = _Recorder(seeds, p, values)
            recorders.append(rec)
            calls.append(self._query_call(rec, size // p))
        out = self.valid.eval(meas, joint_rand, num_shares, calls)

        if self.valid.EVAL_OUTPUT_LEN > 1:
            n_out = self.valid.EVAL_OUTPUT_LEN
            v = sum(map(int.__mul__, query_rand[:n_out], out)) % mod
            test_points = query_rand[n_out:]
        else:
            v = out[0]
            test_points = query_rand
        verifier = [v]
        for rec, t, (p, _, size, _) in zip(recorders, test_points, self._shapes, strict=True):
            if pow(t, p, mod) == 1:
                raise VerifyError("the query's test point is a root of unity")
            # Wire values past the last call are zero padding: skip them.
            weights = lagrange_weights(field, p, t)[:rec.k + 1]
            mul = int.__mul__
            verifier += [sum(map(mul, weights, wire)) % mod for wire in rec.wires]
            assert rec.values is not None
            verifier.append(eval_with_weights(lagrange_weights(field, size, t), rec.values, mod))
        return verifier

    @staticmethod
    def _query_call(rec: _Recorder, step: int):
        values = rec.values
        assert values is not None

        def call(inp: list[int]) -> int:
            rec.k += 1
            k = rec.k
            for wire, x in zip(rec.wires, inp, strict=True):
                wire[k] = x
            return values[k * step]

        return call

    def decide(self, verifier: list[int]) -> bool:
        if verifier[0] != 0:
            return False
        offset = 1
        for g in self.valid.GADGETS:
            wire_checks = verifier[offset:offset + g.ARITY]
            gadget_check = verifier[offset + g.ARITY]
            offset += g.ARITY + 1
            if g.eval(self.field, wire_checks) != gadget_check:
                return False
        return True
