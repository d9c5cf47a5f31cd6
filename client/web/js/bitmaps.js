// The bitmap randomizers of categorical questions, loaded only for a survey that names one
// (optional.js): unary encoding (oue, sue; shared/mechanisms/unary.py) and subset selection
// (ss; shared/mechanisms/subset.py). Their reports are bitmaps of 32-bit words.

import { bernoulli, bernoulliBits, randbelowEach } from "./randomness.js";
import { Rational, rationalExpFloor } from "./rational.js";
import { t } from "./i18n.js";
import {
  BITMAP_ENCODING, ONE, P, bitThresholds, bitsFromWords, certifyRatio, markedOptions, maxRatio,
  wordsFromBits,
} from "./mechanisms.js";  // a cycle, safe: this module is loaded after mechanisms.js

export function unaryCore(name, epsilon, k) {
  let p;
  let q;
  if (name === "oue") {
    const r = rationalExpFloor(epsilon);
    p = new Rational(1n, 2n);
    q = ONE.div(r.add(1));
  } else {  // sue: ε/2 is exact in binary floating point
    const r = rationalExpFloor(epsilon / 2);
    p = r.div(r.add(1));
    q = ONE.div(r.add(1));
  }
  if (!(p.gt(0n) && p.lt(ONE) && q.gt(0n) && q.lt(ONE))) certifyRatio(name, null, epsilon);
  const notP = ONE.sub(p);
  const notQ = ONE.sub(q);
  certifyRatio(name, maxRatio(p.div(q), notP.div(notQ)).mul(maxRatio(q.div(p), notQ.div(notP))), epsilon);
  const { D, pT, qT } = bitThresholds(p, q);
  return {
    name, k, p, q,
    params: { p: p.toString(), q: q.toString(), encoding: BITMAP_ENCODING },
    perturbIndex(index, source) {
      const bits = bernoulliBits(source, D, k, (v) => (v === index ? pT : qT));
      return wordsFromBits(bits, k);
    },
    describe() {
      const truthful = p.toNumber();
      const other = q.toNumber();
      return { text: t("mech.unary", { k, p: P(truthful), q: P(other) }), truthful, other };
    },
    explain(report, labels) { return markedOptions(bitsFromWords(report, k), labels); },
  };
}

function ssProbabilities(k, d, epsilon) {
  const r = rationalExpFloor(epsilon);
  const p = r.mul(d).div(r.mul(d).add(k - d));
  return [p, p.mul(d - 1).add(ONE.sub(p).mul(d)).div(k - 1)];
}

function ssBestSize(k, epsilon) {
  const target = k / (Math.exp(Math.min(epsilon, 700.0)) + 1);
  const clamp = (s) => Math.min(Math.max(s, 1), k - 1);
  const sizes = [...new Set([clamp(Math.floor(target)), clamp(Math.ceil(target))])].sort((a, b) => a - b);
  const worst = (d) => {
    const [pr, qr] = ssProbabilities(k, d, epsilon);
    const p = pr.toNumber();
    const q = qr.toNumber();
    const spread = (p - q) * (p - q);
    return Math.max(q * (1 - q) / spread, p * (1 - p) / spread);
  };
  let best = sizes[0];
  for (const d of sizes.slice(1)) if (worst(d) < worst(best)) best = d;
  return best;
}

export function ssCore(epsilon, k) {
  const d = ssBestSize(k, epsilon);
  const [p, q] = ssProbabilities(k, d, epsilon);
  if (!(d >= 1 && d <= k - 1)) certifyRatio("ss", null, epsilon);
  const r = rationalExpFloor(epsilon);
  certifyRatio("ss", maxRatio(r, r.inv()), epsilon);
  return {
    name: "ss", k, p, q, subsetSize: d,
    params: { p: p.toString(), q: q.toString(), subset_size: d, encoding: BITMAP_ENCODING },
    perturbIndex(index, source) {
      const inside = bernoulli(p, source);
      const others = inside ? d - 1 : d;
      const first = k - 1 - others;
      const bounds = [];
      for (let j = first; j < k - 1; j++) bounds.push(BigInt(j + 1));
      const draws = randbelowEach(source, bounds);
      // Floyd's algorithm: a uniform `others`-subset of the k - 1 values other than `index`.
      const chosen = new Set();
      for (let j = first; j < k - 1; j++) {
        const t = Number(draws[j - first]);
        chosen.add(chosen.has(t) ? j : t);
      }
      const bits = new Uint8Array(k);
      for (const c of chosen) bits[c >= index ? c + 1 : c] = 1;
      bits[index] = inside ? 1 : 0;
      return wordsFromBits(bits, k);
    },
    describe() {
      const truthful = p.toNumber();
      return { text: t("mech.ss", { d, k, p: P(truthful) }), truthful, other: q.toNumber() };
    },
    explain(report, labels) { return markedOptions(bitsFromWords(report, k), labels); },
  };
}
