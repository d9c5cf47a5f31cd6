// A yes/no question (shared/question_types/binary.py): its values are false and true, its
// radios say "yes" and "no", the two-server mode counts its yeses.

import { choiceInputs, rawAnswer } from "../form.js";
import { t } from "../i18n.js";
import { AnswerError, P, yesNoWords } from "../mechanisms.js";
import { optionOf, optionText, specialLabels } from "../shown.js";
import { QuestionType } from "./base.js";

const VALUES = Object.freeze([false, true]);
const yesNo = (value) => t(value ? "word.yesQuoted" : "word.noQuoted");

class BinaryType extends QuestionType {
  // --- the signed definition (manifest.js, canonical.js, mechanisms.js) ---

  shapeRefusal() { return null; }

  check() {}

  canonical() { return {}; }

  // --- the mechanism (mechanisms.js) ---

  values() { return VALUES; }

  disclosedReport(q, index) { return index === 1; }

  disclosedWords(q, value) { return yesNoWords(value); }

  // --- the form (form.js) ---

  inputs(q, name, describedBy) {
    return choiceInputs(q, name, describedBy,
                        [["true", { text: t("word.yes") }], ["false", { text: t("word.no") }],
                         ...specialLabels(q).map((label) => [label, optionOf(q, label)])]);
  }

  read(form, q, name) {
    const { raw, ...done } = rawAnswer(form, q, name);
    if (raw === undefined) return done;
    return specialLabels(q).includes(raw) ? { value: raw } : { value: raw === "true" };
  }

  answerText(q, value) {
    return typeof value === "string" ? optionText(q, value) : t(value ? "word.yes" : "word.no");
  }

  // --- the review and the receipt (review.js, skip_review.js) ---

  chances(q, mechanism, answer) {
    const d = mechanism.describe(answer);
    if (mechanism.name === "binary_rr" || mechanism.name === "grr") {
      return t("review.binary", { answer: yesNo(answer), other: yesNo(!answer),
                                  p: P(d.truthful), q: P(d.other) });
    }
    return d.text;
  }

  // --- the two-server measurement (twoserver/upload.js, verify.js) ---

  encoding(q, notAsked = false) {
    return notAsked || specialLabels(q).length ? super.encoding(q, notAsked)
      : { kind: "count", length: 1, max: 1 };
  }

  index(q, value) {
    if (typeof value !== "boolean") throw new AnswerError(`the answer to ${JSON.stringify(q.id)} must be true or false`);
    return value ? 1 : 0;
  }
}

export default new BinaryType({
  name: "binary",
  mechanisms: ["binary_rr", "grr",
               "warner", "crosswise", "forced_response", "unrelated_question", "matrix"],
  notAskedMechanisms: ["grr", "hr"],
  conditionKind: "bool",
  conditionWords: "a yes/no question",  // not words: a condition error
});
