"""A unary encoding tuned for sets of at most m options (multiselect questions, 2m <= k).

The same k independent bits as option_rr.py (P[1 | selected] = p, P[1 | not] = q), with the
two probabilities chosen for sets instead of flipped alike. When 2m <= k the worst allowed pair
of sets differs by m options each way (a = b = m in `SetShape.pairs`), so the exact loss is
(α·β)^m with α·β = p(1 − q)/(q(1 − p)): any (p, q) with p(1 − q)/(q(1 − p)) <= e^(ε/m) is
ε-LDP. Among these, the variance of a rarely selected option's share, q(1 − q)/(p − q)², is
least at p = 1/2 (Wang et al. 2017's OUE argument, at ε/m): p = 1/2, q = 1/(R + 1) with
R <= e^(ε/m) rational. Shares of check-all-that-apply options are mostly small, and this is
what the average over options `auto` ranks by rewards: set_ue wins there for m = 1 at small ε
(it is then OUE over the k options, the empty set being all zeros), bench/bench_multiselect.py.
With 2m > k the pair (m, k − m) binds and p = 1/2 is no longer the right tuning; option_rr or
psfo_grr serve those shapes, so set_ue refuses them (`shape_misfit`). With exclusive options
the same holds for the non-exclusive sets (m' = min(m, k') of k' options, 2m' <= k'); an
exclusive option alone against a set of m' differs by (1, m'), whose α·β^m' <= (α·β)^m', so the
exact loss stays R^m' with R <= e^(ε/m') (`privacy_loss` checks every pair).

Exact privacy, sampling, wire format and estimation: as option_rr.py (`SetBits`).
"""

from __future__ import annotations

from fractions import Fraction

from .option_rr import SetBits
from .set_base import SetShape, exp_floor


class SetUE(SetBits):
    name = "set_ue"
    summary = ("Unary encoding tuned for sets of at most m ≤ k/2: each option's bit is 1 w.p. "
               "1/2 if selected, 1/(e^(ε/m)+1) if not.")

    @classmethod
    def describe_limits(cls) -> str:
        return super().describe_limits() + ", max_selected at most half the options"

    @classmethod
    def shape_misfit(cls, shape: SetShape) -> tuple[str, str] | None:
        if shape.exclusive and 2 * shape.largest > shape.free:
            return ("mechanism", f"set_ue is tuned for sets of at most half the options that "
                    f"can be selected together ({shape.free} besides the exclusive ones: at "
                    f"most {shape.free // 2}); use option_rr or psfo_grr")
        if 2 * shape.max_selected > shape.k:
            return ("max_selected", f"set_ue is tuned for at most half the options "
                    f"(max_selected <= {shape.k // 2}); use option_rr or psfo_grr")
        return None

    @classmethod
    def probabilities(cls, shape: SetShape, epsilon: float) -> tuple[Fraction, Fraction]:
        r = exp_floor(Fraction(epsilon) / shape.largest)
        return Fraction(1, 2), 1 / (r + 1)
