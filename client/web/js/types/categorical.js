// A categorical question: one of its options (shared/question_types/categorical.py). Every
// default of QuestionType is a categorical question's; this unit names its mechanisms and
// signs its `filter` (cascading options: option_filter.js, which shows them).

import { QuestionType } from "./base.js";

class CategoricalType extends QuestionType {
  /** Its keys of the canonical dict: a filter (option_filter.js) only when it has one. */
  canonical(q, disclosed) {
    const d = super.canonical(q, disclosed);
    if (q.filter != null) d.filter = q.filter;
    return d;
  }
}

export default new CategoricalType({
  name: "categorical",
  mechanisms: ["grr", "oue", "sue", "olh", "hr", "ss",
               "forced_response", "unrelated_question", "matrix"],  // and the named designs
  notAskedMechanisms: ["grr", "hr"],
  conditionKind: "text",
  filterReads: true,
  takesFilter: true,
  conditionWords: "a categorical question",  // not words: a condition error
});
