// An integer question that depends on randomized answers (skip logic), loaded only for a
// survey that names asked_geometric (optional.js).

import { bernoulli, choiceExcept, discreteLaplace } from "./randomness.js";
import { Rational, expLower, rationalExpFloorOf, rationalFloor } from "./rational.js";
import { quoted, t } from "./i18n.js";
import { optionText, specialLabels } from "./shown.js";
import { NOT_ASKED } from "./skip_logic.js";
import {
  MAX_ABS_REPORT, ManifestMismatch, ONE, P, REPORT_TAIL_BITS, ReportError, certifyRatio,
} from "./mechanisms.js";  // a cycle, safe: this module is loaded after mechanisms.js

/**
 * An integer question with a "not asked" value (shared/mechanisms/asked_geometric.py): an asked
 * bit by randomized response and two-sided geometric noise on the number, or on the middle of
 * the range when not asked. Indices are BigInts; index k is "not asked".
 *
 * With special values (don't know, prefer not to say) the bit is a status code over `codes` =
 * 1 + (extra values): GRR with p/q = e₁, 1 an answer, 0 the first extra value, then 2, 3, ...;
 * indices k, k + 1, ... are the extra values in domain order. `codes` 2: the asked bit.
 */
export function askedGeometricCore(epsilon, low, high, codes = 2) {
  const span = high - low;
  const half = span - span / 2n;
  const middle = low + span / 2n;
  const share5 = new Rational(5n * span, 9n * half);
  const share = share5.lt(ONE) ? share5 : ONE;
  const rate = rationalFloor(epsilon).mul(share).div(span);
  const eps = Rational.fromNumber(epsilon);
  const askedEpsilon = eps.sub(rate.mul(half));
  if (askedEpsilon.num <= 0n) certifyRatio("asked_geometric", null, epsilon);
  const e1 = rationalExpFloorOf(askedEpsilon);
  const others = BigInt(codes - 1);
  const p = e1.div(e1.add(others));
  const q = ONE.div(e1.add(others));
  // WorstOfLosses: two asked answers (rate·Δ), asked against "not asked" (e1·e^(rate·h)).
  if (rate.mul(span).gt(eps) || (e1.gt(ONE) && e1.gt(expLower(eps.sub(rate.mul(half)))))) {
    throw new ManifestMismatch(`asked_geometric: the exact privacy loss exceeds ε = ${epsilon}`);
  }
  const rateFloat = rate.toNumber();
  const tail = BigInt(Math.ceil(REPORT_TAIL_BITS * Math.log(2) / rateFloat)) + 1n;
  if (low - tail < -MAX_ABS_REPORT || high + tail > MAX_ABS_REPORT) {
    throw new ManifestMismatch(`asked_geometric: at ε = ${epsilon} the noise on [${low}, ${high}] reaches ${tail} beyond it, past ±(2^53 - 1)`);
  }
  const lowBound = low - tail;
  const highBound = high + tail;
  const k = span + 1n;
  /** The status code of an index (asked_geometric.py code_of). */
  const codeOf = (index) => (index < k ? 1n : index === k ? 0n : index - k + 1n);
  return {
    name: "asked_geometric", k, rate, p, q, middle, codes,
    params: { default: Number(middle), rate: rate.toString(), p: p.toString(), q: q.toString() },
    reportBounds: [lowBound, highBound],
    perturbIndex(index, source) {
      const asked = index < k;
      let bit;
      if (codes === 2) {
        bit = bernoulli(asked ? p : q, source) ? 1 : 0;
      } else {  // GRR over the status codes
        const code = codeOf(index);
        bit = Number(bernoulli(p, source) ? code : choiceExcept(BigInt(codes), code, source));
      }
      const y = (asked ? low + index : middle) + discreteLaplace(rate, source);
      if (y < lowBound || y > highBound) {
        throw new ReportError(`the noise drawn for this answer took the report to ${y}, outside [${lowBound}, ${highBound}] where the server accepts reports`);
      }
      return [bit, Number(y)];
    },
    describe() {
      const zero = Math.tanh(rateFloat / 2);
      const factor = Math.exp(rateFloat);
      return { text: t("skip.askedGeometric", { p: P(p.toNumber()) }), unchanged: zero,
               stepFactor: factor, truthful: p.toNumber(), other: q.toNumber() };
    },
    explain(report) {
      return t("skip.askedReport", { asked: report[0] === 1 ? "yes" : "no", n: report[1] });
    },
  };
}

// --- a status code's words (special values; types/integer.js asks) ---

/** The statuses in code order after ‘an answer’: the special values, then "not asked". */
function statusWordsOf(q, notAsked) {
  const extra = [...specialLabels(q), ...(notAsked ? [NOT_ASKED] : [])];
  return [t("special.statusAnswer"), ...extra.map((v) => (v === NOT_ASKED ? t("skip.notAskedQuoted")
    : quoted(optionText(q, v))))];
}

/** The review's chances of a status code pair for `answer`. */
export function statusChances(q, mechanism, answer, noiseParams) {
  const d = mechanism.describe();
  const chance = { p: P(d.truthful), q: P(d.other) };
  const words = statusWordsOf(q, mechanism.notAsked);
  const extra = [...specialLabels(q), NOT_ASKED];
  const mine = typeof answer === "string" ? extra.indexOf(answer) + 1 : 0;  // 0: an answer
  const values = words.filter((_, i) => i !== mine).join(", ");
  if (mine) {
    return t("special.statusSpecial", { ...chance, answer: words[mine], values,
                                     middle: mechanism.params.default, min: q.min, max: q.max });
  }
  const rate = mechanism.rate.toNumber();
  return t("special.statusNumber", { ...chance, values, ...noiseParams(
    q, Number(answer), Math.tanh(rate / 2), Math.exp(rate)) });
}

/** A stored status code pair in words (code 1 an answer, 0 the first extra value, 2, 3, ...). */
export function statusWords(mechanism, report) {
  const words = statusWordsOf(mechanism.question, mechanism.notAsked);
  const code = report[0];
  return t("special.statusReport", { status: words[code === 1 ? 0 : code === 0 ? 1 : code],
                                  n: report[1] });
}
