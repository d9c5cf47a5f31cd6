// An integer question in [min, max] (shared/question_types/integer.py): geometric noise
// (asked_geometric with "not asked"), a text input, a sum in the two-server mode; or, where it
// names one of the number grid's mechanisms (duchi, piecewise, hybrid, one_bit_mean,
// square_wave, mean_and_distribution, or geometric as the pair's mean part), the grid of
// resolution 1 over min..max as a decimal's (../number_grid.js, loaded for such a survey by
// optional.js).

import { el } from "../dom.js";
import { rawAnswer } from "../form.js";
import { t } from "../i18n.js";
import { geometricCore } from "../geometric.js";
import { loaded } from "../optional.js";  // asked_geometric.js, for a survey that names it
import { PyFloat, isFloat } from "../canonical.js";
import { AnswerError, P, mechanismFor, stepWords } from "../mechanisms.js";
import { NOT_ASKED } from "../skip_logic.js";
import { QuestionType, extraValues } from "./base.js";
import { optionText, specialLabels } from "../shown.js";

// The number grid's mechanisms an integer takes (shared/question_types/integer.py
// GRID_MECHANISMS): their cores are number_grid.js's, on the indices of min..max.
const GRID_MECHANISMS = Object.freeze(["duchi", "piecewise", "hybrid", "one_bit_mean",
                                       "square_wave", "mean_and_distribution"]);
const PAIR = "mean_and_distribution";
const cores = new WeakMap();  // a grid question's core and grid, for its receipt's words

// Per side, the chance an honest local geometric report is clipped (encoding.CLIP_TAIL).
const CLIP_TAIL = 1e-6;

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

  /** min and max; estimate, bins and typical where the survey gives them
   * (IntegerType.canonical); the pair's ε shares are floats in its params, as Python writes
   * them. */
  canonical(q, disclosed) {
    const d = { min: q.min, max: q.max };
    if (q.estimate !== undefined) d.estimate = q.estimate;
    if (q.bins !== undefined) d.bins = q.bins;
    if (q.typical !== undefined) d.typical = q.typical;
    if (!disclosed && q.mechanism === PAIR && q.params && typeof q.params === "object") {
      const { mean_epsilon: mean, distribution_epsilon: distribution } = q.params;
      if (!isFloat(mean) || !isFloat(distribution)) throw new TypeError("a pair's ε shares are numbers");
      d.params = { ...q.params, mean_epsilon: new PyFloat(mean),
                   distribution_epsilon: new PyFloat(distribution) };
    }
    return d;
  }

  // --- the mechanism (mechanisms.js) ---

  values() { return null; }

  core(name, epsilon, q, notAsked = false) {
    if (name === "geometric") return geometricCore(epsilon, BigInt(q.min), BigInt(q.max));
    if (GRID_MECHANISMS.includes(name) && !notAsked) {
      const numberGrid = loaded("numberGrid");
      const grid = numberGrid.wholeGrid(q.min, q.max);
      const core = numberGrid.gridCore(name, epsilon, grid, q.params);
      cores.set(q, { core, grid });
      return core;
    }
    if (name === "asked_geometric") {
      return loaded("askedGeometric").askedGeometricCore(epsilon, BigInt(q.min), BigInt(q.max),
                                                         1 + extraValues(q, notAsked).length);
    }
    return super.core(name, epsilon, q, notAsked);
  }

  /** The offset from min (a BigInt); "not asked" and special values are k, k + 1, ... */
  encoder(q, labels, notAskedIndex = null, notAsked = notAskedIndex !== null) {
    const extra = notAskedIndex === null ? [] : extraValues(q, notAsked);
    return function encode(answer) {
      const at = extra.indexOf(answer);
      if (at >= 0) return notAskedIndex + BigInt(at);
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

  memoValue(q, answer) { return typeof answer === "string" ? answer : BigInt(answer); }

  disclosedReport(q, index) { return Number(BigInt(q.min) + index); }  // safe

  disclosedWords(q, value) { return t("mech.number", { n: value }); }

  // --- the form (form.js) ---

  get optionalKey() { return "form.optionalEmpty"; }

  inputs(q, name, describedBy) {
    const id = `${name}-input`;
    const box = el("input", { type: "text", id, name, inputmode: q.min >= 0 ? "numeric" : "text",
                              autocomplete: "off", "aria-describedby": describedBy,
                              class: "number" });
    return [
      el("label", { for: id, class: "inline" }, t("form.number", { min: q.min, max: q.max })),
      box, specialLabels(q).length ? loaded("special").numberRadios(q, name, box) : null,
    ];
  }

  read(form, q, name) {
    const chosen = form.elements[`${name}-special`]?.value ?? "";
    if (chosen && specialLabels(q).includes(chosen)) return { value: chosen };
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

  answerText(q, value) { return typeof value === "string" ? optionText(q, value) : String(value); }

  // --- the review and the receipt (review.js, skip_review.js) ---

  chances(q, mechanism, answer) {
    const d = mechanism.describe(answer);
    if (mechanism.name !== "geometric" || cores.has(q)) return d.text;
    return t("review.number", noiseParams(q, Number(answer), d.unchanged, d.stepFactor));
  }

  reportOutside(q, report) {
    const grid = cores.get(q);  // a grid mechanism's report is a cell: the number it stands for
    if (grid && q.disclosed !== true) return loaded("numberGrid").outside(grid.grid, grid.core, report);
    // a pair ("not asked") says it in its own words
    return !Array.isArray(report) && (report < q.min || report > q.max);
  }

  notAskedChances(q, mechanism, answer) {
    if (mechanism.name !== "asked_geometric") return undefined;
    const d = mechanism.describe();
    const chance = { p: P(d.truthful), q: P(d.other) };
    if (specialLabels(q).length) {
      return loaded("askedGeometric").statusChances(q, mechanism, answer, noiseParams);
    }
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
    if (specialLabels(q).length) return loaded("askedGeometric").statusWords(mechanism, report);
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
    // a Histogram over the values, then the special values and "not asked"
    if (notAsked || specialLabels(q).length) return super.encoding(q, notAsked);
    if (q.local_epsilon != null && q.mechanism === "geometric") {
      const [lo, hi] = clipBounds(q, mechanismFor(q));
      return { kind: "sum", length: 1, max: hi - lo, offset: lo };
    }
    return { kind: "sum", length: 1, max: q.max - q.min, offset: q.min };
  }

  index(q, value) { return Number(this.encoder(q)(value)); }  // the same checks and words

  twoServerRefusal(q) {  // shared/question_types/integer.py local_not_asked
    const why = "a two-server integer question with a local ε0 takes no special values: its report pair measures an asked bit and a number";  // not words: a TwoServerMismatch's detail (twoserver/verify.js)
    return specialLabels(q).length && q.local_epsilon != null ? why : null;
  }

  localMechanisms(q) {
    // a follow-up (skip logic) also takes asked_geometric (asked_pair.py)
    const base = super.localMechanisms(q);
    return q.relevant !== undefined ? [...base, "asked_geometric"] : base;
  }
}

export default new IntegerType({
  name: "integer",
  mechanisms: ["geometric", ...GRID_MECHANISMS],
  notAskedMechanisms: ["asked_geometric"],
  conditionKind: "int",
  conditionWords: "an integer question",  // not words: a condition error
});
