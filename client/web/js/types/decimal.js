// A decimal question (shared/question_types/decimal.py): a number in [min, max] kept on the
// device to the grid min + j·resolution (../decimal_number.js, exact), its grid index j
// randomized by a mean mechanism (../numeric_mechanisms.js: duchi, piecewise, hybrid, and
// one_bit_mean for a series; geometric,
// ../geometric.js), the square wave (../square_wave.js), or both at halves of ε
// (mean_and_distribution: the report is the pair); optional.js loads the modules of the
// mechanisms a survey names. docs/web.md, "Question types on the page".

import { PyFloat, isFloat, pyFloat } from "../canonical.js";
import { Grid, exactOf, readTyped } from "../decimal_number.js";
import { el } from "../dom.js";
import { rawAnswer } from "../form.js";
import { N, t, wordsLocale } from "../i18n.js";
import { AnswerError, JsonNumber, ManifestMismatch } from "../mechanisms.js";
import {
  GRID_MECHANISMS, PAIR, boundedMeanCore, ends, gridCore, outside, plain, stated,
} from "../number_grid.js";  // the grid's cores and words, shared with the integer unit
import { loaded } from "../optional.js";  // each mechanism's module, for a survey naming it
import { NOT_ASKED } from "../skip_logic.js";
import { QuestionType } from "./base.js";

const ASKED = "asked_grid";  // a follow-up on a randomized answer (../asked_grid.js)
const MAX_GRID = 65536n;  // shared/mechanisms/base.py MAX_OPTIONS

const grids = new WeakMap();
const cores = new WeakMap();  // each question's core, for its receipt's words

/** The question's grid (min, max and resolution read exactly), built once per question. */
export function gridOf(q) {
  let grid = grids.get(q);
  if (grid === undefined) {
    const [min, max, resolution] = [q.min, q.max, q.resolution].map(exactOf);
    if (!min || !max || !resolution) throw new RangeError("min, max and resolution must be exact decimals");
    grid = new Grid(min, max, resolution);
    grids.set(q, grid);
  }
  return grid;
}

/** The page's decimal mark ("," in Spanish and French), which a respondent may type too. */
function decimalMark() {
  const part = new Intl.NumberFormat(wordsLocale()).formatToParts(1.5)
    .find((p) => p.type === "decimal");
  return part ? part.value : ".";
}

/** asked_grid (../asked_grid.js, loaded for a survey naming it): [asked bit, the mean part's
 * report cell], the cell standing for a number on the grid's scale as the part's do. */
function askedCore(epsilon, grid, params) {
  const core = loaded("askedGrid").askedGridCore(epsilon, Number(grid.k), params);
  const part = boundedMeanCore(core.params.mean, core.params.mean_epsilon, grid);
  return {
    name: ASKED, k: core.k, params: core.params,
    perturbIndex: (index, source) => core.perturbIndex(index, source),
    reportValue: (report) => part.reportValue(report[1]),
    describe: () => ({ text: t("decimal.asked") }),
  };
}

class DecimalType extends QuestionType {
  // --- the signed definition (manifest.js, canonical.js, mechanisms.js) ---

  shapeRefusal(q) {
    try {
      gridOf(q);
      return null;
    } catch {
      return "refusal.noRange";
    }
  }

  check(q, where, Mismatch) {
    let grid;
    try {
      grid = gridOf(q);
    } catch {
      throw new Mismatch(`${where}: min, max and resolution must be exact numbers with (max - min) / resolution a whole number >= 1`);
    }
    if (grid.k > MAX_GRID) throw new Mismatch(`${where}: more than ${MAX_GRID} values from min to max`);
  }

  /** DecimalSpec.canonical: min, max, resolution (an int when whole, else a float), estimate,
   * bins (with the distribution), typical (the designer's range auto chose with, where given);
   * the pair's ε shares are floats in its params. */
  canonical(q, disclosed) {
    const number = (x) => (Number.isInteger(x) ? x : new PyFloat(x));
    const d = { min: number(q.min), max: number(q.max), resolution: number(q.resolution),
                estimate: q.estimate };
    if (q.bins != null) d.bins = Array.isArray(q.bins) ? q.bins.map(number) : q.bins;
    if (q.typical != null) d.typical = Array.isArray(q.typical) ? q.typical.map(number) : q.typical;
    if (!disclosed && q.mechanism === ASKED && q.params && typeof q.params === "object") {
      if (!isFloat(q.params.mean_epsilon)) throw new TypeError("asked_grid's ε share is a number");
      d.params = { ...q.params, mean_epsilon: new PyFloat(q.params.mean_epsilon) };
    }
    if (!disclosed && q.mechanism === PAIR && q.params && typeof q.params === "object") {
      const { mean_epsilon: mean, distribution_epsilon: distribution } = q.params;
      if (!isFloat(mean) || !isFloat(distribution)) throw new TypeError("a pair's ε shares are numbers");
      d.params = { ...q.params, mean_epsilon: new PyFloat(mean),  // floats, as Python writes them
                   distribution_epsilon: new PyFloat(distribution) };
    }
    return d;
  }

  // --- the mechanism (mechanisms.js) ---

  values() { return null; }

  core(name, epsilon, q) {
    const grid = gridOf(q);
    let core;
    if (name === ASKED) {
      core = askedCore(epsilon, grid, q.params);
      const n = (report) => stated(grid, core.reportValue(report));
      // DecimalType.report_words: the asked bit and the number
      core.explain = (report) => t(report[0] === 1 ? "decimal.askedNumber"
        : "decimal.notAskedNumber", { n: n(report) });
    } else {
      core = gridCore(name, epsilon, grid, q.params);
    }
    cores.set(q, core);
    return core;
  }

  /** The grid index (a BigInt) of a grid value (its decimal text or number); anything off the
   * grid or outside [min, max] is refused, not rounded or clamped (AnswerScale.index): the
   * form rounds to the resolution first (read). "Not asked" (a follow-up on a randomized
   * answer) is index k. */
  encoder(q, labels, notAskedIndex = null) {
    const grid = gridOf(q);
    return function encode(answer) {
      if (notAskedIndex !== null && answer === NOT_ASKED) return notAskedIndex;
      const x = typeof answer === "string" || typeof answer === "number" ? exactOf(answer) : null;
      const index = x === null ? null : grid.indexOf(x);
      if (index === null) {
        throw new AnswerError(`${JSON.stringify(answer)} is not one of ${JSON.stringify(q.id)}'s values ${plain(grid.min)}, ${plain(grid.value(1n))}, ... ${plain(grid.max)}`);
      }
      return index;
    };
  }

  /** The answer as the memo's message holds it (canonical_answer: the JSON number, an int when
   * whole, else the float Python writes by its repr: 0.1, 1e-05). */
  memoValue(q, answer) {
    const value = Number(plain(exactOf(answer)));
    return Number.isInteger(value) ? value : new JsonNumber(pyFloat(value));
  }

  describe(core) { return core.describe(); }

  /** A disclosed answer is sent as its grid index (on_scale(DisclosedInteger)). */
  disclosedReport(q, index) { return Number(index); }

  disclosedWords(q, value) {
    return t("mech.number", { n: N(plain(gridOf(q).value(BigInt(value)))) });
  }

  // --- the form (form.js) ---

  get optionalKey() { return "form.optionalEmpty"; }

  inputs(q, name, describedBy) {
    const grid = gridOf(q);
    const id = `${name}-input`;
    return [
      el("label", { for: id, class: "inline" },
         t("decimal.label", { min: N(plain(grid.min)), max: N(plain(grid.max)),
                              resolution: N(plain(grid.resolution)) })),
      el("input", { type: "text", id, name, inputmode: "decimal", autocomplete: "off",
                    "aria-describedby": describedBy, class: "number" }),
    ];
  }

  /** {value}: the grid value nearest what was typed, half up (its decimal text), or {error}. */
  read(form, q, name) {
    const { raw, ...done } = rawAnswer(form, q, name);
    if (raw === undefined) return done;
    return readAnswer(q, raw, decimalMark());
  }

  /** The grid value with the page's decimal mark (exact: no digit rounded again). */
  answerText(q, value) { return String(value).replace(".", decimalMark()); }

  // --- the review and the receipt (review.js, skip_review.js) ---

  /** The numbers the report can stand for, whatever the answer (the command line's words). */
  chances(q, mechanism) {
    return mechanism.describe().text;
  }

  /** Whether a report (a part of the pair) stands for a number outside [min, max]. */
  reportOutside(q, report) {
    const core = cores.get(q);
    if (!core || q.disclosed === true) return false;
    return outside(gridOf(q), core, report);
  }

  // --- the two-server measurement (twoserver/upload.js, verify.js) ---
  // The number on its grid (../twoserver/fixed_point.js, shared/two_server/fixed_point.py): the
  // mean as Prio3Sum of the grid index j, the distribution as Prio3Histogram of its bin, both
  // as the Histogram + SumVec pair, as `estimate` asks; no local mechanism runs first.

  /** {kind, length, max, offset, scale?} of the question's grid (fixed_point.grid_encoding). */
  encoding(q, notAsked = false) {
    return loaded("twoServerGrid").gridEncoding(measuredGrid(q, notAsked));
  }

  /** The answer's grid index, rounded half up as the form keeps it (DecimalSpec.round_index),
   * measured as `encoding` says; "not asked" the last cell. AnswerError for a non-number
   * or one outside [min, max]: refused, never clamped. */
  measuredIndex(q, value, notAsked = false) {
    const grid = measuredGrid(q, notAsked);
    if (notAsked && value === NOT_ASKED) return loaded("twoServerGrid").gridMeasurement(grid, null);
    const x = typeof value === "string" || typeof value === "number" ? exactOf(value) : null;
    if (x === null || !gridOf(q).holds(x)) {
      const { min, max } = gridOf(q);
      throw new AnswerError(`${JSON.stringify(value)} is not a number from ${plain(min)} to ${plain(max)} for ${JSON.stringify(q.id)}`);
    }
    return loaded("twoServerGrid").gridMeasurement(grid, Number(gridOf(q).nearest(x)));
  }

  /** None: a decimal's number is measured on its grid (DecimalType.two_server_local_mechanisms). */
  localMechanisms() { return []; }
}

/** What the servers measure of the question (fixed_point.Grid): its grid min + j·resolution,
 * the bins' edges when `estimate` asks for the distribution (`bins` equal widths, or the edges
 * given: DecimalSpec.bin_edges), whether the mean, and "not asked" for a hidden follow-up. */
function measuredGrid(q, notAsked) {
  const grid = gridOf(q);
  const [min, max] = ends(grid);
  const asked = (name) => Array.isArray(q.estimate) && q.estimate.includes(name);
  let edges = [];
  if (asked("distribution") && Number.isInteger(q.bins)) {
    const width = max.sub(min).div(q.bins);
    edges = Array.from({ length: q.bins + 1 }, (_, i) => min.add(width.mul(i)));
  } else if (asked("distribution") && Array.isArray(q.bins)) {
    edges = q.bins.map((edge) => {
      const exact = exactOf(edge);
      if (!exact) throw new ManifestMismatch(`${JSON.stringify(q.id)}: a bin edge must be an exact decimal`);
      return exact.toRational();
    });
  }
  return { origin: min, step: grid.resolution.toRational(), points: Number(grid.k), edges,
           mean: asked("mean"), notAsked };
}

/** What a respondent typed (`text`, the page's decimal mark `mark`), as the form reads it:
 * {value: the nearest grid value's decimal text} or {error: the words}. */
export function readAnswer(q, text, mark = ".") {
  const typed = readTyped(text, mark);
  const grid = gridOf(q);
  if (typed.error) {
    const example = N(plain(grid.value(grid.k / 2n)));
    return { error: t(typed.error === "separators" ? "decimal.separators" : "decimal.notNumber",
                      { example }) };
  }
  if (!grid.holds(typed.value)) {
    return { error: t("decimal.range", { min: N(plain(grid.min)), max: N(plain(grid.max)) }) };
  }
  return { value: plain(grid.value(grid.nearest(typed.value))) };
}

export default new DecimalType({
  name: "decimal",
  takesSpecial: false,
  mechanisms: GRID_MECHANISMS,
  // A follow-up on a randomized answer carries "not asked" by asked_grid (shared/mechanisms/
  // asked_grid.py; ../asked_grid.js, loaded for a survey naming it).
  notAskedMechanisms: [ASKED],
  conditionWords: "a decimal question",  // not words: a condition error
});
