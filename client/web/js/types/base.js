// What the page asks of a question type (shared/question_types/base.py's twin): each type's
// unit extends QuestionType, whose defaults are a question picking one of its `options`.
// Disclosed and "not asked" (skip logic) are arguments every unit handles, not types.

import { choiceInputs, rawAnswer } from "../form.js";
import { quoted, t } from "../i18n.js";
import { isText } from "../manifest.js";
import { AnswerError, P, coreFor, optionWords } from "../mechanisms.js";
import { optionOf, optionText, specialLabels } from "../shown.js";

import { NOT_ASKED } from "../skip_logic.js";

const MAX_LABEL = 500;  // shared/question_types/fields.py: an option's label
/** What may run on the device before a two-server upload (shared/two_server/config.py). */
export const LOCAL_MECHANISMS = Object.freeze(["binary_rr", "grr", "ordinal_exp", "geometric"]);

export const extraValues = (q, notAsked = false) => [...specialLabels(q),
                                                      ...(notAsked ? [NOT_ASKED] : [])];

export class QuestionType {
  /** name: the survey's `type`; mechanisms: those that fit it; notAskedMechanisms: those
   * that carry its "not asked" value; conditionKind: what a condition reads of its answer
   * ("bool", "int", "text", "set"; null: nothing); ordered: its options are in order (a
   * condition orders its answers by option position); conditionWords: its name there;
   * filterReads: whether a later question's `filter` may follow its answer, takesFilter:
   * whether it takes one (option_filter.js, shared/option_filter.py). */
  constructor({ name, mechanisms, notAskedMechanisms = [], conditionKind = null, ordered = false,
                conditionWords, takesSpecial = true, filterReads = false, takesFilter = false }) {
    Object.assign(this, { name, takesSpecial, filterReads, takesFilter, ordered,
                          mechanisms: Object.freeze(mechanisms),
                          notAskedMechanisms: Object.freeze(notAskedMechanisms), conditionKind,
                          conditionWords });
  }

  // --- the signed definition (manifest.js, canonical.js, mechanisms.js) ---


  /** The refusal's catalogue key when the type's fields are malformed, or null. */
  shapeRefusal(q) {
    return !Array.isArray(q.options) || q.options.length < 2 ||
      !q.options.every((o) => isText(o, MAX_LABEL)) ? "refusal.noOptions" : null;
  }

  /** Throw `Mismatch` where the type's fields are not what shared/ allows. */
  check(q, where, Mismatch) {
    checkOptions(q, where, Mismatch);
  }

  /** The type's keys of the canonical dict Python signs (Question.to_dict). */
  canonical(q, disclosed) {
    return { options: q.options, groups: q.groups ?? {} };
  }

  // --- the mechanism (mechanisms.js) ---

  /** The answer values in order, without "not asked" (null: a number). */
  values(q) {
    return q.options;
  }

  /** The values a mechanism names, extraValues last. */
  labels(q, notAsked = false) {
    const values = this.values(q);
    const extra = extraValues(q, notAsked);
    return extra.length && values ? [...values, ...extra] : values;
  }

  /** The core of mechanism `name` at `epsilon` (mechanisms.js). */
  core(name, epsilon, q, notAsked = false) {
    return coreFor(name, epsilon, q, this.values(q).length + extraValues(q, notAsked).length);
  }

  /** encode(answer) -> its index; AnswerError otherwise, never clamped (Mechanism.encode).
   * `notAskedIndex`: the index of "not asked", or null. */
  encoder(q, labels, notAskedIndex = null) {
    return function encode(answer) {
      const index = labels.indexOf(answer);
      if (index < 0) throw new AnswerError(`${JSON.stringify(answer)} is not one of the possible answers to ${JSON.stringify(q.id)}`);
      return index;
    };
  }

  /** The answer as a series' HMAC message holds it. */
  memoValue(q, answer, encode, labels) {
    return answer;
  }

  /** The mechanism's words (for `answer` where the core has per-answer rows). */
  describe(core, labels, answer, encode) {
    return core.rows && answer !== undefined ? core.describe(labels, encode(answer))
      : core.describe(labels);
  }

  /** A disclosed question's report of the answer's index. */
  disclosedReport(q, index) {
    return index;
  }

  /** A disclosed report in plain words. */
  disclosedWords(q, value, labels) {
    return optionWords(optionText(q, labels[value]));
  }

  // --- the form (form.js) ---

  /** The hint of an optional question (how to skip it). */
  get optionalKey() { return "form.optionalChoose"; }

  /** The inputs of the question's fieldset. */
  inputs(q, name, describedBy) {
    return choiceInputs(q, name, describedBy, [...q.options, ...specialLabels(q)]
      .map((o) => [o, optionOf(q, o)]));
  }

  /** {value} (null: skipped) or {error} from the form. */
  read(form, q, name) {
    const { raw, ...done } = rawAnswer(form, q, name);
    if (raw === undefined) return done;
    return q.options.includes(raw) || specialLabels(q).includes(raw) ? { value: raw }
      : { error: t("form.choose") };
  }

  /** An answer as the respondent sees it. */
  answerText(q, value) {
    return optionText(q, value);
  }

  // --- the review and the receipt (review.js, skip_review.js) ---

  /** What the device will send for `answer`, with the exact chances. */
  chances(q, mechanism, answer) {
    const d = mechanism.describe(answer);
    if (mechanism.name === "grr") {
      return t("review.grr", { answer: quoted(optionText(q, answer)), p: P(d.truthful),
                               others: q.options.length - 1, q: P(d.other) });
    }
    return d.text;
  }

  /** Whether the noise took a report outside the answers' range. */
  reportOutside(q, report) {
    return false;
  }

  /** "Not asked" chances in the type's own words (undefined: skip_review.js's). */
  notAskedChances(q, mechanism, answer) {
    return undefined;
  }

  /** A "not asked" report in the type's own words (undefined: skip_review.js's). */
  notAskedReportWords(mechanism, report) {
    return undefined;
  }

  // --- the two-server measurement (twoserver/upload.js, verify.js) ---

  /** The values measured, without "not asked". */
  valueCount(q) {
    return this.values(q).length;
  }

  /** {kind, length, max, offset?}: how the answer is measured (encoding.question_encoding):
   * a Histogram over the values, then the special values and "not asked" (extraValues). */
  encoding(q, notAsked = false) {
    return { kind: "histogram", length: this.valueCount(q) + extraValues(q, notAsked).length,
             max: 1 };
  }

  /** The measured index of an answer; AnswerError if it does not fit. A special value or
   * "not asked" is its cell after the values' (QuestionType.two_server_extra_cell). */
  measuredIndex(q, value, notAsked = false) {
    const extra = typeof value === "string" ? extraValues(q, notAsked).indexOf(value) : -1;
    if (extra >= 0) return this.valueCount(q) + extra;
    return this.index(q, value);
  }

  /** Why a two-server survey refuses this question (null: it takes it), as shared/survey.py
   * refuses a unit's `two_server_refused_keys`. */
  twoServerRefusal(q) {
    return null;
  }

  /** The index of an answer (not "not asked"). */
  index(q, value) {
    const index = q.options.indexOf(value);
    if (index < 0) throw new AnswerError(`${JSON.stringify(value)} is not an option of ${JSON.stringify(q.id)}`);
    return index;
  }

  /** A local report's measurement under `encoding` (encoding.report_measurement). */
  reportMeasurement(q, report, notAsked, encoding) {
    if (typeof report === "boolean") return report ? 1 : 0;
    const clip = (y) => Math.min(Math.max(Number(y), encoding.offset), encoding.offset + encoding.max) -
      encoding.offset;
    if (encoding.kind === "asked_pair") return [Number(report[0]), clip(report[1])];
    if (encoding.kind !== "sum") return Number(report);
    return clip(report);
  }

  /** The mechanisms it may run before a two-server upload. */
  localMechanisms(q) {
    return LOCAL_MECHANISMS;
  }
}

/** Check a question's options and groups. */
export function checkOptions(q, where, Mismatch, max = 65536) {
  const options = q.options;
  if (!Array.isArray(options) || options.length < 2 || options.length > max
      || options.some((o) => typeof o !== "string" || !o.trim())
      || new Set(options).size !== options.length) {
    throw new Mismatch(`${where}: options must be 2 to ${max} distinct labels`);
  }
  const groups = q.groups ?? {};
  if (typeof groups !== "object" || Array.isArray(groups)) throw new Mismatch(`${where}: bad groups`);
  const known = new Set(options);
  for (const [name, members] of Object.entries(groups)) {
    if (!Array.isArray(members) || !members.length || new Set(members).size !== members.length
        || members.some((m) => !known.has(m))) {
      throw new Mismatch(`${where}: group ${JSON.stringify(name)} must list distinct options`);
    }
  }
}
