// An integer question in [min, max] (shared/question_types/integer.py): geometric noise
// (asked_geometric with "not asked"), a text input, a sum in the two-server mode.

import { el } from "../dom.js";
import { rawAnswer } from "../form.js";
import { t } from "../i18n.js";
import { loaded } from "../optional.js";  // asked_geometric.js, for a survey that names it
import { Rational, rationalFloor } from "../rational.js";
import { discreteLaplace } from "../randomness.js";
import {
  AnswerError, MAX_ABS_REPORT, ManifestMismatch, P, REPORT_TAIL_BITS, ReportError, mechanismFor,
  stepWords,
} from "../mechanisms.js";
import { NOT_ASKED } from "../skip_logic.js";
import { QuestionType } from "./base.js";

const DISTRIBUTION_MAX_VALUES = 256n;
const TAIL_MASS = 1e-4;
const MAX_TAIL = 4096;
// Per side, the chance an honest local geometric report is clipped (encoding.CLIP_TAIL).
const CLIP_TAIL = 1e-6;

/** The two-sided geometric mechanism on [low, high] (shared/mechanisms/geometric.py). */
function geometricCore(epsilon, low, high) {
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

/** The noise on x in words' parameters: chances of x, of x ± 1, of further away. */
function noiseParams(q, x, same, stepFactor) {
  const next = (2 * same) / stepFactor;  // one step up or down, together
  return { x, below: x - 1, above: x + 1, same: P(same), next: P(next),
           further: P(Math.max(0, 1 - same - next)), step: stepWords(stepFactor),
           min: q.min, max: q.max };
}

/** encoding.clip_bounds: [min - c, max + c] with c the smallest integer such that
 *  P[noise > c] = α^(c+1)/(1 + α) <= CLIP_TAIL, within the mechanism's report range. */
function clipBounds(q, mechanism) {
  const alpha = Math.exp(-mechanism.rate.toNumber());
  const c = Math.max(0, Math.ceil(Math.log(CLIP_TAIL * (1 + alpha)) / Math.log(alpha)) - 1);
  const [lo, hi] = mechanism.reportBounds.map(Number);
  return [Math.max(q.min - c, lo), Math.min(q.max + c, hi)];
}

class IntegerType extends QuestionType {
  // --- the signed definition (manifest.js, canonical.js, mechanisms.js) ---

  shapeRefusal(q) {
    return Number.isSafeInteger(q.min) && Number.isSafeInteger(q.max) && q.min < q.max ? null
      : "refusal.noRange";
  }

  check(q, where, Mismatch) {
    // the range's own bound is the geometric mechanism's (checked when it is built)
    if (!Number.isSafeInteger(q.min) || !Number.isSafeInteger(q.max) || q.min >= q.max) {
      throw new Mismatch(`${where}: min and max must be exact integers with min < max`);
    }
  }

  canonical(q) { return { min: q.min, max: q.max }; }

  // --- the mechanism (mechanisms.js) ---

  values() { return null; }

  core(name, epsilon, q, notAsked = false) {
    if (name === "geometric") return geometricCore(epsilon, BigInt(q.min), BigInt(q.max));
    if (name === "asked_geometric") {
      return loaded("askedGeometric").askedGeometricCore(epsilon, BigInt(q.min), BigInt(q.max));
    }
    return super.core(name, epsilon, q, notAsked);
  }

  /** The offset from min (a BigInt); "not asked" is index k (asked_geometric). */
  encoder(q, labels, notAskedIndex = null) {
    return function encode(answer) {
      if (notAskedIndex !== null && answer === NOT_ASKED) return notAskedIndex;
      if (typeof answer !== "bigint" && !Number.isSafeInteger(answer)) {
        throw new AnswerError(`the answer to ${JSON.stringify(q.id)} must be an integer`);
      }
      const value = BigInt(answer);
      if (value < BigInt(q.min) || value > BigInt(q.max)) {
        throw new AnswerError(`${value} is outside [${q.min}, ${q.max}] for ${JSON.stringify(q.id)}; it is refused, not clamped`);
      }
      return value - BigInt(q.min);
    };
  }

  memoValue(q, answer) { return answer !== NOT_ASKED ? BigInt(answer) : answer; }

  disclosedReport(q, index) { return Number(BigInt(q.min) + index); }  // safe

  disclosedWords(q, value) { return t("mech.number", { n: value }); }

  // --- the form (form.js) ---

  get optionalKey() { return "form.optionalEmpty"; }

  inputs(q, name, describedBy) {
    const id = `${name}-input`;
    return [
      el("label", { for: id, class: "inline" }, t("form.number", { min: q.min, max: q.max })),
      el("input", { type: "text", id, name, inputmode: q.min >= 0 ? "numeric" : "text",
                    autocomplete: "off", "aria-describedby": describedBy, class: "number" }),
    ];
  }

  read(form, q, name) {
    const { raw, ...done } = rawAnswer(form, q, name);
    if (raw === undefined) return done;
    const text = raw.trim();
    if (!/^[-+]?[0-9]+$/.test(text)) return { error: t("form.whole") };
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < q.min || value > q.max) {
      return { error: t("form.range", { min: q.min, max: q.max }) };
    }
    return { value };
  }

  answerText(q, value) { return String(value); }

  // --- the review and the receipt (review.js, skip_review.js) ---

  chances(q, mechanism, answer) {
    const d = mechanism.describe(answer);
    if (mechanism.name !== "geometric") return d.text;
    return t("review.number", noiseParams(q, Number(answer), d.unchanged, d.stepFactor));
  }

  reportOutside(q, report) {
    // a pair ("not asked") says it in its own words
    return !Array.isArray(report) && (report < q.min || report > q.max);
  }

  notAskedChances(q, mechanism, answer) {
    if (mechanism.name !== "asked_geometric") return undefined;
    const d = mechanism.describe();
    const chance = { p: P(d.truthful), q: P(d.other) };
    if (answer === NOT_ASKED) {
      return t("skip.numberNotAsked", { ...chance, middle: mechanism.params.default,
                                        min: q.min, max: q.max });
    }
    const rate = mechanism.rate.toNumber();
    return t("skip.number", { ...chance, ...noiseParams(q, Number(answer), Math.tanh(rate / 2),
                                                        Math.exp(rate)) });
  }

  notAskedReportWords(mechanism, report) {
    if (mechanism.name !== "asked_geometric") return undefined;
    const q = mechanism.question;
    const outside = report[1] < q.min || report[1] > q.max;
    return t(outside ? "skip.askedReportOutside" : "skip.askedReport",
             { asked: report[0] === 1 ? "yes" : "no", n: report[1], min: q.min, max: q.max });
  }

  // --- the two-server measurement (twoserver/upload.js, verify.js) ---

  valueCount(q) { return q.max - q.min + 1; }

  encoding(q, notAsked = false) {
    if (notAsked && q.local_epsilon != null) {
      // asked_geometric's [bit, number]: Count + Sum of the clipped number (asked_pair.py)
      const [lo, hi] = clipBounds(q, mechanismFor(q, { notAsked: true }));
      return { kind: "asked_pair", length: 2, max: hi - lo, offset: lo };
    }
    if (notAsked) return super.encoding(q, true);  // a Histogram ending with "not asked"
    if (q.local_epsilon != null && q.mechanism === "geometric") {
      const [lo, hi] = clipBounds(q, mechanismFor(q));
      return { kind: "sum", length: 1, max: hi - lo, offset: lo };
    }
    return { kind: "sum", length: 1, max: q.max - q.min, offset: q.min };
  }

  index(q, value) { return Number(this.encoder(q)(value)); }  // the same checks and words

  localMechanisms(q) {
    // a follow-up (skip logic) also takes asked_geometric (asked_pair.py)
    const base = super.localMechanisms(q);
    return q.relevant !== undefined ? [...base, "asked_geometric"] : base;
  }
}

export default new IntegerType({
  name: "integer",
  mechanisms: ["geometric"],
  notAskedMechanisms: ["asked_geometric"],
  conditionKind: "int",
  conditionWords: "an integer question",  // not words: a condition error
});
