// The review's words for skip logic (client/skip_review.py, character for character): the
// chances of a question with a "not asked" value, a stored report of one, and what is said of
// the questions that do not apply.

import { pct } from "./mechanisms.js";
import { Rational } from "./rational.js";
import { NOT_ASKED } from "./skip_logic.js";

export const NOT_ASKED_WORDS = "‘not asked’";

/** One value of a question with a "not asked" value, as the review names it. */
export function valueWords(value) {
  if (typeof value === "boolean") return value ? "‘yes’" : "‘no’";
  if (value === NOT_ASKED) return NOT_ASKED_WORDS;
  return `“${value}”`;
}

/** The noise on a number in words (review.js numberChances, its second part). */
export function numberNoise(q, rate, x) {
  const same = Math.tanh(rate / 2);
  const step = Math.exp(rate);
  const near = (2 * same) / step;
  const further = Math.max(0, 1 - same - near);
  const factor = step < 1.0001 ? "very slightly" : `${step.toPrecision(3)} times`;
  return `${x} itself with probability ${pct(same)}, ${x - 1} or ${x + 1} with probability ` +
         `${pct(near)}, a number further away with probability ${pct(further)} (each further ` +
         `step is ${factor} less likely than the one before). The number sent can be below ` +
         `${q.min} or above ${q.max}: that is the noise, as expected.`;
}

/** The exact chances of what the device sends for a question with a "not asked" value; null:
 * the mechanism's general description says it. */
export function notAskedChances(q, mechanism, answer) {
  if (q.type === "multiselect") return setChances(mechanism, answer);
  const d = mechanism.describe();
  if (mechanism.name === "grr") {
    const k = mechanism.labels.length;
    const truth = answer === NOT_ASKED ? "(the question does not apply to you)" : "(your real answer)";
    const others = answer === NOT_ASKED ? "values" : `values (${NOT_ASKED_WORDS} among them)`;
    return `Your device will send ${valueWords(answer)} ${truth} with probability ` +
           `${pct(d.truthful)}, otherwise one of the other ${k - 1} ${others}, each with ` +
           `probability ${pct(d.other)}.`;
  }
  if (mechanism.name === "asked_geometric") {
    if (answer === NOT_ASKED) {
      return `Your device will send ${NOT_ASKED_WORDS} with probability ${pct(d.truthful)} ` +
             `(‘asked’ with probability ${pct(d.other)}), and the number ` +
             `${mechanism.params.default} (the middle of ${q.min} to ${q.max}, standing in for ` +
             "an answer) with random noise added, as for any answer.";
    }
    return `Your device will send ‘asked’ with probability ${pct(d.truthful)} ` +
           `(${NOT_ASKED_WORDS} with probability ${pct(d.other)}), and your number with random ` +
           `noise added: ${numberNoise(q, mechanism.rate.toNumber(), Number(answer))}`;
  }
  return null;
}

const countOf = (n, noun) => `${n} ${noun}${n === 1 ? "" : "s"}`;

function itemsOf(checked, pad) {  // multiselect.js items(), the words of multiselect_words._items
  const mine = checked ? [`${countOf(checked, "option")} you checked`] : [];
  if (pad - checked) mine.push(countOf(pad - checked, "blank"));
  return mine.join(" and ");
}

/** A multiselect question with "not asked" (the pseudo-option after its k options). */
function setChances(mechanism, answer) {
  const k = mechanism.labels.length - 1;
  const notAsked = answer === NOT_ASKED;
  const checked = notAsked ? 0 : mechanism.encode(answer).length;
  const p = Rational.parse(mechanism.params.p).toNumber();
  const q = Rational.parse(mechanism.params.q).toNumber();
  if (mechanism.name === "option_rr" || mechanism.name === "set_ue") {
    const yours = notAsked ? `${NOT_ASKED_WORDS} (the question does not apply to you)`
      : checked === 1 ? "the option you checked"
        : checked ? `each of the ${checked} options you checked` : "";
    const others = k + 1 - (notAsked ? 1 : checked);
    const parts = yours ? [`‘yes’ with probability ${pct(p)} for ${yours}`] : [];
    const rest = yours ? (others === 1 ? "the other mark" : `each of the ${others} others`)
      : `each of the ${others} marks`;
    parts.push(`‘yes’ with probability ${pct(q)} for ${rest}`);
    return `Your device will send a yes/no mark for each of the ${k} options and for ` +
           `${NOT_ASKED_WORDS}, each drawn on its own: ${parts.join(", and ")}.`;
  }
  if (mechanism.name === "psfo_grr") {
    const { pad, values } = mechanism.params;
    const blanks = countOf(values - (k + 1), "blank");
    const items = notAsked ? NOT_ASKED_WORDS + (pad > 1 ? ` and ${countOf(pad - 1, "blank")}` : "")
      : itemsOf(checked, pad);
    return `Your device will send one item out of the ${k} options, ${NOT_ASKED_WORDS} and ` +
           `${blanks}: ${items} with probability ${pct(p)} each, any other item with ` +
           `probability ${pct(q)} each. The server cannot tell whether the item sent is one ` +
           "of yours.";
  }
  return null;
}

/** A multiselect report with the "not asked" pseudo-option (its last mark or value). */
function setReportWords(mechanism, report) {
  const { labels } = mechanism;
  const said = (value) => (value === NOT_ASKED ? NOT_ASKED_WORDS : `“${value}”`);
  if ((mechanism.name === "option_rr" || mechanism.name === "set_ue") && Array.isArray(report)) {
    const marked = [];
    for (let v = 0; v < labels.length; v++) {
      if ((report[v >> 5] >>> (v & 31)) & 1) marked.push(said(labels[v]));
    }
    return marked.length ? `the marks set: ${marked.join(", ")}` : "no mark set";
  }
  if (mechanism.name === "psfo_grr" && Number.isInteger(report)) {
    if (report < labels.length) {
      return labels[report] === NOT_ASKED ? NOT_ASKED_WORDS : `the option ${said(labels[report])}`;
    }
    return "a blank";
  }
  return null;
}

/** A stored report of a question with a "not asked" value in plain words (null: the general
 * wording fits). `mechanism`: {name, labels, question}. */
export function notAskedReportWords(mechanism, report) {
  if (mechanism.question.type === "multiselect") return setReportWords(mechanism, report);
  if (mechanism.name === "asked_geometric") {
    const q = mechanism.question;
    const outside = report[1] < q.min || report[1] > q.max
      ? ` (outside ${q.min} to ${q.max}: that is the random noise, as expected; it is what ` +
        "keeps your real number private, and the survey's results allow for it)" : "";
    return `${report[0] === 1 ? "‘asked’" : NOT_ASKED_WORDS} and the number ${report[1]}${outside}`;
  }
  const name = mechanism.name.replace(/\+instantaneous$/, "");  // a layered report: one index
  if (name === "hr") return `the number ${report}`;
  if ((name === "grr" || name === "ordinal_exp") &&
      Number.isInteger(report)) {
    const value = mechanism.labels[report];
    if (typeof value === "boolean") return value ? "yes" : "no";
    return value === NOT_ASKED ? "not asked" : `the option “${value}”`;
  }
  return null;
}

/** The two-server review's words on the questions that do not apply
 * (skip_review.two_server_skipped_lines). */
export function twoServerSkippedLines(questions, values) {
  const hidden = questions.filter((q) => values.get(q.id) === NOT_ASKED);
  if (!hidden.length) return [];
  return [`Not asked, because they do not apply to your answers: ${texts(hidden)}. Your ` +
          `device still sends ${NOT_ASKED_WORDS} for each, split into two halves like any ` +
          "answer: whether they apply depends on your other answers, and sending nothing " +
          "for them would tell the organizations those answers."];
}

const texts = (questions) => questions.map((q) => `“${q.text}”`).join("; ");

/**
 * What the review says of the questions that do not apply (skip_review.skipped_lines):
 * `values` are what the device randomizes (NOT_ASKED for one sent as "not asked"),
 * `notApplying(q)` whether a question is left out of the list, `total(questions)` their ε
 * summed and formatted as Python's `{:g}` of math.fsum.
 */
export function skippedLines(questions, values, notApplying, total) {
  const hidden = questions.filter((q) => values.get(q.id) === NOT_ASKED);
  const open = questions.filter((q) => !values.has(q.id) && notApplying(q));
  const lines = [];
  if (hidden.length) {
    lines.push(`Not asked, because they do not apply to your answers: ${texts(hidden)}. ` +
               `Your device still sends a randomized ${NOT_ASKED_WORDS} for each, drawn like ` +
               `any answer (ε = ${total(hidden)} in total, counted above): whether they apply ` +
               "depends on answers that are randomized, and sending nothing for them would " +
               "reveal those answers.");
  }
  if (open.length) {
    lines.push(`Not asked, because they do not apply to your answers: ${texts(open)}. ` +
               "Nothing is sent for them: whether they apply depends only on answers sent as " +
               "you give them, which the server sees anyway.");
  }
  return lines;
}
