// Exact samplers over a source with randbelow(n: bigint), a port of shared/randomness.py. Every
// report is drawn with secureSource (crypto.getRandomValues, secrets.randbelow's algorithm),
// never Math.random; tests replay Python's draws (tapes.js tapeSource). docs/browser-randomizers.md.

import { bitLength, Rational } from "./rational.js";

const POOL_WORDS = 2048;
const pool = new Uint32Array(POOL_WORDS);
let poolAt = POOL_WORDS;

/** One uniform 32-bit word from crypto.getRandomValues (refilled in blocks). */
function randomWord() {
  if (poolAt === POOL_WORDS) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  return pool[poolAt++];
}

/** k uniform random bits as a BigInt (k >= 1). */
function randomBits(k) {
  if (k <= 32) return BigInt(randomWord() >>> (32 - k));
  const words = Math.ceil(k / 32);
  let value = 0n;
  for (let i = 0; i < words; i++) value = (value << 32n) | BigInt(randomWord());
  return value >> BigInt(words * 32 - k);
}

/** Throws unless `n` is a valid randbelow bound (a positive BigInt). */
export function checkBound(n) {
  if (typeof n !== "bigint") throw new TypeError("randbelow takes a BigInt bound");
  if (n <= 0n) throw new RangeError("randbelow needs n > 0");
}

/** Uniform draws below small bounds (< 2^32) as Numbers, for the secure bulk path. */
function secureSmallEach(bounds) {
  const out = new Array(bounds.length);
  const words = new Uint32Array(Math.min(bounds.length, 16384) || 1);
  let at = words.length;
  for (let i = 0; i < bounds.length; i++) {
    const n = bounds[i];
    const shift = Math.clz32(n);  // 32 - bit length of n: keep the top bitLength(n) bits
    for (;;) {
      if (at === words.length) { crypto.getRandomValues(words); at = 0; }
      const r = words[at++] >>> shift;
      if (r < n) { out[i] = r; break; }
    }
  }
  return out;
}

/** The OS CSPRNG of the browser (crypto.getRandomValues). */
export const secureSource = Object.freeze({
  randbelow(n) {
    checkBound(n);
    const k = bitLength(n);
    for (;;) {
      const r = randomBits(k);
      if (r < n) return r;
    }
  },
});

/** For each bound b (BigInt), one draw in [0, b), in order: the sequential randbelow calls. */
export function randbelowEach(source, bounds) {
  if (source === secureSource && bounds.every((b) => b > 0n && b < 0x100000000n)) {
    return secureSmallEach(bounds.map(Number)).map(BigInt);
  }
  return bounds.map((b) => source.randbelow(b));
}

/** `count` draws in [0, n): exactly `count` sequential randbelow(n) calls. */
export function randbelowMany(source, n, count) {
  return randbelowEach(source, new Array(count).fill(n));
}

/**
 * Bernoulli bits [draw_i < threshold_i] for `count` draws in [0, n) (the bitmap mechanisms'
 * bulk path): the same draws as randbelowMany, compared without allocating BigInts when the
 * secure source draws small bounds. `thresholdAt(i)` gives a BigInt threshold.
 */
export function bernoulliBits(source, n, count, thresholdAt) {
  const bits = new Uint8Array(count);
  if (source === secureSource && n > 0n && n < 0x100000000n) {
    const draws = secureSmallEach(new Array(count).fill(Number(n)));
    for (let i = 0; i < count; i++) bits[i] = draws[i] < Number(thresholdAt(i)) ? 1 : 0;
    return bits;
  }
  const draws = randbelowMany(source, n, count);
  for (let i = 0; i < count; i++) bits[i] = draws[i] < thresholdAt(i) ? 1 : 0;
  return bits;
}

// --- shared/randomness.py samplers -----------------------------------------------------------

/** True with probability exactly p (a Rational in [0, 1]). */
export function bernoulli(p, source) {
  return source.randbelow(p.den) < p.num;
}

/** Uniform over [0, k) without `excluded` (k, excluded: BigInt). */
export function choiceExcept(k, excluded, source) {
  const draw = source.randbelow(k - 1n);
  return draw >= excluded ? draw + 1n : draw;
}

const R_ONE = new Rational(1n);

/** True with probability exactly exp(-gamma), gamma >= 0 rational (CKS 2020, Algorithm 1). */
export function bernoulliExpNeg(gamma, source) {
  if (gamma.num < 0n) throw new RangeError("gamma must be >= 0");
  while (gamma.gt(R_ONE)) {
    if (!bernoulliExpNeg(R_ONE, source)) return false;
    gamma = gamma.sub(R_ONE);
  }
  let k = 1n;
  while (bernoulli(gamma.div(k), source)) k += 1n;
  return k % 2n === 1n;
}

/** An integer z (BigInt) with P[z] proportional to exp(-rate·|z|) (CKS 2020, Algorithm 2). */
export function discreteLaplace(rate, source) {
  if (rate.num <= 0n) throw new RangeError("rate must be > 0");
  const s = rate.num;
  const t = rate.den;
  for (;;) {
    const u = source.randbelow(t);
    if (!bernoulliExpNeg(new Rational(u, t), source)) continue;
    let v = 0n;
    while (bernoulliExpNeg(R_ONE, source)) v += 1n;
    const y = (u + t * v) / s;
    const negative = source.randbelow(2n) === 1n;
    if (negative && y === 0n) continue;
    return negative ? -y : y;
  }
}

/**
 * The index i with probability exactly weights[i] / Σ weights (BigInts >= 0, positive total):
 * one randbelow(total), then the first running sum above it (randomness.draw_weighted).
 */
export function drawWeighted(weights, source) {
  let total = 0n;
  for (const w of weights) {
    if (w < 0n) throw new RangeError("drawWeighted needs non-negative weights");
    total += w;
  }
  if (total <= 0n) throw new RangeError("drawWeighted needs a positive total");
  const u = source.randbelow(total);
  let running = 0n;
  for (let i = 0; i < weights.length; i++) {
    running += weights[i];
    if (u < running) return i;
  }
  throw new Error("unreachable: u < total");
}
