// The exponential mechanism over an ordinal question's options (ordinal_exp;
// shared/mechanisms/ordinal.py), loaded only for a survey that names it (optional.js).

import { Rational, expLower, simplestBetween } from "./rational.js";
import { N, t } from "./i18n.js";
import { ManifestMismatch, ONE, P, certifyRatio, optionWords } from "./mechanisms.js";  // a cycle, safe

const ORDINAL_MAX_OPTIONS = 1024;

function bestBase(epsilon, k) {
  const top = expLower(Rational.fromNumber(epsilon).div(k - 1));
  return simplestBetween(
    top.mul(ONE.sub(new Rational(1n, (1n << 32n) * BigInt(k - 1)))),
    top.mul(ONE.sub(new Rational(1n, 1n << 64n))),
  );
}

export function ordinalCore(epsilon, k) {
  if (k > ORDINAL_MAX_OPTIONS) {
    throw new ManifestMismatch(`the ordinal mechanism handles at most ${ORDINAL_MAX_OPTIONS} options`);
  }
  const base = bestBase(epsilon, k);
  if (base.le(ONE)) certifyRatio("ordinal_exp", null, epsilon);
  certifyRatio("ordinal_exp", base.pow(k - 1), epsilon);
  let weights = null;  // t^d·s^(k-1-d) for b = s/t, d = 0..k-1
  const weightsOf = () => {
    if (weights === null) {
      const s = base.num;
      const t = base.den;
      const sPow = [1n];
      for (let i = 1; i < k; i++) sPow.push(sPow[i - 1] * s);
      weights = [];
      let tPow = 1n;
      for (let d = 0; d < k; d++) { weights.push(tPow * sPow[k - 1 - d]); tPow *= t; }
    }
    return weights;
  };
  return {
    name: "ordinal_exp", k, base,
    params: { base: base.toString(), scores: `1..${k}` },
    perturbIndex(index, source) {
      const w = weightsOf();
      let total = 0n;
      for (let y = 0; y < k; y++) total += w[Math.abs(index - y)];
      let draw = source.randbelow(total);
      for (let y = 0; y < k; y++) {
        const wy = w[Math.abs(index - y)];
        if (draw < wy) return y;
        draw -= wy;
      }
      throw new Error("unreachable: the draw is below the total weight");
    },
    describe() {
      const b = base.toNumber();
      let z = 0;  // Σ_y b^-|x-y| for the middle option: its probability of staying put
      const mid = Math.floor((k - 1) / 2);
      for (let y = 0; y < k; y++) z += b ** -Math.abs(mid - y);
      return { text: t("mech.ordinal", { b: N(b.toPrecision(4)), p: P(1 / z) }), stepFactor: b,
               truthfulMiddle: 1 / z };
    },
    explain(report, labels) { return optionWords(labels[report]); },
  };
}
