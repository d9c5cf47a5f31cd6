// A categorical question: one of its options (shared/question_types/categorical.py). Every
// default of QuestionType is a categorical question's; this unit only names its mechanisms.

import { QuestionType } from "./base.js";

export default new QuestionType({
  name: "categorical",
  mechanisms: ["grr", "oue", "sue", "olh", "hr", "ss",
               "forced_response", "unrelated_question", "matrix"],  // and the named designs
  notAskedMechanisms: ["grr", "hr"],
  conditionKind: "text",
  conditionWords: "a categorical question",  // not words: a condition error
});
