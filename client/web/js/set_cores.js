// The multiselect randomizers a check-all-that-apply question may name besides psfo_grr
// (multiselect.js), loaded only for a survey that names one (optional.js): option_rr and set_ue
// (k independent bits; shared/mechanisms/option_rr.py, set_ue.py) and psfo_olh (local hashing
// of one padded item; psfo_olh.py).

import { t } from "./i18n.js";
import {
  BITMAP_ENCODING, ManifestMismatch, P, bitThresholds, bitsFromWords, markedOptions,
  wordsFromBits,
} from "./mechanisms.js";  // a cycle, safe: this module is loaded after mechanisms.js
import { ONE, certify, items, maxDifference, pairs } from "./multiselect.js";
import { localHashing } from "./hashing.js";
import { bernoulliBits } from "./randomness.js";
import { Rational, rationalExpFloorOf } from "./rational.js";

function marks(k, checked, p, q) {
  return t("multi.marks", { k, checked, unchecked: k - checked, p: P(p), q: P(q),
                            both: checked && k - checked ? "yes" : "no" });
}

/** option_rr and set_ue: k independent bits, 1 w.p. p when selected, q when not. */
export function bitsCore(name, epsilon, shape) {
  const { k, m, exclusive, free, largest } = shape;
  let p;
  let q;
  if (name === "option_rr") {
    const r = rationalExpFloorOf(Rational.fromNumber(epsilon).div(maxDifference(shape)));
    p = r.div(r.add(1));
    q = ONE.div(r.add(1));
  } else {
    if (exclusive.length && 2 * largest > free) throw new ManifestMismatch(`set_ue serves sets of at most half the options that can be selected together (${Math.floor(free / 2)})`);
    if (2 * m > k) throw new ManifestMismatch(`set_ue serves at most half the options (max_selected <= ${Math.floor(k / 2)})`);
    const r = rationalExpFloorOf(Rational.fromNumber(epsilon).div(largest));
    p = new Rational(1n, 2n);
    q = ONE.div(r.add(1));
  }
  if (!(q.gt(0n) && p.gt(q) && p.lt(ONE))) certify(name, null, epsilon);
  const alpha = p.div(q);
  const beta = ONE.sub(q).div(ONE.sub(p));
  let worst = ONE;
  for (const [a, b] of pairs(shape)) {
    const ratio = alpha.pow(a).mul(beta.pow(b));
    if (ratio.gt(worst)) worst = ratio;
  }
  certify(name, worst, epsilon);
  const { D, pT, qT } = bitThresholds(p, q);
  return {
    name, k, p, q,
    params: { p: p.toString(), q: q.toString(), encoding: BITMAP_ENCODING },
    perturbIndex(selected, source) {
      const inSet = new Set(selected);
      return wordsFromBits(bernoulliBits(source, D, k, (v) => (inSet.has(v) ? pT : qT)), k);
    },
    describe(labels, selected) {
      const truthful = p.toNumber();
      const other = q.toNumber();
      const text = selected === undefined
        ? t("multi.bits", { k, p: P(truthful), q: P(other) })
        : marks(k, selected.length, truthful, other);
      return { text, truthful, other };
    },
    explain(report, labels) { return markedOptions(bitsFromWords(report, k), labels); },
  };
}

/** psfo_olh: one item of T(S) drawn uniformly, then OLH over the k + m − least values. */
export function psfoOlhCore(epsilon, shape) {
  const { k, least, largest } = shape;
  const pad = largest;  // the largest allowed set (min(m, k') with exclusive options)
  const size = k + pad - least;
  const lh = localHashing(epsilon);
  const { g, pB, qB, qStar: q } = lh;
  const p = q.add(pB.sub(q).div(pad));
  if (!lh.valid) certify("psfo_olh", null, epsilon);
  certify("psfo_olh", pB.ge(qB) ? pB.div(qB) : qB.div(pB), epsilon);
  const blanks = size - k;
  return {
    name: "psfo_olh", k, p, q, pad, size,
    params: { p: p.toString(), q: q.toString(), pad, values: size, ...lh.params },
    perturbIndex(selected, source) {
      const padded = [...selected];
      for (let i = 0; padded.length < pad; i++) padded.push(k + i);
      return lh.report(padded[Number(source.randbelow(BigInt(pad)))], source);
    },
    describe(labels, selected) {
      const truthful = pB.toNumber();
      const words = { pad, k, blanks, g, others: g - 1, p: P(truthful) };
      const text = selected === undefined ? t("multi.psfoOlh", words)
        : t("multi.psfoOlhYours", { ...words, items: items(selected.length, pad) });
      return { text, truthful, other: qB.toNumber() };
    },
    explain(report) { return t("mech.code", { code: report[0], bucket: report[1] }); },
  };
}
