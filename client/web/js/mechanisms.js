// The exact randomizers of shared/mechanisms/, ported draw for draw: mechanismFor(question)
// re-derives every parameter and re-checks ε (ManifestMismatch, UnsupportedMechanism),
// perturb(answer, source, memo) draws a report. docs/browser-randomizers.md.

import { expLower, Rational, rationalExpFloor, rationalFloor } from "./rational.js";
import { bernoulli, choiceExcept, discreteLaplace, hmacSource, secureSource } from "./randomness.js";
import { loaded } from "./optional.js";  // the cores and modules only some surveys need
import { N, Worded, quoted, t } from "./i18n.js";
import { epsilonText } from "./odds.js";
import { optionText } from "./shown.js";
import { MAX_NOT_ASKED_OPTIONS, NAMED_NOT_ASKED, NOT_ASKED } from "./skip_logic.js";

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
const QUESTION_TYPES = ["binary", "categorical", "integer", "ordinal", "location",
  "multiselect"];
const MIN_EPSILON = 1e-6;
const MAX_EPSILON = 50;
const MAX_OPTIONS = 65536;
const INSTANTANEOUS_MECHANISMS = ["grr", "binary_rr"];
export const BITMAP_ENCODING = "bitmap-u32-le";
const PERMANENT_DOMAIN = "ldpsurvey/permanent-value/v1\0";
const TAG_DOMAIN = "ldpsurvey/ledger-tag/v1\0";

export const ONE = new Rational(1n);

/** The named randomized-response designs (designs.js, loaded for a survey that names one) and
 * the question types each fits. */
const DESIGN_FITS = Object.freeze({
  warner: ["binary"],
  crosswise: ["binary"],
  forced_response: ["binary", "categorical"],
  unrelated_question: ["binary", "categorical"],
  matrix: ["binary", "categorical"],
});


/** The mechanism names this port implements (every one the server accepts). */
export const MECHANISMS = Object.freeze(["binary_rr", "grr", "geometric", "oue", "sue", "olh",
  "hr", "ss", "ordinal_exp", "geo_exp", "asked_geometric", "option_rr", "set_ue", "psfo_grr",
  "psfo_olh"]);

const FITS = {
  binary_rr: ["binary"],
  grr: ["binary", "categorical", "ordinal"],
  geometric: ["integer"],
  oue: ["categorical", "ordinal"],
  sue: ["categorical", "ordinal"],
  olh: ["categorical", "ordinal"],
  hr: ["categorical", "ordinal"],
  ss: ["categorical", "ordinal"],
  ordinal_exp: ["ordinal"],
  geo_exp: ["location"],
  asked_geometric: [],  // only for a question with a "not asked" value (NAMED_NOT_ASKED)
  option_rr: ["multiselect"], set_ue: ["multiselect"], psfo_grr: ["multiselect"],
  psfo_olh: ["multiselect"],
};

// --- helpers --------------------------------------------------------------------------------

/** Canonical JSON as shared/survey.py canonical_json writes it (sorted keys, no spaces). */
export function canonicalJson(value) {
  if (value === null || typeof value === "boolean" || typeof value === "string") {
    return JSON.stringify(value);
  }
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("no NaN or infinity in canonical JSON");
    if (!Number.isInteger(value)) throw new TypeError("canonicalJson writes integers only");
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") {
    const keys = Object.keys(value).sort(codePointOrder);
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
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
    return canonicalJson(given) === canonicalJson(expected);
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

const DISTRIBUTION_MAX_VALUES = 256n;
const TAIL_MASS = 1e-4;
const MAX_TAIL = 4096;
export const MAX_ABS_REPORT = 2n ** 53n - 1n;
export const REPORT_TAIL_BITS = 64;

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
  if (!QUESTION_TYPES.includes(question.type)) {
    throw new ManifestMismatch(`${where}: unknown type ${JSON.stringify(question.type)}`);
  }
  if (question.disclosed !== true) checkEpsilon(question.epsilon, `${where}: epsilon`);
  if (question.instantaneous_epsilon != null) {
    checkEpsilon(question.instantaneous_epsilon, `${where}: instantaneous_epsilon`);
  }
  if (question.type === "categorical" || question.type === "ordinal") {
    const options = question.options;
    if (!Array.isArray(options) || options.length < 2 || options.length > MAX_OPTIONS
        || options.some((o) => typeof o !== "string" || !o.trim())
        || new Set(options).size !== options.length) {
      throw new ManifestMismatch(`${where}: options must be 2 to ${MAX_OPTIONS} distinct labels`);
    }
    const groups = question.groups ?? {};
    if (typeof groups !== "object" || Array.isArray(groups)) throw new ManifestMismatch(`${where}: bad groups`);
    const known = new Set(options);
    for (const [name, members] of Object.entries(groups)) {
      if (!Array.isArray(members) || !members.length || new Set(members).size !== members.length
          || members.some((m) => !known.has(m))) {
        throw new ManifestMismatch(`${where}: group ${JSON.stringify(name)} must list distinct options`);
      }
    }
  }
  if (question.type === "location") loaded("geoExp").checkLocation(question, where);
  if (question.type === "multiselect") loaded("multiselect").shapeOf(question, where);
  if (question.type === "integer") {
    const { min, max } = question;
    // The range's own bound is the geometric mechanism's (noise within JSON's exact integers,
    // checked when it is built), as in Python: here only exact integers with min < max.
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min >= max) {
      throw new ManifestMismatch(`${where}: min and max must be exact integers with min < max`);
    }
  }
  return where;
}

/** The index of a true answer among a question's labels (an integer: its offset from min);
 *  AnswerError for anything else, never clamped (Python: Mechanism.encode). */
function answerEncoder(question, labels, notAskedIndex = null) {
  if (question.type === "multiselect") return loaded("multiselect").setEncoder(question);
  return function encode(answer) {
    if (question.type === "integer" && notAskedIndex !== null && answer === NOT_ASKED) {
      return notAskedIndex;  // asked_geometric: index k is "not asked"
    }
    if (question.type === "integer") {
      if (typeof answer !== "bigint" && !Number.isSafeInteger(answer)) {
        throw new AnswerError(`the answer to ${JSON.stringify(question.id)} must be an integer`);
      }
      const value = BigInt(answer);
      if (value < BigInt(question.min) || value > BigInt(question.max)) {
        throw new AnswerError(`${value} is outside [${question.min}, ${question.max}] for ${JSON.stringify(question.id)}; it is refused, not clamped`);
      }
      return value - BigInt(question.min);
    }
    const index = labels.indexOf(answer);
    if (index < 0) throw new AnswerError(`${JSON.stringify(answer)} is not one of the possible answers to ${JSON.stringify(question.id)}`);
    return index;
  };
}

/** A multiselect question's encoder with "not asked": the pseudo-option's index k. */
function setNotAskedEncoder(question) {
  const base = loaded("multiselect").setEncoder(question);
  const k = question.options.length;
  return function encode(answer) {
    if (answer === NOT_ASKED) return [k];
    if (Array.isArray(answer) && answer.includes(NOT_ASKED)) {
      throw new AnswerError(`${JSON.stringify(NOT_ASKED)} is not an option: it is what a device sends for a question that does not apply`);
    }
    return base(answer);
  };
}

function labelsOf(question, notAsked = false) {
  if (question.type === "location") return loaded("geoExp").cellLabels(question.grid);
  if (question.type === "integer") return null;
  const values = question.type === "binary" ? [false, true] : question.options;
  return notAsked ? [...values, NOT_ASKED] : values;
}

function coreFor(name, epsilon, question, notAsked = false) {
  const k = question.type === "binary" ? 2 + (notAsked ? 1 : 0)
    : question.type === "integer" || question.type === "location" ? null
      : question.options.length + (notAsked ? 1 : 0);
  switch (name) {
    case "binary_rr": return grrCore(epsilon, 2, true);
    case "grr": return grrCore(epsilon, k);
    case "oue": case "sue": return loaded("bitmaps").unaryCore(name, epsilon, k);
    case "ss": return loaded("bitmaps").ssCore(epsilon, k);
    case "olh": return loaded("hashing").olhCore(epsilon, k);
    case "hr": return loaded("hashing").hrCore(epsilon, k);
    case "ordinal_exp": return loaded("ordinal").ordinalCore(epsilon, k);
    case "geo_exp": return loaded("geoExp").geoCore(epsilon, question);
    case "option_rr": case "set_ue": case "psfo_grr": case "psfo_olh":
      return loaded("multiselect").setCore(name, epsilon, question);
    case "geometric": return geometricCore(epsilon, BigInt(question.min), BigInt(question.max));
    case "asked_geometric":
      return loaded("askedGeometric").askedGeometricCore(epsilon, BigInt(question.min), BigInt(question.max));
    case "warner": case "crosswise": case "forced_response": case "unrelated_question":
    case "matrix": return loaded("designs").designCore(question, ManifestMismatch);
    default: throw new UnsupportedMechanism(`mechanism ${JSON.stringify(name)} is not supported in the browser`);
  }
}

// --- the public object -------------------------------------------------------------------------

/**
 * The randomizer for one question of a verified survey. Throws ManifestMismatch when the
 * question, its mechanism or its parameters are not what shared/ derives, UnsupportedMechanism
 * for an unknown mechanism. `notAsked`: the question depends on randomized answers (skip
 * logic, skip_logic.js skipPlan), so its domain ends with NOT_ASKED.
 */
export function mechanismFor(question, { notAsked = false } = {}) {
  const where = checkQuestion(question);
  if (question.disclosed === true) return disclosedFor(question);
  const name = question.mechanism;
  if (typeof name !== "string") throw new ManifestMismatch(`${where}: no mechanism named`);
  if (name === "auto") throw new ManifestMismatch(`${where}: the mechanism was not resolved (auto)`);
  if (!MECHANISMS.includes(name) && !Object.hasOwn(DESIGN_FITS, name)) {
    throw new UnsupportedMechanism(`${where}: mechanism ${JSON.stringify(name)} is not supported in the browser`);
  }
  if (notAsked) {
    if (!(NAMED_NOT_ASKED[question.type] ?? []).includes(name)) {
      throw new ManifestMismatch(`${where}: ${name} cannot carry the ‘not asked’ value this question has`);
    }
    if (Array.isArray(question.options) && (question.options.includes(NOT_ASKED) ||
                                            question.options.length + 1 > MAX_NOT_ASKED_OPTIONS)) {
      throw new ManifestMismatch(`${where}: its options cannot take a ‘not asked’ value`);
    }
  } else if (!(FITS[name] ?? DESIGN_FITS[name]).includes(question.type)) {
    throw new ManifestMismatch(`${where}: ${name} does not fit a ${question.type} question`);
  }
  const instantaneousEpsilon = question.instantaneous_epsilon ?? null;
  if (instantaneousEpsilon !== null && !INSTANTANEOUS_MECHANISMS.includes(name)) {
    throw new ManifestMismatch(`${where}: an instantaneous layer needs grr or binary_rr, not ${name}`);
  }
  const epsilon = question.epsilon;
  // A multiselect question with "not asked": its set mechanism over the options and a "not
  // asked" pseudo-option (shared/multiselect_not_asked.py), one more exclusive option when the
  // question has them (set_base.py SetShape.with_not_asked).
  const alone = question.exclusive ? { exclusive: [...question.exclusive, NOT_ASKED] } : {};
  const subject = notAsked && question.type === "multiselect"
    ? { ...question, options: [...question.options, NOT_ASKED], ...alone } : question;
  let core = coreFor(name, epsilon, subject, notAsked && question.type !== "multiselect");
  const permanent = core;
  if (instantaneousEpsilon !== null) {
    core = loaded("twoLayer").twoLayerCore(permanent, coreFor(name, instantaneousEpsilon, question, notAsked),
                        epsilon);
  }
  if (!sameJson(question.params, core.params)) {
    throw new ManifestMismatch(`${where}: the parameters do not match mechanism ${name} at ε = ${epsilon} for this question (expected ${canonicalJson(core.params)})`);
  }
  const labels = labelsOf(question, notAsked);
  /** The labels as the respondent sees them now (an option's text in the page's language). */
  const shownLabels = () => labels && labels.map((l) => optionText(question, l));

  const encode = notAsked && question.type === "multiselect" ? setNotAskedEncoder(question)
    : answerEncoder(question, labels, notAsked ? core.k : null);

  /** The canonical answer as it enters the HMAC message (Python's JSON of the answer). */
  function memoMessage(domain, answer, memo) {
    if (!memo || !(memo.secret instanceof Uint8Array) || memo.secret.length !== 32
        || typeof memo.series !== "string") {
      throw new TypeError("memo must be {secret: Uint8Array(32), series: string}");
    }
    const value = question.type === "integer" && answer !== NOT_ASKED ? BigInt(answer)
      : question.type === "multiselect" ? encode(answer).map((i) => labels[i])
        : answer;
    const json = canonicalJson([memo.series, question.id, value, permanent.name, permanent.params]);
    return new TextEncoder().encode(domain + json);
  }

  return Object.freeze({
    question,
    name: core.name,
    notAsked,
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
      const permanentValue = permanent.perturbIndex(
        index, hmacSource(memo.secret, memoMessage(PERMANENT_DOMAIN, answer, memo),
                          loaded("sha256").hmacSha256));
      if (core === permanent) return permanentValue;
      return core.instantaneous.perturbIndex(permanent.indexOf(permanentValue), source);
    },
    /** The ledger's keyed tag of a distinct answer in a series (hazmat_memo.answer_tag). */
    answerTag(answer, memo) {
      encode(answer);
      const { hmacSha256, toHex } = loaded("sha256");  // a survey with a series (optional.js)
      return toHex(hmacSha256(memo.secret, memoMessage(TAG_DOMAIN, answer, memo))).slice(0, 32);
    },
    /** What the device does to an answer, in plain words, with the probabilities as Numbers
     * (location questions: for the given answer's cell, else a corner's; named designs: the
     * given answer's chances, else every answer's). */
    describe(answer = undefined) {
      if ((question.type === "location" || question.type === "multiselect" || core.rows)
          && answer !== undefined) {
        return core.describe(shownLabels(), encode(answer));
      }
      return core.describe(shownLabels());
    },
    /** A report in plain words ("yes", the option “weekly”, the number 7, ...). */
    explainReport(report) {
      const said = notAsked ? loaded("skipReview").notAskedReportWords(
        { name: core.name, labels, question }, report) : null;
      return said ?? core.explain(report, shownLabels());
    },
  });
}

/**
 * A disclosed question (shared/mechanisms/disclosed.py): no mechanism, no ε; the report is the
 * answer as given (true/false, the option index, the integer).
 */
function disclosedFor(question) {
  const labels = labelsOf(question);
  const encode = answerEncoder(question, labels);
  function report(answer) {
    const index = encode(answer);
    if (question.type === "integer") return Number(BigInt(question.min) + index);  // safe
    return question.type === "binary" ? index === 1 : index;
  }
  return Object.freeze({
    question, name: "disclosed", epsilon: 0, instantaneousEpsilon: null, params: {},
    k: labels ? labels.length : null, disclosed: true, encode,
    perturb(answer) { return report(answer); },
    answerTag() { return null; },
    describe() {
      return { text: t("mech.disclosed"), truthful: 1, other: 0 };
    },
    explainReport(value) {
      if (question.type === "binary") return yesNoWords(value);
      if (question.type === "integer") return t("mech.number", { n: value });
      return optionWords(optionText(question, labels[value]));
    },
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
