// Check-all-that-apply (multiselect) questions on the page: the four randomizers of
// shared/mechanisms/ (option_rr.py, set_ue.py, psfo_grr.py, psfo_olh.py) ported draw for draw,
// their plain words (client/multiselect_words.py, the same strings), and the checkboxes.
//
// Loaded only for a survey with a multiselect question (optional.js); mechanisms.js builds the
// cores here (`setCore`), form.js draws the checkboxes (`checkboxInputs`, `readChecked`).
// An answer is a list of distinct option labels in any order ([] for none); inside, the sorted
// indices of the options selected. Every parameter is re-derived from the question's options,
// max_selected, required_min and ε in exact BigInt rationals and the privacy loss re-checked
// for ANY two allowed answer sets, as shared/ does; a manifest that differs is refused.

import { el } from "./dom.js";
import { quoted, t } from "./i18n.js";
import {
  AnswerError, bitThresholds, bitsFromWords, ManifestMismatch, markedOptions, P, wordsFromBits,
} from "./mechanisms.js";
import { loaded } from "./optional.js";  // hashing.js, for psfo_olh only
import { NOT_ASKED } from "./skip_logic.js";
import { optionOf, optionText, shown } from "./shown.js";
import { bernoulliBits } from "./randomness.js";
import { expLower, Rational, rationalExpFloor, rationalExpFloorOf } from "./rational.js";

export const SET_MECHANISMS = Object.freeze(["option_rr", "set_ue", "psfo_grr", "psfo_olh"]);
export const LOCAL_SET_MECHANISMS = Object.freeze(["option_rr", "set_ue", "psfo_grr"]);
export const MAX_SET_OPTIONS = 64;
const BITMAP_ENCODING = "bitmap-u32-le";
const ONE = new Rational(1n);
const SKIP = "__skip__";

// --- the allowed answers (set_base.py SetShape) ------------------------------------------------

/** {k, m, least} of a multiselect question, or ManifestMismatch. */
export function shapeOf(question, where = `question ${JSON.stringify(question.id)}`) {
  const options = question.options;
  if (!Array.isArray(options) || options.length < 2 || options.length > MAX_SET_OPTIONS
      || options.some((o) => typeof o !== "string" || !o.trim())
      || new Set(options).size !== options.length) {
    throw new ManifestMismatch(`${where}: options must be 2 to ${MAX_SET_OPTIONS} distinct labels`);
  }
  const k = options.length;
  const m = question.max_selected;
  const least = question.required_min;
  if (!Number.isSafeInteger(m) || m < 1 || m > k) {
    throw new ManifestMismatch(`${where}: max_selected must be an integer from 1 to ${k}`);
  }
  if (least !== 0 && least !== 1) throw new ManifestMismatch(`${where}: required_min must be 0 or 1`);
  return { k, m, least };
}

function feasible(shape, a, b) {
  const c = Math.max(0, shape.least - Math.min(a, b));  // the least overlap both sizes allow
  return a + c <= shape.m && b + c <= shape.m && a + b + c <= shape.k;
}

/** For each a, (a, the largest b) two allowed sets can differ by. */
function pairs(shape) {
  const out = [];
  for (let a = 0; a <= shape.m; a++) {
    let best = -1;
    for (let b = 0; b <= shape.m; b++) if (feasible(shape, a, b)) best = b;
    if (best >= 0) out.push([a, best]);
  }
  return out;
}

/** Δ = min(2m, k): the most options two allowed sets differ in. */
export function maxDifference(shape) {
  return Math.max(...pairs(shape).map(([a, b]) => a + b));
}

function certify(name, ratio, epsilon) {
  if (ratio === null) throw new ManifestMismatch(`${name}: some report is impossible under one answer and possible under another`);
  if (ratio.le(ONE)) return;
  if (ratio.gt(expLower(Rational.fromNumber(epsilon)))) {
    throw new ManifestMismatch(`${name}: the channel's exact privacy loss exceeds ε = ${epsilon}`);
  }
}

/** encode(answer) -> the sorted indices of the options selected; AnswerError otherwise. */
export function setEncoder(question) {
  const { m, least } = shapeOf(question);
  const of = ` to ${JSON.stringify(question.id)}`;
  return function encode(answer) {
    if (!Array.isArray(answer)) {
      throw new AnswerError(`${JSON.stringify(answer)} is not a list of options${of}: a multiselect answer lists the options selected ([] for none)`);
    }
    const chosen = new Set();
    for (const label of answer) {
      const index = typeof label === "string" ? question.options.indexOf(label) : -1;
      if (index < 0) throw new AnswerError(`${JSON.stringify(label)} is not one of the options${of}`);
      if (chosen.has(index)) throw new AnswerError(`${JSON.stringify(label)} is listed twice${of}`);
      chosen.add(index);
    }
    if (chosen.size > m) throw new AnswerError(`${chosen.size} options selected${of}: at most ${m} may be`);
    if (chosen.size < least) throw new AnswerError(`nothing selected${of}: select at least one option`);
    return [...chosen].sort((x, y) => x - y);
  };
}

// --- words (client/multiselect_words.py) --------------------------------------------------------

/** An answer as the respondent sees it: the options checked, in the page's language. */
export const answerText = (q, value) => (value && value.length
  ? value.map((label) => optionText(q, label)).join(", ") : t("multi.none"));

function marks(k, checked, p, q) {
  return t("multi.marks", { k, checked, unchecked: k - checked, p: P(p), q: P(q),
                            both: checked && k - checked ? "yes" : "no" });
}

/** "2 options you checked and 1 blank" (multiselect_words._items). */
const items = (checked, pad) => t("multi.items", { checked, blanks: pad - checked,
                                                   both: checked && pad - checked ? "yes" : "no" });

// --- the randomizers ---------------------------------------------------------------------------

/** option_rr and set_ue: k independent bits, 1 w.p. p when selected, q when not. */
function bitsCore(name, epsilon, shape) {
  const { k, m } = shape;
  let p;
  let q;
  if (name === "option_rr") {
    const r = rationalExpFloorOf(Rational.fromNumber(epsilon).div(maxDifference(shape)));
    p = r.div(r.add(1));
    q = ONE.div(r.add(1));
  } else {
    if (2 * m > k) throw new ManifestMismatch(`set_ue serves at most half the options (max_selected <= ${Math.floor(k / 2)})`);
    const r = rationalExpFloorOf(Rational.fromNumber(epsilon).div(m));
    p = new Rational(1n, 2n);
    q = ONE.div(r.add(1));
  }
  if (!(q.gt(0n) && p.gt(q) && p.lt(ONE))) certify(name, null, epsilon);
  const alpha = p.div(q);
  const beta = ONE.sub(q).div(ONE.sub(p));
  let worst = ONE;
  for (const [a, b] of pairs(shape)) {
    const ratio = alpha.pow(a).mul(beta.pow(b));
    if (ratio.gt(worst)) worst = ratio;
  }
  certify(name, worst, epsilon);
  const { D, pT, qT } = bitThresholds(p, q);
  return {
    name, k, p, q,
    params: { p: p.toString(), q: q.toString(), encoding: BITMAP_ENCODING },
    perturbIndex(selected, source) {
      const inSet = new Set(selected);
      return wordsFromBits(bernoulliBits(source, D, k, (v) => (inSet.has(v) ? pT : qT)), k);
    },
    describe(labels, selected) {
      const truthful = p.toNumber();
      const other = q.toNumber();
      const text = selected === undefined
        ? t("multi.bits", { k, p: P(truthful), q: P(other) })
        : marks(k, selected.length, truthful, other);
      return { text, truthful, other };
    },
    explain(report, labels) { return markedOptions(bitsFromWords(report, k), labels); },
  };
}

/** psfo_grr: T(S) padded to m items with blanks; one value of k + m − least drawn, weight E
 * for the items of T(S), 1 for the others (psfo_grr.py). */
function psfoGrrCore(epsilon, shape) {
  const { k, m, least } = shape;
  const pad = m;  // psfo_grr.py best_pad: every variance grows with ℓ, so ℓ = m
  const size = k + pad - least;
  const e = rationalExpFloor(epsilon);
  const weightIn = e.num;
  const weightOut = e.den;
  const total = BigInt(pad) * weightIn + BigInt(size - pad) * weightOut;
  const p = new Rational(weightIn, total);
  const q = new Rational(weightOut, total);
  if (!(pad >= m && size > pad && weightIn > 0n && weightOut > 0n)) certify("psfo_grr", null, epsilon);
  const ratio = new Rational(weightIn, weightOut);
  certify("psfo_grr", ratio.ge(ONE) ? ratio : ratio.inv(), epsilon);
  const padded = (selected) => {
    const inside = new Set(selected);
    for (let i = 0; i < pad - selected.length; i++) inside.add(k + i);
    return inside;
  };
  const blanks = size - k;
  return {
    name: "psfo_grr", k, p, q, pad, size,
    params: { p: p.toString(), q: q.toString(), pad, values: size },
    perturbIndex(selected, source) {
      const inside = padded(selected);
      let draw = source.randbelow(total);
      for (let y = 0; y < size; y++) {
        const weight = inside.has(y) ? weightIn : weightOut;
        if (draw < weight) return y;
        draw -= weight;
      }
      throw new Error("unreachable: the draw is below the total weight");
    },
    describe(labels, selected) {
      const truthful = p.toNumber();
      const other = q.toNumber();
      const words = { pad, k, blanks, p: P(truthful), q: P(other) };
      const text = selected === undefined ? t("multi.psfoGrr", words)
        : t("multi.psfoGrrYours", { ...words, items: items(selected.length, pad) });
      return { text, truthful, other };
    },
    explain(report, labels) {
      return report < k ? t("mech.option", { option: quoted(labels[report]) })
        : t("multi.blank");
    },
  };
}

/** psfo_olh: one item of T(S) drawn uniformly, then OLH over the k + m − least values. */
function psfoOlhCore(epsilon, shape) {
  const { k, m, least } = shape;
  const pad = m;
  const size = k + pad - least;
  const lh = loaded("hashing").localHashing(epsilon);
  const { g, pB, qB, qStar: q } = lh;
  const p = q.add(pB.sub(q).div(pad));
  if (!lh.valid) certify("psfo_olh", null, epsilon);
  certify("psfo_olh", pB.ge(qB) ? pB.div(qB) : qB.div(pB), epsilon);
  const blanks = size - k;
  return {
    name: "psfo_olh", k, p, q, pad, size,
    params: { p: p.toString(), q: q.toString(), pad, values: size, ...lh.params },
    perturbIndex(selected, source) {
      const padded = [...selected];
      for (let i = 0; padded.length < pad; i++) padded.push(k + i);
      return lh.report(padded[Number(source.randbelow(BigInt(pad)))], source);
    },
    describe(labels, selected) {
      const truthful = pB.toNumber();
      const words = { pad, k, blanks, g, others: g - 1, p: P(truthful) };
      const text = selected === undefined ? t("multi.psfoOlh", words)
        : t("multi.psfoOlhYours", { ...words, items: items(selected.length, pad) });
      return { text, truthful, other: qB.toNumber() };
    },
    explain(report) { return t("mech.code", { code: report[0], bucket: report[1] }); },
  };
}

/** The core of a multiselect mechanism for a checked question (mechanisms.js coreFor). */
export function setCore(name, epsilon, question) {
  const shape = shapeOf(question);
  if (name === "option_rr" || name === "set_ue") return bitsCore(name, epsilon, shape);
  if (name === "psfo_grr") return psfoGrrCore(epsilon, shape);
  if (name === "psfo_olh") return psfoOlhCore(epsilon, shape);
  throw new ManifestMismatch(`${name} is not a multiselect mechanism`);
}

// --- two servers (shared/two_server/multiselect.py) ------------------------------------------

/** How a two-server multiselect question is measured: {kind, length, max}. `notAsked`: the
 * question depends on randomized answers, so its measurement ends with a "not asked" entry (k
 * + 1 entries; set_encoding in shared/two_server/multiselect.py). */
export function setEncoding(question, notAsked = false) {
  const { k, m, least } = shapeOf(question);
  const measured = k + (notAsked ? 1 : 0);
  if (question.local_epsilon == null) return { kind: "multihot", length: measured, max: m };
  if (question.mechanism === "psfo_grr") return { kind: "histogram", length: measured + m - least, max: 1 };
  return { kind: "multihot", length: measured, max: measured };
}

/** The answer's k bits, and a last "not asked" bit with `notAsked` (set alone for NOT_ASKED);
 * AnswerError for a set the question does not allow. */
export function answerBits(question, answer, notAsked = false) {
  if (notAsked && answer === NOT_ASKED) return [...question.options.map(() => 0), 1];
  const selected = new Set(setEncoder(question)(answer));
  const bits = question.options.map((_, j) => (selected.has(j) ? 1 : 0));
  return notAsked ? [...bits, 0] : bits;
}

/** The measurement of a local mechanism's report: psfo_grr's index, or the report bits (k, or
 * k + 1 with `notAsked`). */
export function reportMeasurement(question, report, notAsked = false) {
  if (question.mechanism === "psfo_grr") return Number(report);
  const measured = question.options.length + (notAsked ? 1 : 0);
  const on = new Set(bitsFromWords(report, measured));
  return Array.from({ length: measured }, (_, j) => (on.has(j) ? 1 : 0));
}

// --- the checkboxes (form.js) ----------------------------------------------------------------

/** Native checkboxes in the question's fieldset (its legend is the question), a line saying how
 * many may be checked, and a polite live message when a box past max_selected is refused. */
export function checkboxInputs(q, name, describedBy) {
  const { k, m, least } = shapeOf(q);
  const limitId = `${name}-limit`;
  const how = m < k ? t("multi.howMost", { m }) : t("multi.how");
  const boxes = q.options.map((option, i) => {
    const id = `${name}-${i}`;
    return el("div", { class: "choice" },
      el("input", { type: "checkbox", name, id, value: option,
                    "aria-describedby": `${describedBy} ${limitId}` }),
      el("label", { for: id }, shown(optionOf(q, option))));
  });
  if (q.optional) {
    const id = `${name}-skip`;
    boxes.push(el("div", { class: "choice skip" },
      el("input", { type: "checkbox", name, id, value: SKIP }),
      el("label", { for: id }, t("form.skip"))));
  }
  const limit = el("p", { class: "limit", id: limitId, role: "status", "aria-live": "polite" });
  const group = el("div", { class: "choices multiselect" }, boxes);
  group.addEventListener("change", (event) => {
    const box = event.target;
    if (!(box instanceof HTMLInputElement) || box.type !== "checkbox") return;
    const all = [...group.querySelectorAll("input[type=checkbox]")];
    if (box.value === SKIP) {  // skipping clears the options, checking one clears skipping
      if (box.checked) for (const other of all) if (other !== box) other.checked = false;
      limit.textContent = "";
      return;
    }
    if (box.checked) for (const other of all) if (other.value === SKIP) other.checked = false;
    const checked = all.filter((b) => b.checked && b.value !== SKIP).length;
    if (box.checked && checked > m) {
      box.checked = false;
      limit.textContent = t("multi.limit", { m });
    } else {
      limit.textContent = "";
    }
  });
  return [el("p", { class: "inline how-many" }, least ? `${how} ${t("multi.least")}` : how),
          group, limit];
}

/** {value} (the labels checked, in the options' order; null when skipped) or {error}. */
export function readChecked(form, q, name) {
  const { m, least } = shapeOf(q);
  const boxes = [...form.querySelectorAll("input[type=checkbox]")].filter((b) => b.name === name);
  if (boxes.some((b) => b.value === SKIP && b.checked)) return { value: null };
  const value = q.options.filter((o) => boxes.some((b) => b.value === o && b.checked));
  if (value.length > m) return { error: t("multi.tooMany", { m }) };
  if (value.length < least) return { error: t("multi.atLeastOne") };
  return { value };
}
