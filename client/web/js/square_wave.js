// The discretized Square Wave mechanism (square_wave; shared/mechanisms/square_wave.py): a number
// kept on a grid of at most 1024 points, reported as a cell of the grid widened by B points on
// each side, a near cell e^ε times likelier than a far one. Exact: the geometry (d, B, m) is
// derived in rationals as Python derives it, the draw is one randbelow(W) from the page's
// CSPRNG (drawWeighted's mapping). The `decimal` question type's unit (js/types/decimal.js)
// loads it; tests/web/test_square_wave_vectors.py proves it equal to Python.

import { Rational, rationalExpFloor } from "./rational.js";
import { secureSource } from "./randomness.js";
import { AnswerError, ManifestMismatch, certifyRatio, checkEpsilon } from "./mechanisms.js";

export const MAX_BUCKETS = 1024n;
const SMALL_EPSILON = new Rational(1n, 32n);
const HALF = new Rational(1n, 2n);
const MAX_VALUE = 2n ** 53n - 1n;

/** The paper's b in exact rationals (square_wave.optimal_b). */
export function optimalB(epsilon) {
  const eps = Rational.fromNumber(epsilon);
  if (eps.lt(SMALL_EPSILON)) return HALF.sub(eps.div(3n)).add(eps.mul(eps).div(9n));
  const e = rationalExpFloor(epsilon);
  return eps.mul(e).sub(e).add(1n).div(e.mul(2n).mul(e.sub(1n).sub(eps)));
}

/**
 * {d, half, m} for k grid values at ε (square_wave.geometry), BigInts: B = floor(b·(d − 1)), the
 * grid steps within the paper's b.
 */
export function geometry(epsilon, k) {
  const d = k < MAX_BUCKETS ? k : MAX_BUCKETS;
  const half = optimalB(epsilon).mul(d - 1n).floor();
  return { d, half, m: d + 2n * half };
}

/**
 * The randomizer for answers low..high (BigInts, low < high) at ε. `params`, when given (a
 * manifest's), must equal the derived ones: anything else is a ManifestMismatch.
 */
export function squareWave(epsilon, low, high, params = undefined) {
  checkEpsilon(epsilon, "square_wave: epsilon");
  if (typeof low !== "bigint" || typeof high !== "bigint" || low >= high
      || low < -MAX_VALUE || high > MAX_VALUE) {
    throw new ManifestMismatch("square_wave: min and max must be exact integers with min < max within ±(2^53 - 1)");
  }
  const k = high - low + 1n;
  const { d, half, m } = geometry(epsilon, k);
  const e = rationalExpFloor(epsilon);
  // Every column holds only s/W and t/W (square_wave.py): the worst ratio is s/t = e.
  certifyRatio("square_wave", e, epsilon);
  const s = e.num;
  const t = e.den;
  const window = 2n * half + 1n;
  const nearTotal = window * s;
  const total = nearTotal + (m - window) * t;
  const derived = { e: `${s}/${t}`, grid: Number(d), half_window: Number(half), cells: Number(m) };
  const same = params !== null && typeof params === "object"
    && Object.keys(params).length === Object.keys(derived).length
    && Object.entries(derived).every(([key, value]) => params[key] === value);
  if (params !== undefined && !same) {
    throw new ManifestMismatch(`square_wave: parameters ${JSON.stringify(params)} differ from the derived ${JSON.stringify(derived)}`);
  }
  const gridPoint = (index) => (d === k ? index
    : (2n * index * (d - 1n) + (k - 1n)) / (2n * (k - 1n)));
  return {
    name: "square_wave", k, d, half, m, params: derived,
    /** The cell (a Number in [0, m)) reported for answer index `index` (BigInt). */
    perturbIndex(index, source = secureSource) {
      // randomness.js drawWeighted over the row's weights (j far, L near, the rest far), O(1).
      const j = gridPoint(index);
      let u = source.randbelow(total);
      if (u < j * t) return Number(u / t);
      u -= j * t;
      if (u < nearTotal) return Number(j + u / s);
      return Number(j + window + (u - nearTotal) / t);
    },
    /** The report for a true answer (a BigInt in low..high); refused, never clamped. */
    perturb(answer, source = secureSource) {
      if (typeof answer !== "bigint" || answer < low || answer > high) {
        throw new AnswerError(`the answer must be an integer grid value in [${low}, ${high}]`);
      }
      return this.perturbIndex(answer - low, source);
    },
  };
}
