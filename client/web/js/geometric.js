// The two-sided geometric mechanism (discrete Laplace noise; shared/mechanisms/geometric.py),
// ported draw for draw: the core of an integer question, and of a decimal question on its grid
// indices (js/types/integer.js, js/types/decimal.js).

import { t } from "./i18n.js";
import { Rational, rationalFloor } from "./rational.js";
import { discreteLaplace } from "./randomness.js";
import {
  MAX_ABS_REPORT, ManifestMismatch, P, REPORT_TAIL_BITS, ReportError, stepWords,
} from "./mechanisms.js";

const DISTRIBUTION_MAX_VALUES = 256n;
const TAIL_MASS = 1e-4;
const MAX_TAIL = 4096;

/** The two-sided geometric mechanism on [low, high] (shared/mechanisms/geometric.py). */
export function geometricCore(epsilon, low, high) {
  const sensitivity = high - low;
  const epsilonRational = rationalFloor(epsilon);
  const rate = epsilonRational.div(sensitivity);
  const rateFloat = rate.toNumber();
  let histLow = null;
  let histHigh = null;
  if (sensitivity + 1n <= DISTRIBUTION_MAX_VALUES) {
    const tail = BigInt(Math.min(MAX_TAIL, Math.ceil(Math.log(1 / TAIL_MASS) / rateFloat)));
    histLow = Number(low - tail);
    histHigh = Number(high + tail);
  }
  // Log-domain loss: rate·Δ = ε' <= ε exactly (shared/mechanisms/geometric.py).
  if (rate.mul(sensitivity).gt(Rational.fromNumber(epsilon))) {
    throw new ManifestMismatch(`geometric: the exact privacy loss exceeds ε = ${epsilon}`);
  }
  // Every honest report (within T' of the range, all but 2^-64 of them) must be an integer
  // JSON carries exactly, or the mechanism does not fit (geometric.py misfit/report_bounds).
  const tail = BigInt(Math.ceil(REPORT_TAIL_BITS * Math.log(2) / rateFloat)) + 1n;
  if (low - tail < -MAX_ABS_REPORT || high + tail > MAX_ABS_REPORT) {
    throw new ManifestMismatch(`geometric: at ε = ${epsilon} the noise on [${low}, ${high}] reaches ${tail} beyond it, past ±(2^53 - 1)`);
  }
  const lowBound = low - tail;
  const highBound = high + tail;
  return {
    name: "geometric", k: sensitivity + 1n, rate,
    params: { epsilon_rational: epsilonRational.toString(), sensitivity: Number(sensitivity),
      histogram_low: histLow, histogram_high: histHigh },
    reportBounds: [lowBound, highBound],
    perturbIndex(index, source) {
      const y = low + index + discreteLaplace(rate, source);
      if (y < lowBound || y > highBound) {
        throw new ReportError(`the noise drawn for this answer took the report to ${y}, outside [${lowBound}, ${highBound}] where the server accepts reports: at this ε the range is too wide to answer`);
      }
      return Number(y);
    },
    describe() {
      const zero = Math.tanh(rateFloat / 2);
      const factor = Math.exp(rateFloat);
      return { text: t("mech.geometric", { p: P(zero), step: stepWords(factor) }),
               unchanged: zero, stepFactor: factor };
    },
    explain(report) { return t("mech.number", { n: report }); },
  };
}
