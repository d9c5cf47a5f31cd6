"""The browser's secure randomizers against the exact channels, in real Chromium.

10^5 reports per mechanism drawn with `secureSource` (crypto.getRandomValues, not seeded), their
counts compared with the exact channel by a chi-square test whose false-alarm rate is ALPHA per
check (cells with expected count < 5 pooled; impossible reports must never appear). Report
spaces too large to list are projected: OLH onto (supports the answer, supports another value),
whose joint law is exact (p*·c2, ...). The vectors prove the JS draws are shared/'s draws; this
proves the secure source feeding them is uniform and nothing is lost on the fast paths.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.olh import bucket_moments, hash_values
from ldpsurvey.shared.survey import Survey
from scipy import stats

N = 100_000
ALPHA = 1e-5  # per check: 27 checks in this file, family-wise false alarm < 3e-4

COLLECT = """async ([root, question, answer, n]) => {
  const M = await import(root + "js/mechanisms.js");
  const mech = M.mechanismFor(question);
  const counts = new Map();
  for (let i = 0; i < n; i++) {
    const key = JSON.stringify(mech.perturb(answer));
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return Object.fromEntries(counts);
}"""

OPTIONS = ["a", "b", "c", "d", "e"]
CONFIGS = {
    "binary_rr": ({"type": "binary", "mechanism": "binary_rr", "epsilon": 1.0}, True),
    "grr": ({"type": "categorical", "mechanism": "grr", "epsilon": 1.0, "options": OPTIONS}, "b"),
    "oue": ({"type": "categorical", "mechanism": "oue", "epsilon": 1.0, "options": OPTIONS}, "b"),
    "sue": ({"type": "categorical", "mechanism": "sue", "epsilon": 1.0, "options": OPTIONS}, "b"),
    "ss": ({"type": "categorical", "mechanism": "ss", "epsilon": 0.5, "options": OPTIONS}, "b"),
    "olh": ({"type": "categorical", "mechanism": "olh", "epsilon": 1.0, "options": OPTIONS}, "b"),
    "hr": ({"type": "categorical", "mechanism": "hr", "epsilon": 1.0, "options": OPTIONS}, "b"),
    "ordinal_exp": ({"type": "ordinal", "mechanism": "ordinal_exp", "epsilon": 1.0,
                     "options": OPTIONS}, "b"),
    "geometric": ({"type": "integer", "mechanism": "geometric", "epsilon": 1.0, "min": 0,
                   "max": 10}, 3),
    "grr+instantaneous": ({"type": "categorical", "mechanism": "grr", "epsilon": 1.0,
                           "instantaneous_epsilon": 0.7, "options": OPTIONS[:3]}, "b"),
    "binary_rr+instantaneous": ({"type": "binary", "mechanism": "binary_rr", "epsilon": 2.0,
                                 "instantaneous_epsilon": 1.0}, False),
}


def _build(spec: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    survey = Survey.from_dict({"id": "stats", "title": "Stats", "version": 1,
                               "series": "s" if "instantaneous_epsilon" in spec else None,
                               "questions": [{"id": "q", "text": "q?", **spec}]})
    return survey.to_dict()["questions"][0], mechanism_for(survey.questions[0])


def pooled_chisquare(observed: np.ndarray, expected: np.ndarray) -> float:
    """p-value of a chi-square test after pooling the smallest cells until each has an
    expected count >= 5. Cells of probability 0 must be empty (checked by the caller)."""
    order = np.argsort(expected)
    obs, exp = list(observed[order].astype(float)), list(expected[order].astype(float))
    while len(exp) > 1 and exp[0] < 5:
        merged_o, merged_e = obs.pop(0) + obs.pop(0), exp.pop(0) + exp.pop(0)
        at = int(np.searchsorted(exp, merged_e))
        obs.insert(at, merged_o)
        exp.insert(at, merged_e)
    return float(stats.chisquare(obs, exp).pvalue)


def _expected(name: str, mech: Any, index: int) -> tuple[list[Any], np.ndarray]:
    """(every possible report, its exact probability) for finite report spaces."""
    if hasattr(mech, "channel"):
        row = mech.channel()[index]
        reports = [bool(y) for y in range(2)] if name.startswith("binary_rr") else list(
            range(len(row)))
        return reports, np.array([float(p) for p in row])
    k = mech.k
    patterns = list(range(2**k))
    if name in ("oue", "sue"):
        probs = []
        for z in patterns:
            prob = Fraction(1)
            for v in range(k):
                p = mech.p_star if v == index else mech.q_star
                prob *= p if z >> v & 1 else 1 - p
            probs.append(prob)
    else:  # ss: P[Z | x] = r/D if x in Z else 1/D over the d-subsets Z
        d = mech.subset_size
        r = mech.p_star * (k - d) / (d * (1 - mech.p_star))
        total = math.comb(k - 1, d - 1) * r + math.comb(k - 1, d)
        probs = [Fraction(0) if z.bit_count() != d else (r if z >> index & 1 else 1) / total
                 for z in patterns]
    assert sum(probs) == 1
    return [[z] for z in patterns], np.array([float(p) for p in probs])


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_secure_reports_follow_the_exact_channel(js_page: Any, web_root_url: str,
                                                 name: str) -> None:
    spec, answer = CONFIGS[name]
    question, mech = _build(spec)
    counts = {json.dumps(json.loads(key)): count for key, count in js_page.evaluate(
        COLLECT, [web_root_url, question, answer, N]).items()}
    assert sum(counts.values()) == N
    index = mech.encode(answer)
    if name == "geometric":
        noise = {json.loads(key) - answer: count for key, count in counts.items()}
        assert _geometric_pvalue(noise, float(mech.rate)) > ALPHA
        return
    if name == "olh":
        reports = np.array([json.loads(key) for key in counts for _ in range(counts[key])])
        other = (index + 1) % mech.k
        hashed = hash_values(reports[:, 0], np.array([index, other]), mech.g)
        supports = hashed == reports[:, 1:2]
        joint = np.bincount(2 * supports[:, 0] + supports[:, 1], minlength=4)
        c2, _ = bucket_moments(mech.g)
        p, q = mech.p_star, mech.q_star
        probs = [1 - p - q + p * c2, q - p * c2, p - p * c2, p * c2]  # (S_x, S_u) = 00 01 10 11
        assert pooled_chisquare(joint, np.array([float(x) for x in probs]) * N) > ALPHA
        return
    reports, probs = _expected(name, mech, index)
    keys = [json.dumps(r) for r in reports]
    assert set(counts) <= set(keys), f"impossible reports: {set(counts) - set(keys)}"
    impossible = [counts.get(key, 0) for key, prob in zip(keys, probs, strict=True) if prob == 0]
    assert not any(impossible)
    observed = np.array([counts.get(key, 0) for key, prob in zip(keys, probs, strict=True)
                         if prob > 0])
    assert pooled_chisquare(observed, probs[probs > 0] * N) > ALPHA


def _geometric_pvalue(noise: dict[int, int], rate: float) -> float:
    """Chi-square of the noise against P[z] = tanh(rate/2)·e^(-rate|z|), the tails pooled."""
    m = 0
    norm = math.tanh(rate / 2)
    while N * norm * math.exp(-rate * (m + 1)) >= 5:
        m += 1
    zs = range(-m, m + 1)
    expected = [N * norm * math.exp(-rate * abs(z)) for z in zs]
    tail = (N - sum(expected)) / 2
    observed = [sum(c for z, c in noise.items() if z < -m), *(noise.get(z, 0) for z in zs),
                sum(c for z, c in noise.items() if z > m)]
    return float(stats.chisquare(observed, [tail, *expected, tail]).pvalue)


@pytest.mark.parametrize("bound", ["1", "2", "3", "4294967295", "4294967296", "4294967297",
                                   str(3 * 2**70), str(2**521 - 1)])
def test_secure_randbelow_is_uniform(js_page: Any, web_root_url: str, bound: str) -> None:
    """secureSource.randbelow(n), single and bulk: 10^5 draws in 8 equal-width cells of [0, n)
    (or each value for n < 8), chi-square at ALPHA; a draw >= n fails outright."""
    single, bulk = js_page.evaluate("""async ([root, bound, count]) => {
      const R = await import(root + "js/randomness.js");
      const n = BigInt(bound);
      const cells = n < 8n ? Number(n) : 8;
      const tally = (draws) => {
        const counts = new Array(cells).fill(0);
        for (const d of draws) {
          if (d < 0n || d >= n) throw new Error(`draw ${d} outside [0, ${n})`);
          counts[Number((d * BigInt(cells)) / n)] += 1;
        }
        return counts;
      };
      const one = [];
      for (let i = 0; i < count; i++) one.push(R.secureSource.randbelow(n));
      return [tally(one), tally(R.randbelowMany(R.secureSource, n, count))];
    }""", [web_root_url, bound, N])
    n = int(bound)
    cells = min(n, 8)
    # Cell j holds the draws d with floor(d·cells/n) = j: ceil(j·n/cells) .. ceil((j+1)·n/cells)-1.
    edges = [-(-j * n // cells) for j in range(cells + 1)]
    expected = np.diff(np.array(edges, dtype=object)).astype(float) * N / n
    for counts in (single, bulk):
        assert sum(counts) == N
        if n > 1:
            assert stats.chisquare(counts, expected).pvalue > ALPHA
