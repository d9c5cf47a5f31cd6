// The review's words for skip logic, client/skip_review.py's character for character (the
// catalogue's "skip" part). docs/skip-logic.md, "What respondents see".

import { N, quoted, t } from "./i18n.js";
import { P, yesNoWords } from "./mechanisms.js";
import { optionText, questionText } from "./shown.js";
import { NOT_ASKED } from "./skip_logic.js";
import { unitOf } from "./types/index.js";  // a type's own words (multiselect, integer)

const notAskedWords = () => t("skip.notAskedQuoted");

/** One value of a question with a "not asked" value, as the review names it. */
function valueWords(q, value) {
  if (typeof value === "boolean") return t(value ? "word.yesQuoted" : "word.noQuoted");
  if (value === NOT_ASKED) return notAskedWords();
  return quoted(optionText(q, value));
}

/** The exact chances of what the device sends for a question with a "not asked" value; null:
 * the mechanism's general description says it. A type with words of its own says them (a
 * set's pseudo-option, an integer's asked bit: js/types/); else one index among the labels. */
export function notAskedChances(q, mechanism, answer) {
  const own = unitOf(q).notAskedChances(q, mechanism, answer);
  if (own !== undefined) return own;
  if (mechanism.name === "grr") {
    const d = mechanism.describe();
    const key = answer === NOT_ASKED ? "skip.grrNotAsked"
      : mechanism.notAsked ? "skip.grr" : "special.grrSpecial";
    return t(key,
             { answer: valueWords(q, answer), others: mechanism.labels.length - 1,
               p: P(d.truthful), q: P(d.other) });
  }
  return null;
}

/** A stored report of a question with a "not asked" value in plain words (null: the general
 * wording fits). `mechanism`: {name, labels, question}. */
export function notAskedReportWords(mechanism, report) {
  const q = mechanism.question;
  const own = unitOf(q).notAskedReportWords(mechanism, report);
  if (own !== undefined) return own;
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
