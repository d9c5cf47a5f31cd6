// The review's words for skip logic, client/skip_review.py's character for character (the
// catalogue's "skip" part). docs/skip-logic.md, "What respondents see".

import { N, quoted, t } from "./i18n.js";
import { P, yesNoWords } from "./mechanisms.js";
import { noiseParams } from "./review.js";
import { Rational } from "./rational.js";
import { optionText, questionText } from "./shown.js";
import { NOT_ASKED } from "./skip_logic.js";

const notAskedWords = () => t("skip.notAskedQuoted");

/** One value of a question with a "not asked" value, as the review names it. */
function valueWords(q, value) {
  if (typeof value === "boolean") return t(value ? "word.yesQuoted" : "word.noQuoted");
  if (value === NOT_ASKED) return notAskedWords();
  return quoted(optionText(q, value));
}

/** The exact chances of what the device sends for a question with a "not asked" value; null:
 * the mechanism's general description says it. */
export function notAskedChances(q, mechanism, answer) {
  if (q.type === "multiselect") return setChances(mechanism, answer);
  const d = mechanism.describe();
  const chance = { p: P(d.truthful), q: P(d.other) };
  if (mechanism.name === "grr") {
    return t(answer === NOT_ASKED ? "skip.grrNotAsked" : "skip.grr",
             { answer: valueWords(q, answer), others: mechanism.labels.length - 1, ...chance });
  }
  if (mechanism.name === "asked_geometric") {
    if (answer === NOT_ASKED) {
      return t("skip.numberNotAsked", { ...chance, middle: mechanism.params.default,
                                        min: q.min, max: q.max });
    }
    const rate = mechanism.rate.toNumber();
    return t("skip.number", { ...chance, ...noiseParams(q, Number(answer), Math.tanh(rate / 2),
                                                        Math.exp(rate)) });
  }
  return null;
}

/** A multiselect question with "not asked" (the pseudo-option after its k options). */
function setChances(mechanism, answer) {
  const k = mechanism.labels.length - 1;
  const notAsked = answer === NOT_ASKED;
  const checked = notAsked ? 0 : mechanism.encode(answer).length;
  const p = P(Rational.parse(mechanism.params.p).toNumber());
  const q = P(Rational.parse(mechanism.params.q).toNumber());
  if (mechanism.name === "option_rr" || mechanism.name === "set_ue") {
    const others = k + 1 - (notAsked ? 1 : checked);
    return t(notAsked ? "skip.marksNotAsked" : checked ? "skip.marks" : "skip.marksNone",
             { k, checked, others, p, q });
  }
  if (mechanism.name === "psfo_grr") {
    const { pad, values } = mechanism.params;
    const items = notAsked ? t("skip.itemsNotAsked", { blanks: pad - 1 })
      : t("multi.items", { checked, blanks: pad - checked,
                           both: checked && pad - checked ? "yes" : "no" });
    return t("skip.psfoGrr", { k, blanks: values - (k + 1), items, p, q });
  }
  return null;
}

/** A multiselect report with the "not asked" pseudo-option (its last mark or value). */
function setReportWords(mechanism, report) {
  const { labels, question } = mechanism;
  const said = (value) => (value === NOT_ASKED ? notAskedWords() : quoted(optionText(question, value)));
  if ((mechanism.name === "option_rr" || mechanism.name === "set_ue") && Array.isArray(report)) {
    const marked = [];
    for (let v = 0; v < labels.length; v++) {
      if ((report[v >> 5] >>> (v & 31)) & 1) marked.push(said(labels[v]));
    }
    return marked.length ? t("skip.marksSet", { marks: marked.join(", ") }) : t("skip.noMarkSet");
  }
  if (mechanism.name === "psfo_grr" && Number.isInteger(report)) {
    if (report < labels.length) {
      return labels[report] === NOT_ASKED ? notAskedWords()
        : t("mech.option", { option: said(labels[report]) });
    }
    return t("multi.blank");
  }
  return null;
}

/** A stored report of a question with a "not asked" value in plain words (null: the general
 * wording fits). `mechanism`: {name, labels, question}. */
export function notAskedReportWords(mechanism, report) {
  const q = mechanism.question;
  if (q.type === "multiselect") return setReportWords(mechanism, report);
  if (mechanism.name === "asked_geometric") {
    const outside = report[1] < q.min || report[1] > q.max;
    return t(outside ? "skip.askedReportOutside" : "skip.askedReport",
             { asked: report[0] === 1 ? "yes" : "no", n: report[1], min: q.min, max: q.max });
  }
  const name = mechanism.name.replace(/\+instantaneous$/, "");  // a layered report: one index
  if (name === "hr") return t("mech.number", { n: report });
  if ((name === "grr" || name === "ordinal_exp") &&
      Number.isInteger(report)) {
    const value = mechanism.labels[report];
    if (typeof value === "boolean") return yesNoWords(value);
    return value === NOT_ASKED ? t("skip.notAskedReport")
      : t("mech.option", { option: quoted(optionText(q, value)) });
  }
  return null;
}

const texts = (questions) => questions.map((q) => quoted(questionText(q))).join("; ");

/** The two-server review's words on the questions that do not apply
 * (skip_review.two_server_skipped_lines). */
export function twoServerSkippedLines(questions, values) {
  const hidden = questions.filter((q) => values.get(q.id) === NOT_ASKED);
  return hidden.length ? [t("skip.twoServerHidden", { questions: texts(hidden) })] : [];
}

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
    lines.push(t("skip.hidden", { questions: texts(hidden), epsilon: N(total(hidden)) }));
  }
  if (open.length) lines.push(t("skip.open", { questions: texts(open) }));
  return lines;
}
