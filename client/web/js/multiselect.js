// Check-all-that-apply questions (loaded only for a survey with one): psfo_grr ported draw for
// draw (option_rr, set_ue, psfo_olh: set_cores.js), its words, the checkboxes (form.js).
// docs/multiselect.md, docs/browser-randomizers.md.

import { el } from "./dom.js";
import { quoted, t } from "./i18n.js";
import { AnswerError, ManifestMismatch, P } from "./mechanisms.js";
import { loaded } from "./optional.js";  // set_cores.js, for option_rr, set_ue and psfo_olh
import { optionOf, optionText, shown } from "./shown.js";
import { expLower, Rational, rationalExpFloor } from "./rational.js";

export const SET_MECHANISMS = Object.freeze(["option_rr", "set_ue", "psfo_grr", "psfo_olh"]);
export const LOCAL_SET_MECHANISMS = Object.freeze(["option_rr", "set_ue", "psfo_grr"]);
export const MAX_SET_OPTIONS = 64;
export const ONE = new Rational(1n);
const SKIP = "__skip__";

// --- the allowed answers (set_base.py SetShape) ------------------------------------------------

/** {k, m, least, exclusive, free, largest} of a multiselect question, or ManifestMismatch:
 * `exclusive` the indices (ascending) of the options selected only alone, `free` the others'
 * count k', `largest` the most options an allowed set holds (min(m, k') with exclusive ones). */
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
  const alone = question.exclusive;  // absent unless given (set_base.py SetShape.exclusive)
  if (alone !== undefined && (!Array.isArray(alone) || !alone.length
      || alone.some((o) => !options.includes(o)) || new Set(alone).size !== alone.length
      || alone.length >= k)) {
    throw new ManifestMismatch(`${where}: exclusive must list distinct options, leaving one that can be selected with another`);
  }
  const exclusive = (alone ?? []).map((o) => options.indexOf(o)).sort((x, y) => x - y);
  const free = k - exclusive.length;
  return { k, m, least, exclusive, free, largest: exclusive.length ? Math.min(m, free) : m };
}

function plainFeasible(k, m, least, a, b) {
  const c = Math.max(0, least - Math.min(a, b));  // the least overlap both sizes allow
  return a + c <= m && b + c <= m && a + b + c <= k;
}

/** set_base.py SetShape.feasible: with exclusive options, the non-exclusive sets' pairs, an
 * exclusive option alone against a set of s others (1, s) and (s, 1), two of them (1, 1). */
function feasible(shape, a, b) {
  const { k, m, least, exclusive, free, largest } = shape;
  if (!exclusive.length) return plainFeasible(k, m, least, a, b);
  const size = (s) => s >= least && s <= largest;
  return (a === 0 && b === 0) || (a === 1 && b === 1 && exclusive.length >= 2)
    || (a === 1 && size(b)) || (b === 1 && size(a))
    || plainFeasible(Math.max(free, 1), largest, least, a, b);
}

/** For each a, (a, the largest b) two allowed sets can differ by. */
export function pairs(shape) {
  const out = [];
  for (let a = 0; a <= shape.largest; a++) {
    let best = -1;
    for (let b = 0; b <= shape.largest; b++) if (feasible(shape, a, b)) best = b;
    if (best >= 0) out.push([a, best]);
  }
  return out;
}

/** Δ = min(2m, k) (max(min(2m', k'), m' + 1) with exclusive options): the most options two
 * allowed sets differ in. */
export function maxDifference(shape) {
  return Math.max(...pairs(shape).map(([a, b]) => a + b));
}

export function certify(name, ratio, epsilon) {
  if (ratio === null) throw new ManifestMismatch(`${name}: some report is impossible under one answer and possible under another`);
  if (ratio.le(ONE)) return;
  if (ratio.gt(expLower(Rational.fromNumber(epsilon)))) {
    throw new ManifestMismatch(`${name}: the channel's exact privacy loss exceeds ε = ${epsilon}`);
  }
}

/** encode(answer) -> the sorted indices of the options selected; AnswerError otherwise. */
export function setEncoder(question) {
  const { m, least, exclusive } = shapeOf(question);
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
    const sorted = [...chosen].sort((x, y) => x - y);
    const alone = sorted.find((j) => exclusive.includes(j));
    if (alone !== undefined && chosen.size > 1) {
      throw new AnswerError(`${JSON.stringify(question.options[alone])} can only be selected alone${of}: select it or the other options, not both`);
    }
    return sorted;
  };
}

// --- words (client/multiselect_words.py) --------------------------------------------------------

/** An answer as the respondent sees it: the options checked, in the page's language. */
export const answerText = (q, value) => (value && value.length
  ? value.map((label) => optionText(q, label)).join(", ") : t("multi.none"));

/** "2 options you checked and 1 blank" (multiselect_words._items). */
export const items = (checked, pad) => t("multi.items", { checked, blanks: pad - checked,
                                                   both: checked && pad - checked ? "yes" : "no" });

// --- the randomizers ---------------------------------------------------------------------------

/** psfo_grr: T(S) padded to m items with blanks; one value of k + m − least drawn, weight E
 * for the items of T(S), 1 for the others (psfo_grr.py). */
function psfoGrrCore(epsilon, shape) {
  const { k, least, largest } = shape;
  const pad = largest;  // psfo_grr.py best_pad: every variance grows with ℓ, so ℓ = m (m')
  const size = k + pad - least;
  const e = rationalExpFloor(epsilon);
  const weightIn = e.num;
  const weightOut = e.den;
  const total = BigInt(pad) * weightIn + BigInt(size - pad) * weightOut;
  const p = new Rational(weightIn, total);
  const q = new Rational(weightOut, total);
  if (!(pad >= largest && size > pad && weightIn > 0n && weightOut > 0n)) certify("psfo_grr", null, epsilon);
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

/** The core of a multiselect mechanism for a checked question (mechanisms.js coreFor). */
export function setCore(name, epsilon, question) {
  const shape = shapeOf(question);
  if (name === "option_rr" || name === "set_ue") return loaded("setCores").bitsCore(name, epsilon, shape);
  if (name === "psfo_grr") return psfoGrrCore(epsilon, shape);
  if (name === "psfo_olh") return loaded("setCores").psfoOlhCore(epsilon, shape);
  throw new ManifestMismatch(`${name} is not a multiselect mechanism`);
}

// --- the checkboxes (form.js) ----------------------------------------------------------------

/** Native checkboxes in the question's fieldset (its legend is the question), a line saying how
 * many may be checked, and a polite live message when a box past max_selected is refused or an
 * exclusive option ("None of these") clears the others, or another clears it (as ODK does). */
export function checkboxInputs(q, name, describedBy) {
  const { m, least, exclusive, free, largest } = shapeOf(q);
  const alone = new Set(exclusive.map((j) => q.options[j]));
  const limitId = `${name}-limit`;
  const how = largest < free ? t("multi.howMost", { m: largest }) : t("multi.how");
  const boxes = q.options.map((option, i) => {
    const id = `${name}-${i}`;
    return el("div", { class: "choice" },
      el("input", { type: "checkbox", name, id, value: option,
                    "aria-describedby": `${describedBy} ${limitId}` }),
      el("label", { for: id }, shown(optionOf(q, option), true)));
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
    if (box.checked && alone.size) {  // an exclusive option alone; another clears it
      const cleared = all.filter((b) => b !== box && b.checked && b.value !== SKIP
                                  && (alone.has(box.value) || alone.has(b.value)));
      for (const other of cleared) other.checked = false;
      if (cleared.length) {
        const only = alone.has(box.value) ? box.value : cleared[0].value;
        limit.textContent = t("multi.alone", { option: optionText(q, only) });
        return;
      }
    }
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
  const { m, least, exclusive } = shapeOf(q);
  const boxes = [...form.querySelectorAll("input[type=checkbox]")].filter((b) => b.name === name);
  if (boxes.some((b) => b.value === SKIP && b.checked)) return { value: null };
  const value = q.options.filter((o) => boxes.some((b) => b.value === o && b.checked));
  if (value.length > m) return { error: t("multi.tooMany", { m }) };
  if (value.length < least) return { error: t("multi.atLeastOne") };
  const only = exclusive.map((j) => q.options[j]).find((o) => value.includes(o));
  if (only !== undefined && value.length > 1) {
    return { error: t("multi.alone", { option: optionText(q, only) }) };
  }
  return { value };
}
