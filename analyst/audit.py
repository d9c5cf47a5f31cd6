"""Black-box privacy audit: a statistical lower bound on a randomizer's privacy loss.

The exact checks in `exact.py` prove what a mechanism's *channel* promises; this audit checks
what its *sampler* does, knowing nothing of its internals (as LDP-Auditor and StatDP do). For a
pair of true answers (a, b):

1. Selection: draw reports for a and for b and pick the output event E that best separates
   them (a union of the most a-leaning outputs, or a threshold for integer outputs), scored
   by the lower confidence bound it would give.
2. Evaluation: on fresh reports, count E under a and under b. With one-sided Clopper-Pearson
   bounds, P_a(E) >= lo and P_b(E) <= hi each hold with probability 1 - α/2, so
   ln(lo / hi) is a lower confidence bound (level 1 - α) on ln(P_a(E) / P_b(E)), which an
   ε-LDP sampler keeps <= ε for every event. A bound above the claimed ε refutes the claim.

Because the event is chosen on data independent of the evaluation sample, the bound is valid
whatever the selection did. How many evaluation reports are drawn is computed from the
selected event's probabilities: enough to resolve the loss to within `resolution`.

Reports are seen either as exact outputs (hashable, compared as canonical JSON) or, when
outputs are nearly all distinct (e.g. local hashing's seeds), through the mechanism's own
aggregate of one report (which answers the report supports): post-processing, so the bound
stays a valid lower bound on the report's loss.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Protocol

from ldpsurvey.shared.distributions import incomplete_beta
from ldpsurvey.shared.randomness import RandomSource, resolve


class Randomizer(Protocol):
    """What the audit needs: the answer domain, the claimed ε and a sampler."""

    labels: Sequence[Any]
    epsilon: float

    def perturb(self, answer: Any, source: RandomSource | None = None) -> Any: ...


# --- Clopper-Pearson ------------------------------------------------------------------------


def beta_ppf(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b), by bisection on the monotone CDF."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if incomplete_beta(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided exact bounds (lo, hi) on a binomial p from k of n, each at level 1 - alpha:
    P[p >= lo] >= 1 - alpha and P[p <= hi] >= 1 - alpha."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    lo = 0.0 if k == 0 else beta_ppf(alpha, k, n - k + 1)
    hi = 1.0 if k == n else beta_ppf(1 - alpha, k + 1, n - k)
    return lo, hi


def loss_lower_bound(k1: int, n1: int, k2: int, n2: int, alpha: float) -> float:
    """Lower confidence bound (level 1 - alpha) on ln(p1 / p2) from k1 of n1 and k2 of n2."""
    lo, _ = clopper_pearson(k1, n1, alpha / 2)
    _, hi = clopper_pearson(k2, n2, alpha / 2)
    return -math.inf if lo == 0.0 else math.log(lo / hi)


# --- events ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """A set of report views, described for the audit report."""

    description: str
    members: frozenset[Hashable] | None = None      # a union of exact views
    at_most: int | None = None                      # or integer views <= at_most
    at_least: int | None = None                     # or integer views >= at_least

    def contains(self, view: Hashable) -> bool:
        if self.members is not None:
            return view in self.members
        if self.at_most is not None:
            return isinstance(view, int) and view <= self.at_most
        return isinstance(view, int) and self.at_least is not None and view >= self.at_least

    def count(self, views: Sequence[Hashable]) -> int:
        return sum(1 for v in views if self.contains(v))


def _candidate_events(va: Sequence[Hashable], vb: Sequence[Hashable],
                      max_prefixes: int = 64) -> list[Event]:
    ca, cb = Counter(va), Counter(vb)
    outputs = sorted(set(ca) | set(cb), key=lambda v: -(ca[v] + 0.5) / (cb[v] + 0.5))
    events = []
    for j in range(1, min(len(outputs), max_prefixes) + 1):
        members = frozenset(outputs[:j])
        shown = ", ".join(sorted(str(m) for m in list(members)[:4]))
        more = f" (+{len(members) - 4} more)" if len(members) > 4 else ""
        events.append(Event(f"report in {{{shown}}}{more}", members=members))
    if all(isinstance(v, int) and not isinstance(v, bool) for v in outputs):
        values = sorted(set(outputs))  # type: ignore[type-var]
        step = max(1, len(values) // 64)
        for t in values[::step]:
            events.append(Event(f"report <= {t}", at_most=t))  # type: ignore[arg-type]
            events.append(Event(f"report >= {t}", at_least=t))  # type: ignore[arg-type]
    return events


# --- views ----------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def exact_view(report: Any) -> Hashable:
    """The report itself: scalars as they are, anything else as canonical JSON."""
    value = _plain(report)
    if isinstance(value, bool | int | str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def support_view(mechanism: Any, a_index: int, b_index: int) -> Callable[[Any], Hashable]:
    """What the mechanism's own aggregate of one report says about answers a and b."""

    def view(report: Any) -> Hashable:
        aggregate = mechanism.new_aggregate()
        aggregate.add(mechanism.validate_report(report))
        counts = aggregate.to_dict().get("counts")
        if isinstance(counts, list) and len(counts) == len(mechanism.labels):
            return json.dumps([counts[a_index], counts[b_index]])
        return json.dumps(aggregate.to_dict(), sort_keys=True)

    return view


# --- the audit ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairAudit:
    """The audit of one ordered pair: how much more likely E is under a than under b."""

    answer_a: Any
    answer_b: Any
    claimed_epsilon: float
    event: str
    view: str
    n: int                  # evaluation reports per answer
    count_a: int
    count_b: int
    epsilon_lower: float    # lower confidence bound on ln(P_a(E) / P_b(E))
    epsilon_point: float    # plug-in ln(count_a / count_b)
    alpha: float

    @property
    def refuted(self) -> bool:
        """True when the claim is refuted at confidence 1 - alpha."""
        return self.epsilon_lower > self.claimed_epsilon

    def __str__(self) -> str:
        return (f"{self.answer_a!r} vs {self.answer_b!r}: P_a(E)={self.count_a}/{self.n}, "
                f"P_b(E)={self.count_b}/{self.n} for E = {self.event} ({self.view} view); "
                f"ln ratio {self.epsilon_point:.3f}, lower bound {self.epsilon_lower:.3f} "
                f"(claimed {self.claimed_epsilon:.3f}, alpha {self.alpha:.2g})")


def samples_needed(p1: float, p2: float, alpha: float, resolution: float) -> int:
    """Reports per answer so the bound sits within about `resolution` of ln(p1/p2).

    By the delta method, Var[ln p̂] ≈ (1 - p) / (n p); the one-sided bounds each use the
    normal quantile z at alpha/2, so the margin is about z·sqrt((1-p1)/(n p1) + (1-p2)/(n p2))
    and solving margin <= resolution for n gives the formula below."""
    z = NormalDist().inv_cdf(1 - alpha / 2)
    p1, p2 = min(max(p1, 1e-6), 1.0), min(max(p2, 1e-6), 1.0)
    return math.ceil(z * z * ((1 - p1) / p1 + (1 - p2) / p2) / resolution**2)


def audit_pair(mechanism: Randomizer, a: Any, b: Any, *, claimed: float, alpha: float,
               n_select: int = 4000, n_min: int = 2000, n_max: int = 100_000,
               resolution: float = 0.15, source: RandomSource | None = None,
               view: Callable[[Any], Hashable] | None = None) -> tuple[PairAudit, PairAudit]:
    """Audit a vs b and b vs a (one selection and one evaluation sample serve both)."""
    source = resolve(source)
    labels = mechanism.labels

    def draw(answer: Any, n: int) -> list[Any]:
        return [mechanism.perturb(answer, source) for _ in range(n)]

    select_a, select_b = draw(a, n_select), draw(b, n_select)
    view_name = "exact"
    if view is None:
        view = exact_view
        distinct = len({exact_view(r) for r in select_a})
        if distinct > n_select // 10 and hasattr(mechanism, "new_aggregate"):
            view_name = "support"
            view = support_view(mechanism, labels.index(a), labels.index(b))
    else:
        view_name = "custom"
    sa, sb = [view(r) for r in select_a], [view(r) for r in select_b]

    def best(x: list[Hashable], y: list[Hashable]) -> tuple[Event, float, float]:
        scored = []
        for event in _candidate_events(x, y):
            kx, ky = event.count(x), event.count(y)
            if kx:
                scored.append((loss_lower_bound(kx, len(x), ky, len(y), alpha), event,
                               kx / len(x), ky / len(y)))
        if not scored:
            everything = Event("any report", at_least=-(2**63))
            return everything, 1.0, 1.0
        _, event, px, py = max(scored, key=lambda s: s[0])
        return event, px, py

    (event_ab, pa1, pb1), (event_ba, pb2, pa2) = best(sa, sb), best(sb, sa)
    n = max(n_min, min(n_max, samples_needed(pa1, pb1, alpha, resolution),
                       samples_needed(pb2, pa2, alpha, resolution)))
    ea = [view(r) for r in draw(a, n)]
    eb = [view(r) for r in draw(b, n)]

    def result(x: Any, y: Any, event: Event, vx: list[Hashable],
               vy: list[Hashable]) -> PairAudit:
        kx, ky = event.count(vx), event.count(vy)
        point = math.inf if ky == 0 else (-math.inf if kx == 0 else math.log(kx / ky))
        return PairAudit(x, y, claimed, event.description, view_name, n, kx, ky,
                         loss_lower_bound(kx, n, ky, n, alpha), point, alpha)

    return result(a, b, event_ab, ea, eb), result(b, a, event_ba, eb, ea)


def default_pairs(labels: Sequence[Any]) -> list[tuple[Any, Any]]:
    """The extreme pair (first, last), the first adjacent pair and a middle adjacent pair."""
    k = len(labels)
    pairs = [(labels[0], labels[-1]), (labels[0], labels[1]),
             (labels[k // 2 - 1], labels[k // 2])]
    return list(dict.fromkeys(p for p in pairs if p[0] != p[1]))


def audit(mechanism: Randomizer, *, claimed: float | None = None,
          pairs: Sequence[tuple[Any, Any]] | None = None, alpha: float = 1e-6,
          **options: Any) -> list[PairAudit]:
    """Audit every pair in both directions; `alpha` is family-wise (Bonferroni over them).

    `claimed` defaults to the mechanism's exact realized ε when it has one (the tightest
    claim it makes), else its `epsilon`."""
    if claimed is None:
        realized = getattr(mechanism, "realized_epsilon", None)
        claimed = realized() if callable(realized) else float(mechanism.epsilon)
    pairs = list(pairs) if pairs is not None else default_pairs(mechanism.labels)
    each = alpha / (2 * len(pairs))
    results: list[PairAudit] = []
    for a, b in pairs:
        results.extend(audit_pair(mechanism, a, b, claimed=claimed, alpha=each, **options))
    return results
