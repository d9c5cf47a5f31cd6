"""How much the number of options selected can vary, given each option's share.

The mean number selected of a check-all-that-apply question (a multiselect question) is the sum
of the options' shares, and its sampling variance holds Var|S|, the spread of the set sizes
across respondents. Neither mode releases that spread: the two servers add up each option's
count (no squares, no pairs of options), and the LDP aggregate of per-option bits keeps only
the per-option counts. What IS released are the options' shares f_j, and they limit the
spread well below the Bhatia-Davis bound (m − μ)(μ − r) that uses only the mean μ and the
size range [r, m]: a respondent cannot select a rare option without it showing in its share.

The tightest bound the shares allow, exactly. A random set S has marginal shares f and sizes
in [r, m] iff its size distribution satisfies, for every t, f_(1) + ... + f_(t) (the t
largest shares) <= E[min(|S|, t)], with equality at t = k: the marginal vectors of random
s-sets form the hypersimplex, the base polytope of the rank function min(|A|, s), and a
mixture of them is the base polytope of the mixed rank function E[min(|A|, |S|)], whose
binding sets are the top-t options. Write τ(t) = E[(|S| − t)+]: τ(0) = μ, τ is convex and
piecewise linear on the integers with slopes in [−1, 0], τ(t) = μ − t for t <= r, τ(m) = 0,
and the shares ask τ(t) <= μ − F_t (F_t: the sum of the t largest shares). Since
E|S|² = μ + 2·Σ_{t>=1} τ(t), the largest variance is reached by the GREATEST convex function
under these upper limits, the lower convex hull of the points (t, limit(t)), which satisfies
every constraint (`size_variance_bound`). Without the shares' limits the hull is the chord
from (r, μ − r) to (m, 0): the two-point law at r and m, i.e. Bhatia-Davis. A test checks
the hull against a linear program over every distribution of sets (tests/shared/
test_set_spread.py).

The bound is plugged in at the estimated shares (clipped to [0, 1]), as Bhatia-Davis was
plugged in at the estimated mean: an upper bound on the spread, never the spread itself,
which would take each respondent's set size (`size_variance_bound` is the most it can be).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def bhatia_davis(mean: float, low: int, high: int) -> float:
    """(high − μ)(μ − low) at μ clipped to [low, high]: the most a variable in [low, high]
    with mean μ can vary."""
    mu = min(max(float(mean), low), high)
    return (high - mu) * (mu - low)


def size_variance_bound(shares: Sequence[float] | np.ndarray, low: int, high: int) -> float:
    """The largest Var|S| of a random set whose options are selected with these shares and
    whose size lies in [low, high] (module docstring); at most `bhatia_davis` of their sum."""
    f = np.sort(np.clip(np.asarray(shares, dtype=float), 0.0, 1.0))[::-1]
    mu = min(max(float(f.sum()), low), high)
    if high <= low or mu <= low or mu >= high:
        return 0.0
    top = np.concatenate([[0.0], np.cumsum(f)])  # F_t, the t largest shares
    ts = np.arange(high + 1)
    limit = np.where(ts <= low, mu - ts,
                     np.maximum(mu - top[np.minimum(ts, f.size)], np.maximum(mu - ts, 0.0)))
    limit[high] = 0.0
    tau = _lower_hull(ts.astype(float), limit)
    return max(mu + 2.0 * float(tau[1:].sum()) - mu * mu, 0.0)


def _lower_hull(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """The greatest convex function under the points (xs, ys), at xs (xs increasing)."""
    hull: list[int] = []
    for i in range(xs.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # drop b when it lies on or above the chord from a to i
            if (ys[b] - ys[a]) * (xs[i] - xs[a]) >= (ys[i] - ys[a]) * (xs[b] - xs[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.interp(xs, xs[hull], ys[hull])
