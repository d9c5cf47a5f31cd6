// The exact randomizers of shared/mechanisms/, ported draw for draw: mechanismFor(question)
// re-derives every parameter and re-checks ε (ManifestMismatch, UnsupportedMechanism),
// perturb(answer, source, memo) draws a report. docs/browser-randomizers.md.

import { expLower, Rational, rationalExpFloor } from "./rational.js";
import { bernoulli, choiceExcept, secureSource } from "./randomness.js";
import { loaded } from "./optional.js";  // the cores and modules only some surveys need
import { N, Worded, quoted, t } from "./i18n.js";
import { epsilonText } from "./odds.js";
import { optionText, specialLabels } from "./shown.js";
import { MAX_NOT_ASKED_OPTIONS, NOT_ASKED } from "./skip_logic.js";
import { isTypeName, unitOf } from "./types/index.js";  // each question type's unit

export class UnsupportedMechanism extends Error {
  constructor(message) { super(message); this.name = "UnsupportedMechanism"; }
}
export class ManifestMismatch extends Error {
  constructor(message) { super(message); this.name = "ManifestMismatch"; }
}
export class AnswerError extends Error {
  constructor(message) { super(message); this.name = "AnswerError"; }
}
/** The drawn report lies outside what the server accepts (the Python client refuses too). */
export class ReportError extends Error {
  constructor(message) { super(message); this.name = "ReportError"; }
}

// shared/survey.py and the limits mechanisms declare (Mechanism.misfit): below MIN_EPSILON
// nothing is measurable, beyond MAX_EPSILON a report is the answer in all but name.
const MIN_EPSILON = 1e-6;
const MAX_EPSILON = 50;
const INSTANTANEOUS_MECHANISMS = ["grr", "binary_rr"];
export const BITMAP_ENCODING = "bitmap-u32-le";

export const ONE = new Rational(1n);

/** The named randomized-response designs (designs.js, loaded for a survey that names one);
 * the question types each fits are in the types' units (js/types/). */
const DESIGNS = Object.freeze(["warner", "crosswise", "forced_response", "unrelated_question",
  "matrix"]);


/** The mechanism names this port implements (every one the server accepts). */
export const MECHANISMS = Object.freeze(["binary_rr", "grr", "geometric", "oue", "sue", "olh",
  "hr", "ss", "ordinal_exp", "geo_exp", "asked_geometric", "option_rr", "set_ue", "psfo_grr",
  "psfo_olh", "duchi", "piecewise", "hybrid", "square_wave", "mean_and_distribution",
  "asked_grid", "one_bit_mean"]);

// --- helpers --------------------------------------------------------------------------------

/** A number as Python's json writes it, its text given (a float: its repr, canonical.js
 * pyFloat), for canonicalJson: a decimal answer in a series memo's message. */
export class JsonNumber {
  constructor(text) {
    if (typeof text !== "string" || !/^-?\d+(\.\d+)?(e[+-]\d+)?$/.test(text)) {
      throw new TypeError(`not a JSON number: ${text}`);
    }
    this.text = text;
  }
}

/** Canonical JSON as shared/survey.py canonical_json writes it (sorted keys, no spaces);
 * integers only unless `floats` (then a number is JS's shortest digits: for comparing parsed
 * values, such as a pair mechanism's ε shares, not for bytes Python signs). */
export function canonicalJson(value, floats = false) {
  if (value === null || typeof value === "boolean" || typeof value === "string") {
    return JSON.stringify(value);
  }
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("no NaN or infinity in canonical JSON");
    if (!floats && !Number.isInteger(value)) throw new TypeError("canonicalJson writes integers only");
    return String(value);
  }
  if (value instanceof JsonNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, floats)).join(",")}]`;
  if (typeof value === "object") {
    const keys = Object.keys(value).sort(codePointOrder);
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k], floats)}`).join(",")}}`;
  }
  throw new TypeError(`not JSON: ${typeof value}`);
}

function codePointOrder(a, b) {
  const x = Array.from(a, (c) => c.codePointAt(0));
  const y = Array.from(b, (c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** Whether two parsed JSON values are equal (any value: a malformed one is simply unequal). */
function sameJson(given, expected) {
  try {
    return canonicalJson(given, true) === canonicalJson(expected, true);
  } catch {
    return false;
  }
}

const expLowerCache = new Map();
function certifiedExp(epsilon) {
  let bound = expLowerCache.get(epsilon);
  if (bound === undefined) {
    bound = expLower(Rational.fromNumber(epsilon));
    expLowerCache.set(epsilon, bound);
  }
  return bound;
}

/** PrivacyLoss.within for a worst ratio: refuse anything the exact check refutes. */
export function certifyRatio(name, ratio, epsilon) {
  if (ratio === null) throw new ManifestMismatch(`${name}: some report is impossible under one answer and possible under another`);
  if (ratio.le(ONE)) return;
  if (ratio.gt(certifiedExp(epsilon))) {
    throw new ManifestMismatch(`${name}: the channel's exact privacy loss exceeds ε = ${epsilon}`);
  }
}

export function maxRatio(a, b) { return a.ge(b) ? a : b; }

/** A probability as a percentage with one decimal (more for the very small or large): every
 * percentage the page shows a respondent (client/review.py pct, the same strings). */
export function pct(x) {
  const v = 100 * x;
  if (v === 0 || v === 100) return `${v}%`;
  if (v < 0.05) return `${v.toPrecision(2)}%`;
  if (v > 99.95) return `${v.toFixed(4).replace(/0+$/, "")}%`;
  return `${v.toFixed(1)}%`;
}

export function wordsFromBits(bits, k) {
  const words = new Array(Math.ceil(k / 32)).fill(0);
  for (let v = 0; v < k; v++) if (bits[v]) words[v >> 5] |= 1 << (v & 31);
  return words.map((w) => w >>> 0);
}

export function bitsFromWords(words, k) {
  const out = [];
  for (let v = 0; v < k; v++) if ((words[v >> 5] >>> (v & 31)) & 1) out.push(v);
  return out;
}

/** A percentage for the sentences (i18n.js N: per locale, the same digits). */
export const P = (x) => N(pct(x));

/** "2.72 times" (less likely), or "very slightly" for a factor within 1.0001 of 1. */
export function stepWords(factor) {
  return factor < 1.0001 ? t("review.stepSlightly")
    : t("review.stepTimes", { factor: N(factor.toPrecision(3)) });
}

/** A report naming an option ("the option “weekly”"). */
export const optionWords = (label) => t("mech.option", { option: quoted(label) });
/** A yes/no report ("yes", "no"). */
export const yesNoWords = (value) => t(value ? "word.yesReport" : "word.noReport");

// --- the mechanisms' cores: parameters, certification, perturb_index -------------------------
// Each core: {name, k, p, q, params, perturbIndex(index, source), describe(labels),
// explain(report, labels)}. Indices are Numbers (BigInt for integer questions).

function grrCore(epsilon, k, binary = false) {
  const e = rationalExpFloor(epsilon);
  const p = e.div(e.add(k - 1));
  const q = ONE.div(e.add(k - 1));
  const name = binary ? "binary_rr" : "grr";
  if (!p.add(q.mul(k - 1)).eq(ONE) || q.num === 0n) certifyRatio(name, null, epsilon);
  certifyRatio(name, maxRatio(p.div(q), q.div(p)), epsilon);
  const K = BigInt(k);
  return {
    name, k, p, q,
    params: { p: p.toString(), q: q.toString() },
    perturbIndex(index, source) {
      const out = bernoulli(p, source) ? index : Number(choiceExcept(K, BigInt(index), source));
      return binary ? out === 1 : out;
    },
    indexOf(report) { return binary ? (report ? 1 : 0) : report; },
    describe(labels) {
      const truthful = p.toNumber();
      const other = q.toNumber();
      const params = { binary: binary || (typeof labels[0] === "boolean" && k === 2) ? "yes" : "no",
                       k, others: k - 1, p: P(truthful), q: P(other) };
      return { text: t("mech.grr", params), truthful, other, params };
    },
    explain(report, labels) {
      const label = binary ? report : labels[report];
      if (typeof label === "boolean") return yesNoWords(label);  // binary_rr, or grr on yes/no
      return optionWords(label);
    },
  };
}

export function markedOptions(indices, labels) {
  if (!indices.length) return t("mech.noneMarked");
  return t("mech.marked", { options: indices.map((i) => quoted(labels[i])).join(", ") });
}

function gcdBig(a, b) { while (b) [a, b] = [b, a % b]; return a; }

/** One denominator D for independent bits (unary.py's _bit_thresholds): a bit is
 * [draw < pT] when set and [draw < qT] when not, draw uniform in [0, D). */
export function bitThresholds(p, q) {
  const D = (p.den / gcdBig(p.den, q.den)) * q.den;
  return { D, pT: p.num * (D / p.den), qT: q.num * (D / q.den) };
}

export const MAX_ABS_REPORT = 2n ** 53n - 1n;
export const REPORT_TAIL_BITS = 64;

// --- checking the question --------------------------------------------------------------------

export function checkEpsilon(value, where) {
  if (typeof value !== "number" || !Number.isFinite(value) || value < MIN_EPSILON
      || value > MAX_EPSILON) {
    throw new ManifestMismatch(`${where} must be a number between ${MIN_EPSILON} and ${MAX_EPSILON}`);
  }
  return value;
}

function checkQuestion(question) {
  if (question === null || typeof question !== "object" || Array.isArray(question)) {
    throw new ManifestMismatch("a question must be an object");
  }
  const where = `question ${JSON.stringify(question.id)}`;
  if (typeof question.id !== "string" || !question.id) throw new ManifestMismatch("a question needs an id");
  if (!isTypeName(question.type)) {
    throw new ManifestMismatch(`${where}: unknown type ${JSON.stringify(question.type)}`);
  }
  if (question.disclosed !== true) checkEpsilon(question.epsilon, `${where}: epsilon`);
  if (question.instantaneous_epsilon != null) {
    checkEpsilon(question.instantaneous_epsilon, `${where}: instantaneous_epsilon`);
  }
  unitOf(question).check(question, where, ManifestMismatch);
  return where;
}

/** The core of mechanism `name` at `epsilon` over `k` values of `question` (the types' units
 * build their own: geometric, geo_exp, the set mechanisms; js/types/). */
export function coreFor(name, epsilon, question, k) {
  switch (name) {
    case "binary_rr": return grrCore(epsilon, 2, true);
    case "grr": return grrCore(epsilon, k);
    case "oue": case "sue": return loaded("bitmaps").unaryCore(name, epsilon, k);
    case "ss": return loaded("bitmaps").ssCore(epsilon, k);
    case "olh": return loaded("hashing").olhCore(epsilon, k);
    case "hr": return loaded("hashing").hrCore(epsilon, k);
    case "ordinal_exp": return loaded("ordinal").ordinalCore(epsilon, k);
    case "warner": case "crosswise": case "forced_response": case "unrelated_question":
    case "matrix": return loaded("designs").designCore(question, ManifestMismatch, unitOf(question));
    default: throw new UnsupportedMechanism(`mechanism ${JSON.stringify(name)} is not supported in the browser`);
  }
}

// --- the public object -------------------------------------------------------------------------

/**
 * The randomizer for one question of a verified survey. Throws ManifestMismatch when the
 * question, its mechanism or its parameters are not what shared/ derives, UnsupportedMechanism
 * for an unknown mechanism. `notAsked`: the question depends on randomized answers (skip
 * logic, skip_logic.js skipPlan), so its domain ends with NOT_ASKED. What depends on the
 * question's type (its labels, its core, its encoding) its unit says (js/types/).
 */
export function mechanismFor(question, { notAsked = false } = {}) {
  const where = checkQuestion(question);
  const unit = unitOf(question);
  if (question.disclosed === true) return disclosedFor(question, unit);
  const name = question.mechanism;
  if (typeof name !== "string") throw new ManifestMismatch(`${where}: no mechanism named`);
  if (name === "auto") throw new ManifestMismatch(`${where}: the mechanism was not resolved (auto)`);
  if (!MECHANISMS.includes(name) && !DESIGNS.includes(name)) {
    throw new UnsupportedMechanism(`${where}: mechanism ${JSON.stringify(name)} is not supported in the browser`);
  }
  const special = specialLabels(question);
  const extended = notAsked || special.length > 0;
  if (extended) {
    if (!unit.notAskedMechanisms.includes(name)) {
      throw new ManifestMismatch(`${where}: ${name} cannot carry the ‘not asked’ value this question has`);
    }
    if (Array.isArray(question.options) && (question.options.includes(NOT_ASKED) ||
        question.options.length + special.length + 1 > MAX_NOT_ASKED_OPTIONS)) {
      throw new ManifestMismatch(`${where}: its options cannot take a ‘not asked’ value`);
    }
  } else if (!unit.mechanisms.includes(name)) {
    throw new ManifestMismatch(`${where}: ${name} does not fit a ${question.type} question`);
  }
  const instantaneousEpsilon = question.instantaneous_epsilon ?? null;
  if (instantaneousEpsilon !== null && !INSTANTANEOUS_MECHANISMS.includes(name)) {
    throw new ManifestMismatch(`${where}: an instantaneous layer needs grr or binary_rr, not ${name}`);
  }
  const epsilon = question.epsilon;
  let core = unit.core(name, epsilon, question, notAsked);
  const permanent = core;
  if (instantaneousEpsilon !== null) {
    core = loaded("twoLayer").twoLayerCore(
      permanent, unit.core(name, instantaneousEpsilon, question, notAsked), epsilon);
  }
  if (!sameJson(question.params, core.params)) {
    throw new ManifestMismatch(`${where}: the parameters do not match mechanism ${name} at ε = ${epsilon} for this question (expected ${canonicalJson(core.params, true)})`);
  }
  const labels = unit.labels(question, notAsked);
  /** The labels as the respondent sees them now (an option's text in the page's language). */
  const shownLabels = () => labels && labels.map((l) => optionText(question, l));
  const encode = unit.encoder(question, labels, extended ? core.k : null, notAsked);

  /** What a series' memo reads of this question (memo.js, loaded for a survey with one). */
  const memoed = () => ({ question, unit, encode, labels, permanent });

  return Object.freeze({
    question,
    name: core.name,
    notAsked,
    extended,
    labels,
    epsilon,
    instantaneousEpsilon,
    params: core.params,
    k: core.k,
    /** geometric: the [low, high] report range the server accepts (BigInts); else undefined. */
    reportBounds: core.reportBounds,
    /** geometric: the noise rate λ (a Rational, P[Z = z] ∝ e^(-λ|z|)); else undefined. */
    rate: core.rate,
    encode,
    /** One report for a true answer: the JSON value the Python client sends. */
    perturb(answer, source = secureSource, memo = undefined) {
      const index = encode(answer);
      if (memo === undefined || memo === null) return core.perturbIndex(index, source);
      const permanentValue = loaded("memo").permanentValue(memoed(), index, answer, memo);
      if (core === permanent) return permanentValue;
      return core.instantaneous.perturbIndex(permanent.indexOf(permanentValue), source);
    },
    /** The ledger's keyed tag of a distinct answer in a series (hazmat_memo.answer_tag). */
    answerTag(answer, memo) {
      encode(answer);
      return loaded("memo").answerTag(memoed(), answer, memo);  // a survey with a series
    },
    /** What the device does to an answer, in plain words, with the probabilities as Numbers
     * (location questions: for the given answer's cell, else a corner's; named designs: the
     * given answer's chances, else every answer's). */
    describe(answer = undefined) {
      return unit.describe(core, shownLabels(), answer, encode);
    },
    /** A report in plain words ("yes", the option “weekly”, the number 7, ...). */
    explainReport(report) {
      const said = extended ? loaded("skipReview").notAskedReportWords(
        { name: core.name, labels, question, notAsked }, report) : null;
      return said ?? core.explain(report, shownLabels());
    },
  });
}

/**
 * A disclosed question (shared/mechanisms/disclosed.py): no mechanism, no ε; the report is the
 * answer as given (true/false, the option index, the integer).
 */
function disclosedFor(question, unit) {
  const labels = unit.labels(question);
  const encode = unit.encoder(question, labels);
  return Object.freeze({
    question, name: "disclosed", epsilon: 0, instantaneousEpsilon: null, params: {},
    k: labels ? labels.length : null, disclosed: true, encode,
    perturb(answer) { return unit.disclosedReport(question, encode(answer)); },
    answerTag() { return null; },
    describe() {
      return { text: t("mech.disclosed"), truthful: 1, other: 0 };
    },
    explainReport(value) { return unit.disclosedWords(question, value, labels); },
  });
}

// --- the respondent's ε ceiling (client/trust.py check_policy) ---------------------------------

export class PolicyError extends Worded {
  constructor(key, params) { super(key, params); this.name = "PolicyError"; }
}

/** Σ ε over the questions, correctly rounded like math.fsum. */
export function totalEpsilon(survey) {
  let sum = new Rational(0n);
  for (const q of survey.questions) {
    if (q.disclosed !== true) sum = sum.add(Rational.fromNumber(q.epsilon));
  }
  return sum.toNumber();
}

/** Refuse a survey whose questions or total ε exceed the respondent's limit. */
export function checkPolicy(survey, maxEpsilon) {
  for (const q of survey.questions) {
    if (q.disclosed !== true && q.epsilon > maxEpsilon) {
      throw new PolicyError("policy.question", { id: JSON.stringify(q.id), epsilon: N(epsilonText(q.epsilon)), limit: N(epsilonText(maxEpsilon)) });
    }
  }
  const total = totalEpsilon(survey);
  if (total > maxEpsilon) {
    throw new PolicyError("policy.total", { epsilon: N(epsilonText(total)), limit: N(epsilonText(maxEpsilon)) });
  }
}
