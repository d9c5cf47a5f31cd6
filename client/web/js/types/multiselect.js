// A check-all-that-apply question (shared/question_types/multiselect.py): its answer is the
// set of options checked. Its randomizers, words and checkboxes are in ../multiselect.js (and
// ../set_cores.js), its two-server measurement in ../twoserver/multiselect.js (loaded for a
// two-server survey); this unit is what the page asks of it.

import { quoted, t } from "../i18n.js";
import { AnswerError, P } from "../mechanisms.js";
import {
  LOCAL_SET_MECHANISMS, SET_MECHANISMS, answerText, checkboxInputs, readChecked, setCore,
  setEncoder, shapeOf,
} from "../multiselect.js";
import { loaded } from "../optional.js";  // twoserver/multiselect.js, two-server surveys only
import { Rational } from "../rational.js";
import { optionText } from "../shown.js";
import { NOT_ASKED } from "../skip_logic.js";
import { QuestionType } from "./base.js";

const notAskedWords = () => t("skip.notAskedQuoted");

class MultiselectType extends QuestionType {
  // --- the signed definition (manifest.js, canonical.js, mechanisms.js) ---

  check(q, where) {
    shapeOf(q, where);
  }

  canonical(q, disclosed) {
    if (disclosed) return {};
    const d = { options: q.options, max_selected: q.max_selected, required_min: q.required_min };
    if (q.exclusive != null) d.exclusive = q.exclusive;  // absent unless given
    return d;
  }

  // --- the mechanism (mechanisms.js) ---

  /** Its set mechanism over the options, and a "not asked" pseudo-option after them
   * (shared/multiselect_not_asked.py), one more exclusive option when the question has them
   * (set_base.py SetShape.with_not_asked). */
  core(name, epsilon, q, notAsked = false) {
    if (!notAsked) return setCore(name, epsilon, q);
    const alone = q.exclusive ? { exclusive: [...q.exclusive, NOT_ASKED] } : {};
    return setCore(name, epsilon, { ...q, options: [...q.options, NOT_ASKED], ...alone });
  }

  encoder(q, labels, notAskedIndex = null) {
    const base = setEncoder(q);
    if (notAskedIndex === null) return base;
    const k = q.options.length;
    return function encode(answer) {
      if (answer === NOT_ASKED) return [k];
      if (Array.isArray(answer) && answer.includes(NOT_ASKED)) {
        throw new AnswerError(`${JSON.stringify(NOT_ASKED)} is not an option: it is what a device sends for a question that does not apply`);
      }
      return base(answer);
    };
  }

  memoValue(q, answer, encode, labels) { return encode(answer).map((i) => labels[i]); }

  /** With an answer: what the device sends for that set. */
  describe(core, labels, answer, encode) {
    return answer !== undefined ? core.describe(labels, encode(answer)) : core.describe(labels);
  }

  // --- the form (form.js) ---

  get optionalKey() { return "form.optionalCheck"; }

  inputs(q, name, describedBy) { return checkboxInputs(q, name, describedBy); }

  read(form, q, name) { return readChecked(form, q, name); }

  answerText(q, value) { return answerText(q, value); }

  // --- the review and the receipt (review.js, skip_review.js) ---

  chances(q, mechanism, answer) { return mechanism.describe(answer).text; }

  /** The pseudo-option "not asked" after the k options (null: the general words). */
  notAskedChances(question, mechanism, answer) {
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

  /** A report with the "not asked" pseudo-option (its last mark or value); null: the
   * general words. */
  notAskedReportWords(mechanism, report) {
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

  // --- the two-server measurement (twoserver/upload.js, verify.js) ---

  /** A vector of counts ("not asked": a last entry; shared/two_server/multiselect.py). */
  encoding(q, notAsked = false) {
    return loaded("twoServerSets").setEncoding(q, notAsked);
  }

  measuredIndex(q, value, notAsked = false) {
    return loaded("twoServerSets").answerBits(q, value, notAsked);
  }

  reportMeasurement(q, report, notAsked) {
    return loaded("twoServerSets").reportMeasurement(q, report, notAsked);
  }

  localMechanisms() { return LOCAL_SET_MECHANISMS; }
}

export default new MultiselectType({
  name: "multiselect",
  takesSpecial: false,
  mechanisms: SET_MECHANISMS,
  notAskedMechanisms: ["option_rr", "set_ue", "psfo_grr"],
  conditionKind: "set",
  filterReads: true,
  conditionWords: "a multiselect question",  // not words: a condition error
});
