"""How long `auto` takes to choose and certify a mean mechanism on a wide grid (issue 41).

Run: `python bench/bench_numeric_auto.py [--k K]`. Prints numbers, asserts nothing.

A decimal 0..1,000,000 at resolution 20 (what the XLSForm import chooses for that range) has
k = 50,001 grid values. `auto` computes every candidate's exact one-report variance at every
grid value (`choose_mean_mechanism`), then the survey builds the chosen mechanism, whose
channel is certified exactly (`privacy_loss`). Before PM's closed-form variances and its
certificate counting the hats a band covers whole (shared/mechanisms/piecewise.py), this took
about 8 s to choose and 4.5 s to certify at k = 50,001, ε = 1 on the shared 2-core machine;
tests/shared/test_numeric_auto_speed.py checks the numbers and the choices are the same.
Measured after (same machine): choose 0.55-0.67 s at ε = 0.5-4, certify 0.26-1.6 s, a decimal
0..1,000,000 at resolution 20 parsed with auto (piecewise) and certified in 2.4 s (was ~12 s).
Each timing is the first call in a fresh cache (the functions cache by (k, ε)).
"""

from __future__ import annotations

import argparse
import time

from ldpsurvey.shared.mechanisms.numeric_auto import choose_mean_mechanism
from ldpsurvey.shared.mechanisms.registry import mechanism_class
from ldpsurvey.shared.survey import Survey


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--k", type=int, default=50_001)
    args = parser.parse_args()
    k = args.k
    print(f"k = {k:,}")
    print(f"{'epsilon':>8} {'chosen':>10} {'choose s':>9} {'certify s':>10}")
    for epsilon in (0.5, 1.0, 2.0, 4.0):
        start = time.perf_counter()
        chosen = choose_mean_mechanism(k, epsilon)
        choose = time.perf_counter() - start
        start = time.perf_counter()
        mechanism_class(chosen.name)(epsilon, range(k))
        certify = time.perf_counter() - start
        print(f"{epsilon:>8g} {chosen.name:>10} {choose:>9.3f} {certify:>10.3f}")
    for qtype, keys in (("decimal", {"resolution": 1_000_000 // (k - 1)}), ("integer", {})):
        high = (k - 1) * keys.get("resolution", 1)
        data = {"id": "bench", "title": "bench", "version": 1, "questions": [
            {"id": "amount", "type": qtype, "text": "How much?", "min": 0, "max": high,
             "estimate": ["mean"], "epsilon": 1.5, **keys}]}
        start = time.perf_counter()
        survey = Survey.from_dict(data)
        took = time.perf_counter() - start
        article = "an" if qtype == "integer" else "a"
        print(f"{article} {qtype} 0..{high:,} ({k:,} values) at epsilon 1.5, auto: "
              f"{survey.questions[0].mechanism}, parsed and certified in {took:.2f} s")


if __name__ == "__main__":
    main()
