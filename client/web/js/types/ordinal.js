// An ordinal question: one of its options, in order (shared/question_types/ordinal.py). Its
// own: ordinal_exp, which the review lists option by option for a short scale.

import { quoted, t } from "../i18n.js";
import { P } from "../mechanisms.js";
import { optionText } from "../shown.js";
import { QuestionType } from "./base.js";

const LIST_ALL_UP_TO = 8;  // at most this many options: the review lists every chance

class OrdinalType extends QuestionType {
  // --- the review and the receipt (review.js, skip_review.js) ---

  chances(q, mechanism, answer) {
    if (mechanism.name !== "ordinal_exp" || q.options.length > LIST_ALL_UP_TO) {
      return super.chances(q, mechanism, answer);
    }
    const d = mechanism.describe(answer);
    const at = q.options.indexOf(answer);
    const weights = q.options.map((_, y) => d.stepFactor ** -Math.abs(at - y));
    const total = weights.reduce((a, b) => a + b, 0);
    return t("review.ordinal", { list: q.options.map((o, y) => t(
      y === at ? "review.ordinalYours" : "review.ordinalOther",
      { option: quoted(optionText(q, o)), p: P(weights[y] / total) })).join(", ") });
  }
}

export default new OrdinalType({
  name: "ordinal",
  mechanisms: ["grr", "oue", "sue", "olh", "hr", "ss", "ordinal_exp"],
  notAskedMechanisms: ["grr", "hr", "ordinal_exp"],
  conditionKind: "text",  // an option's label, which a condition also orders:
  ordered: true,
  filterReads: true,
  conditionWords: "an ordinal question",  // not words: a condition error
});
