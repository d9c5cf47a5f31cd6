// The hashing randomizers, loaded only for a survey that names one (optional.js): optimized
// local hashing (olh; shared/mechanisms/olh.py) and its parts that psfo_olh shares
// (multiselect.js), and Hadamard response (hr; shared/mechanisms/hadamard.py).

import { bernoulli, choiceExcept } from "./randomness.js";
import { Rational, bitLength, rationalExpFloor, roundHalfEven } from "./rational.js";
import { t } from "./i18n.js";
import { ManifestMismatch, ONE, P, certifyRatio, maxRatio } from "./mechanisms.js";  // a cycle, safe

const PRIME = 131071n;  // 2^17 - 1
const SEEDS = PRIME ** 3n;
const MAX_BUCKETS = 65536;
const OLH_HASH = "((a0 + a1*v + a2*v^2) mod prime) mod buckets, seed = a0 + a1*prime + a2*prime^2";  // not words: signed params

function olhBuckets(epsilon) {
  if (epsilon >= Math.log(MAX_BUCKETS)) return MAX_BUCKETS;
  return Math.min(roundHalfEven(Math.exp(epsilon)) + 1, MAX_BUCKETS);
}

function olhHash(seed, value, g) {
  const a0 = seed % PRIME;
  const a1 = (seed / PRIME) % PRIME;
  const a2 = seed / (PRIME * PRIME);
  return ((a0 + a1 * value + a2 * value * value) % PRIME) % g;
}

/** Optimized local hashing's parts (olh.py), shared with psfo_olh (multiselect.js): g buckets,
 * the bucket's randomized-response probabilities pB/qB, the exact probability qStar that a
 * report supports a value other than the hashed one, and one [seed, bucket] report of an item. */
export function localHashing(epsilon) {
  const g = olhBuckets(epsilon);
  const G = BigInt(g);
  const r = rationalExpFloor(epsilon);
  const pB = r.div(r.add(g - 1));
  const qB = ONE.div(r.add(g - 1));
  const base = PRIME / G;
  const extra = PRIME % G;
  const c2 = new Rational((base + 1n) ** 2n * extra + base ** 2n * (G - extra), PRIME * PRIME);
  return {
    g, pB, qB,
    qStar: c2.mul(pB).add(ONE.sub(c2).mul(qB)),
    valid: pB.add(qB.mul(g - 1)).eq(ONE) && qB.num > 0n,
    params: { buckets: g, prime: Number(PRIME), hash: OLH_HASH },
    report(item, source) {
      const seed = source.randbelow(SEEDS);
      let bucket = olhHash(seed, BigInt(item), G);
      if (!bernoulli(pB, source)) bucket = choiceExcept(G, bucket, source);
      return [Number(seed), Number(bucket)];
    },
  };
}

export function olhCore(epsilon, k) {
  if (k > Number(PRIME)) throw new ManifestMismatch(`local hashing supports at most ${PRIME} options`);
  const lh = localHashing(epsilon);
  const { g, pB, qB, qStar: q } = lh;
  if (!lh.valid) certifyRatio("olh", null, epsilon);
  certifyRatio("olh", maxRatio(pB.div(qB), qB.div(pB)), epsilon);
  return {
    name: "olh", k, p: pB, q,
    params: { p: pB.toString(), q: q.toString(), ...lh.params },
    perturbIndex(index, source) { return lh.report(index, source); },
    describe() {
      const truthful = pB.toNumber();
      return { text: t("mech.olh", { k, g, others: g - 1, p: P(truthful) }), truthful,
               other: qB.toNumber() };
    },
    explain(report) { return t("mech.code", { code: report[0], bucket: report[1] }); },
  };
}

export function hrCore(epsilon, k) {
  const size = 2 ** bitLength(BigInt(k));
  const r = rationalExpFloor(epsilon);
  const p = r.div(r.add(1));
  const q = new Rational(1n, 2n);
  if (!(p.gt(0n) && p.lt(ONE))) certifyRatio("hr", null, epsilon);
  certifyRatio("hr", maxRatio(p.div(ONE.sub(p)), ONE.sub(p).div(p)), epsilon);
  const SIZE = BigInt(size);
  return {
    name: "hr", k, p, q,
    params: { p: p.toString(), q: q.toString(), dimension: size },
    perturbIndex(index, source) {
      const row = index + 1;
      const inside = bernoulli(p, source);
      let j = Number(source.randbelow(SIZE));
      if ((parity(row & j) === 0) !== inside) j ^= row & -row;
      return j;
    },
    describe() {
      const truthful = p.toNumber();
      return { text: t("mech.hr", { top: size - 1, p: P(truthful) }), truthful, other: 0.5 };
    },
    explain(report) { return t("mech.number", { n: report }); },
  };
}

function parity(x) {
  let bits = 0;
  while (x) { bits ^= x & 1; x >>>= 1; }
  return bits;
}
