"""Ding, Kulkarni and Yekhanin's 1BitMean with α-point rounding and memoization ("Collecting
telemetry data privately", NeurIPS 2017), for a number asked again and again in a `series`.

One round. The answer is grid value j of k (t_j = -1 + 2j/(k - 1) on [-1, 1], numeric_grid.py).
The device rounds it to one of the grid's two ends by the α-point rule, with α uniform on
{0, ..., k - 2}:

    end = k - 1 (max)  if j > α,    else 0 (min);      so P[end = max | j] = j/(k - 1),

and sends one bit, randomized response of the end at e = c/d = `rational_exp_floor(ε)` <= e^ε:
P[bit = 1 | end = max] = c/(c + d), P[bit = 1 | end = min] = d/(c + d). Mixed over α, the bit's
channel is exactly 1BitMean's, P[1 | j] = 1/(e + 1) + (j/(k - 1))·(e - 1)/(e + 1), which is Duchi
et al.'s two-output channel (duchi.py) on the same grid: report 0 stands for -B, report 1 for +B,
B = (e + 1)/(e - 1), unbiased for t_j, with Var_j = B² - t_j² (worst case B², at t = 0). So the
estimator of the mean, its plug-in standard error, its exact worst-case bound and the exact
variance for a fixed population are Duchi's (the class inherits them), and a round's mean across
rounds is the mean of that round's reports (each round's estimate stands alone).

Exactness. `privacy_loss` builds the α-mixed channel in integers, row j = (k - 1 - j)·w(min)
+ j·w(max) over a total that is the same for every j (w: the end's randomized-response weights),
and takes the worst column ratio over every grid value: c/d, so ε is proven at ln(c/d) <= ε when
the mechanism is built. `perturb_index` draws α (one `randbelow(k - 1)`) and then the bit (one
`draw_weighted` of the end's weights), both from the OS CSPRNG (or the source given).

In a series (client/hazmat_memo.py, client/web/js/memo.js). Per device, series and question,
α is drawn once from the device's memo stream (HMAC-SHA256 keyed by the device's 32-byte secret
from the OS CSPRNG, over the series, the question and this mechanism's name and parameters, not
the answer), so it is the same every round and is never stored or sent; each end's bit is
memoized the same way (its HMAC message names the end, not the answer). Each round the device
rounds that round's answer with its α (`series_answer`) and re-sends the memoized bit of the end.
Hence, over any number of rounds:

- the reports are a function of the rounding pattern (end_1, end_2, ...) and of the two memoized
  bits, whose distribution does not depend on the answers: at most two randomized bits about
  this question ever leave the device, and the ledger charges ε once per end used (at most 2ε);
- a value that stays on one side of its α (an unchanged value in particular, whatever it is)
  sends the same bit every round: the whole history is one ε-LDP report (the paper's guarantee
  for users whose behaviour pattern, the rounding pattern, is the same: ε for the whole
  collection, however long);
- when the value crosses its α the device sends the other end's bit: if the two memoized bits
  differ (probability (c² + d²)/(c + d)², 0.61 at ε = 1) the change of side is visible in the
  reports, and its rounds are not covered by ε (the paper's output perturbation, which blurs
  them, is not built); if they agree nothing changes. A value that moves by Δ grid steps
  crosses its α with probability Δ/(k - 1) at most.

Compare the memo of every other mechanism (docs/longitudinal.md): one report per distinct grid
value, each charged ε (d distinct values: d·ε), every change of value drawing a fresh report that
shows the change with high probability. Per round, 1BitMean's variance is Duchi's, which is
larger than piecewise's at ε >= 1 (numeric_auto.py): `auto` does not choose it (docs/decimal.md,
"Series"); a designer names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ..exact import PrivacyLoss
from ..randomness import RandomSource, draw_weighted
from .duchi import Duchi
from .numeric_grid import grid_point


class OneBitMean(Duchi):
    """1BitMean with α-point rounding to the grid's two ends (module docstring)."""

    name = "one_bit_mean"
    summary = ("Ding et al.'s 1BitMean: the answer rounded to min or max at a point α fixed per "
               "device, one randomized bit for that end; in a series the same bit is re-sent "
               "while the answer stays on its side of α (at most two bits ever); unbiased mean.")

    # --- α-point rounding ------------------------------------------------------------------

    @property
    def ends(self) -> tuple[int, int]:
        """The grid indices an answer is rounded to: min (0) and max (k - 1)."""
        return (0, self.k - 1)

    def draw_alpha(self, source: RandomSource) -> int:
        """α, uniform on {0, ..., k - 2}: one `randbelow(k - 1)`."""
        return source.randbelow(self.k - 1)

    def alpha_round(self, index: int, alpha: int) -> int:
        """The end grid value `index` is rounded to at α: max when index > α, else min."""
        return self.k - 1 if index > alpha else 0

    def rounded_weights(self, index: int) -> list[int]:
        """Integer weights of the bit for grid value `index`, mixed over α: of the k - 1 values
        of α, `index` round to max and the rest to min. Every row's total is the same."""
        low, high = (self.weights(end) for end in self.ends)
        rest = self.k - 1 - index
        return [rest * a + index * b for a, b in zip(low, high, strict=True)]

    def privacy_loss(self) -> PrivacyLoss | None:
        """The exact worst column ratio of the α-mixed channel `perturb` samples, over every
        grid value (each row has the same total, so a ratio of weights is one of
        probabilities)."""
        lows: list[int | None] = [None, None]
        highs = [0, 0]
        for j in range(self.k):
            for i, w in enumerate(self.rounded_weights(j)):
                if w <= 0:
                    return None
                low = lows[i]
                lows[i] = w if low is None else min(low, w)
                highs[i] = max(highs[i], w)
        return PrivacyLoss(ratio=max(Fraction(h, lo) for h, lo in zip(highs, lows, strict=True)
                                     if lo is not None))

    # --- across the rounds of a series -------------------------------------------------------

    def history_variance(self, history: Sequence[int]) -> Fraction:
        """Exact Var[S] on the [-1, 1] scale, S = v_1 + ... + v_R the values of one respondent's
        R memoized reports for the grid indices `history` (α uniform, the two end bits drawn
        once). With N_max(α) rounds rounded to max and N_min = R - N_max to min, the reports
        are ±B of the two bits: E[S] = Σ t_j (unbiased) and, as each bit has E[v²] = B² and
        E[v] = ∓1 at min/max, E[S² | α] = B²(N_min² + N_max²) - 2·N_min·N_max."""
        rounds = len(history)
        if rounds == 0:
            return Fraction(0)
        if any(not 0 <= j < self.k for j in history):
            raise ValueError(f"grid indices lie in [0, {self.k})")
        square = Fraction(0)
        start = 0  # α runs over [start, j) with the same N_max: the indices above α
        above = rounds
        for j in sorted(set(history)):
            square += (j - start) * self._round_square(rounds - above, above)
            start, above = j, above - history.count(j)
        square += (self.k - 1 - start) * self._round_square(rounds - above, above)
        mean = sum(grid_point(j, self.k) for j in history)
        return square / (self.k - 1) - mean * mean

    def _round_square(self, low: int, high: int) -> Fraction:
        return self.bound_squared * (low * low + high * high) - 2 * low * high

    @property
    def bound_squared(self) -> Fraction:
        return self.grid.bound ** 2

    def series_mean_variance(self, histories: Sequence[Sequence[int]]) -> float:
        """Exact variance of the average over R rounds of the rounds' mean estimates, for n
        respondents each answering the R rounds with the grid indices of `histories` (n rows
        of R): half²·Σ_i Var[S_i] / (n·R)², on the labels' scale as
        `fixed_population_variance` (a decimal's: times its resolution²). An unchanged answer
        gives R²·Var_j: averaging rounds does not shrink it (the point of the memo)."""
        n = len(histories)
        rounds = {len(h) for h in histories}
        if n == 0 or len(rounds) != 1 or 0 in rounds:
            raise ValueError("histories must be n >= 1 rows of the same number R >= 1 of rounds")
        total = sum(self.history_variance(list(h)) for h in histories)
        return float(total * self.half ** 2 / (n * rounds.pop()) ** 2)

    # --- the respondent's side ---------------------------------------------------------------

    def perturb_index(self, index: int, source: RandomSource) -> int:
        """α, then the end's randomized bit (0: -B, 1: +B), both from `source`."""
        end = self.alpha_round(index, self.draw_alpha(source))
        return draw_weighted(self.weights(end), source)

    def series_answer(self, answer: Any, source: RandomSource) -> Any:
        """The end a series memoizes and sends for `answer`: rounded at the α drawn from
        `source`, the question's own keyed stream (the same α every round), as the answer
        that end is (an int when whole, else the float of its exact decimal)."""
        end = self.alpha_round(self.encode(answer), self.draw_alpha(source))
        value = Fraction(self.answer_value(end))
        if value.denominator == 1:
            return value.numerator
        return float(Decimal(value.numerator) / Decimal(value.denominator))
