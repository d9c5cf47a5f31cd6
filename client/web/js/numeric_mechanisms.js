// The mean mechanisms for numbers (shared/mechanisms/duchi.py, piecewise.py, hybrid.py,
// one_bit_mean.py), ported
// draw for draw: an answer is a grid index j in [0, k) (t_j = -1 + 2j/(k - 1) on [-1, 1]), a
// report is a cell index drawn with exact integer weights from the page's CSPRNG. The `decimal`
// question type's unit (js/types/decimal.js) loads this module for a survey that has one.

import { bernoulli, drawWeighted, secureSource } from "./randomness.js";
import { Rational, rationalExpFloor } from "./rational.js";
import { ManifestMismatch, ONE, certifyRatio, checkEpsilon } from "./mechanisms.js";  // no cycle

const MIN_CELLS = 16n;
const MAX_CELLS = 4096n;
const ROUNDING_SHARE = 100n;
const MAX_OPTIONS = 65536;

/** m for s = a/b (piecewise.py cells_for): exact integer comparisons. */
export function cellsFor(a, b) {
  let m = MIN_CELLS;
  while (m < MAX_CELLS && (m * b < 2n * (a + b)
                           || m * m * (a + 3n * b) * b < 2n * ROUNDING_SHARE * (a + b) ** 2n)) {
    m *= 2n;
  }
  return m;
}

function checkGrid(name, epsilon, k) {
  checkEpsilon(epsilon, `${name}: epsilon`);
  if (!Number.isSafeInteger(k) || k < 2 || k > MAX_OPTIONS) {
    throw new ManifestMismatch(`${name}: the answer grid needs 2 to ${MAX_OPTIONS} values`);
  }
  return BigInt(k);
}

function checkIndex(index, k) {
  if (!Number.isSafeInteger(index) || index < 0 || index >= k) {
    throw new RangeError(`grid index ${index} is outside [0, ${k})`);
  }
  return BigInt(index);
}

/** Duchi's channel for e = c/d on K grid values (duchi.py DuchiGrid). */
function duchiGrid(c, d, K) {
  const base = (c + d) * (K - 1n);
  return {
    bound: new Rational(c + d, c - d),
    /** Report i's value on [-1, 1]: -B or +B. */
    value(i) { return i === 0 ? this.bound.neg() : this.bound; },
    weights(j) {
      const tilt = (2n * j - (K - 1n)) * (c - d);
      return [base - tilt, base + tilt];
    },
    /** The exact worst column ratio over every grid value (duchi.py DuchiGrid.loss): each
     * column runs from 2d(K - 1) to 2c(K - 1), so c/d. */
    loss() { return new Rational(c, d); },
  };
}

/** PM's discretized channel for s = a/b, m cells, K grid values (piecewise.py PiecewiseGrid). */
function piecewiseGrid(a, b, m, K) {
  const q = (a + b) * (K - 1n);
  const width = m * b * (K - 1n);
  const denominator = 2n * q * q * a * b * m;
  const b2 = b * b;
  const a2 = a * a;
  const hat = (i) => (i > 0n && i < m ? 2n * q * q : q * q);
  /** (L, R, first, last): the band of grid value j and the hats it touches (band). */
  function band(j) {
    const low = m * a * j;
    const high = low + width;
    const first = low / q;
    const up = (high + q - 1n) / q;
    return [low, high, first, up < m ? up : m];
  }
  function cumulative(i, position) {
    const d = position - i * q;
    if (d <= -q) return 0n;
    if (d <= 0n) return (d + q) ** 2n;
    if (d < q) return 2n * q * q - (q - d) ** 2n;
    return 2n * q * q;
  }
  return {
    m,
    c: new Rational(a + b, a - b),
    /** Cell i's value on [-1, 1]: C·(2i - m)/m. */
    value(i) { return this.c.mul(new Rational(2n * BigInt(i) - m, m)); },
    /** The numerators of P[i | j] over 2Q²abm, each checked within [b²H_i, a²H_i] and their
     * total: the row the page draws from is proven, not just recomputed. */
    weights(j) {
      const low = m * a * j;
      const high = low + width;
      const first = low / q;
      const last = (high + q - 1n) / q;
      const row = [];
      for (let i = 0n; i <= m; i++) row.push(b2 * hat(i));
      for (let i = first; i <= (last < m ? last : m); i++) {
        row[Number(i)] += (a2 - b2) * (cumulative(i, high) - cumulative(i, low));
      }
      let total = 0n;
      row.forEach((w, i) => {
        const h = hat(BigInt(i));
        if (w < b2 * h || w > a2 * h) throw new ManifestMismatch("piecewise: a cell's weight leaves its exact bounds");
        total += w;
      });
      if (total !== denominator) throw new ManifestMismatch("piecewise: a row is not a distribution");
      return row;
    },
    /** The exact worst ratio max_i max_j P[i|j] / min_j P[i|j] over every grid value j
     * (piecewise.py PiecewiseGrid.loss, the same integers): a hat no band touches is b²·H_i. */
    loss() {
      const lows = new Map();
      const highs = new Map();
      let below = 0n;
      let above = m;
      for (let j = 0n; j < K; j++) {
        const [, high, first, last] = band(j);
        const low = m * a * j;
        for (let i = first; i <= last; i++) {
          const value = b2 * hat(i) + (a2 - b2) * (cumulative(i, high) - cumulative(i, low));
          if (!lows.has(i) || value < lows.get(i)) lows.set(i, value);
          if (!highs.has(i) || value > highs.get(i)) highs.set(i, value);
        }
        if (first > below) below = first;
        if (last < above) above = last;
      }
      let worst = ONE;
      for (let i = 0n; i <= m; i++) {
        const column = lows.has(i) ? [lows.get(i), highs.get(i)] : [];
        if (i < below || i > above) column.push(b2 * hat(i));
        const top = column.reduce((x, y) => (y > x ? y : x));
        const bottom = column.reduce((x, y) => (y < x ? y : x));
        if (bottom <= 0n) return null;
        const ratio = new Rational(top, bottom);
        if (ratio.gt(worst)) worst = ratio;
      }
      return worst;
    },
  };
}

function halfEpsilonStandIn(name, epsilon) {
  const s = rationalExpFloor(epsilon / 2);
  // Every column of PM's channel lies within [b²H_i, a²H_i]: its ratio is at most s².
  certifyRatio(name, s.mul(s), epsilon);
  return s;
}

/** Duchi et al.: report index 0 (-B) or 1 (+B). */
export function duchiCore(epsilon, k) {
  const K = checkGrid("duchi", epsilon, k);
  const e = rationalExpFloor(epsilon);
  certifyRatio("duchi", e, epsilon);  // the +B column: 2c(k-1) against 2d(k-1)
  const grid = duchiGrid(e.num, e.den, K);
  return {
    name: "duchi", k, count: 2,
    params: { exp_epsilon: e.toString() },
    /** The largest |value| a report may have on [-1, 1] (the review's range), and a
     * report's value there (the receipt's number). */
    reach: grid.bound,
    value: (report) => grid.value(report),
    /** The channel's rows in blocks of integer weights, each block's over the same total in
     * every row (asked_grid.js compares rows), and its exact worst ratio R₂. */
    blocks: (j) => [grid.weights(BigInt(j))],
    loss: () => grid.loss(),
    perturbIndex(index, source = secureSource) {
      return drawWeighted(grid.weights(checkIndex(index, k)), source);
    },
  };
}

/**
 * Ding et al.'s 1BitMean with α-point rounding (one_bit_mean.py): α uniform on {0, ..., k - 2},
 * the answer rounded to max (index k - 1) if j > α, else min (index 0), and Duchi's bit for
 * that end: report index 0 (-B) or 1 (+B), the same channel as duchi's once mixed over α. In a
 * series (memo.js) α is drawn once from the question's keyed stream (`seriesIndex`) and each
 * end's bit is memoized.
 */
export function oneBitMeanCore(epsilon, k) {
  const name = "one_bit_mean";
  const K = checkGrid(name, epsilon, k);
  const e = rationalExpFloor(epsilon);
  const grid = duchiGrid(e.num, e.den, K);
  const [low, high] = [grid.weights(0n), grid.weights(K - 1n)];
  /** Row j mixed over α (rounded_weights): (K - 1 - j)·w(min) + j·w(max), the same total. */
  const rounded = (j) => low.map((w, i) => (K - 1n - j) * w + j * high[i]);
  // Each column is linear in j: its extremes are the rows of j = 0 and j = K - 1.
  const ratio = [0, 1].map((i) => {
    const [a, b] = [rounded(0n)[i], rounded(K - 1n)[i]];
    return a > b ? new Rational(a, b) : new Rational(b, a);
  }).reduce((x, y) => (y.gt(x) ? y : x));
  certifyRatio(name, ratio, epsilon);
  const alphaRound = (j, alpha) => (j > alpha ? K - 1n : 0n);
  return {
    name, k, count: 2,
    params: { exp_epsilon: e.toString() },
    reach: grid.bound,
    value: (report) => grid.value(report),
    blocks: (j) => [rounded(BigInt(j))],
    loss: () => ratio,
    perturbIndex(index, source = secureSource) {
      const j = checkIndex(index, k);
      const end = alphaRound(j, source.randbelow(K - 1n));
      return drawWeighted(grid.weights(end), source);
    },
    /** The end (an index) a series memoizes for grid index `index`, at the α drawn from the
     * question's keyed stream `source` (OneBitMean.series_answer). */
    seriesIndex(index, source) {
      return Number(alphaRound(checkIndex(Number(index), k), source.randbelow(K - 1n)));
    },
  };
}

/** The Piecewise Mechanism: report a cell index in [0, m]. */
export function piecewiseCore(epsilon, k) {
  const K = checkGrid("piecewise", epsilon, k);
  const s = halfEpsilonStandIn("piecewise", epsilon);
  const m = cellsFor(s.num, s.den);
  const grid = piecewiseGrid(s.num, s.den, m, K);
  return {
    name: "piecewise", k, count: Number(m) + 1,
    params: { exp_half_epsilon: s.toString(), cells: Number(m) },
    reach: grid.c,
    value: (report) => grid.value(report),
    blocks: (j) => [grid.weights(BigInt(j))],
    loss: () => grid.loss(),
    perturbIndex(index, source = secureSource) {
      return drawWeighted(grid.weights(checkIndex(index, k)), source);
    },
  };
}

/** The Hybrid Mechanism: PM's cells 0..m with probability α, else Duchi's at m+1 (-B), m+2 (+B). */
export function hybridCore(epsilon, k) {
  const K = checkGrid("hybrid", epsilon, k);
  const s = halfEpsilonStandIn("hybrid", epsilon);
  const m = cellsFor(s.num, s.den);
  const pm = piecewiseGrid(s.num, s.den, m, K);
  const duchi = duchiGrid(s.num * s.num, s.den * s.den, K);
  // α = 1 - 1/s where PM's variance at t = 0 is below Duchi's (ε > ε* ≈ 0.61), else 0.
  const s1 = s.sub(ONE);
  const pmZero = s.add(3).div(s1.mul(s1).mul(3));
  const s2 = s.mul(s);
  const ratio = s2.add(ONE).div(s2.sub(ONE));
  const alpha = pmZero.lt(ratio.mul(ratio)) ? ONE.sub(s.inv()) : new Rational(0n);
  return {
    name: "hybrid", k, count: Number(m) + 3,
    params: { exp_half_epsilon: s.toString(), cells: Number(m), alpha: alpha.toString() },
    // every cell's value, PM's included (Python's sent_range): C exceeds Duchi's
    // (s² + 1)/(s² - 1) at e^ε = s² (at α = 0 only those two are drawn)
    reach: pm.c,
    value: (report) => (report <= Number(m) ? pm.value(report)
      : duchi.value(report - Number(m) - 1)),
    // PM's cells weigh α·w/total, Duchi's (1 - α)·w/total: within a block a ratio of weights is
    // one of probabilities; at α = 0 PM's cells are never drawn (an all-zero block, skipped)
    blocks: (j) => [pm.weights(BigInt(j)).map((w) => (alpha.num === 0n ? 0n : w)),
                    duchi.weights(BigInt(j))],
    loss() {  // hybrid.py privacy_loss: Duchi's, and PM's when it is drawn
      const losses = [duchi.loss(), ...(alpha.num === 0n ? [] : [pm.loss()])];
      if (losses.includes(null)) return null;
      return losses.reduce((x, y) => (y.gt(x) ? y : x));
    },
    perturbIndex(index, source = secureSource) {
      const j = checkIndex(index, k);
      if (alpha.num !== 0n && bernoulli(alpha, source)) return drawWeighted(pm.weights(j), source);
      return Number(m) + 1 + drawWeighted(duchi.weights(j), source);
    },
  };
}

const CORES = Object.freeze({ duchi: duchiCore, piecewise: piecewiseCore, hybrid: hybridCore,
                             one_bit_mean: oneBitMeanCore });

/** The core of a mean mechanism by its name (duchi, piecewise, hybrid, one_bit_mean). */
export function meanCore(name, epsilon, k) {
  if (!Object.hasOwn(CORES, name)) throw new ManifestMismatch(`${JSON.stringify(name)} is not a mean mechanism`);
  return CORES[name](epsilon, k);
}

/**
 * The core a signed description names ({mechanism, epsilon, k, params}), refusing parameters that
 * are not what the page derives (ManifestMismatch), as mechanismFor does for the other types.
 */
export function meanMechanismFor({ mechanism, epsilon, k, params }) {
  const make = Object.hasOwn(CORES, mechanism) ? CORES[mechanism] : null;
  if (!make) throw new ManifestMismatch(`${JSON.stringify(mechanism)} is not a mean mechanism`);
  const core = make(epsilon, k);
  const expected = JSON.stringify(core.params, Object.keys(core.params).sort());
  const given = params && typeof params === "object"
    ? JSON.stringify(params, Object.keys(params).sort()) : null;
  if (given !== expected) {
    throw new ManifestMismatch(`${mechanism}: the parameters do not match ε = ${epsilon} on ${k} grid values (expected ${expected})`);
  }
  return core;
}
