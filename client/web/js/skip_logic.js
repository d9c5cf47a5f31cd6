// Skip logic on the page: the twin of shared/skip_logic.py. Which questions apply given the
// answers so far, and what the device randomizes for the others: a question whose condition
// reads a randomized answer is always sent, as a randomized "not asked" when it does not apply
// (docs/skip-logic.md); one whose condition reads disclosed answers only sends nothing then.

import { loaded } from "./optional.js";  // conditions.js, for surveys with skip logic only
import { unitOf } from "./types/index.js";

export const NOT_ASKED = "(not asked)";  // not words: the value sent, never shown
export const MAX_NOT_ASKED_OPTIONS = 1025;
// The mechanisms a question with a "not asked" value may name (skip_logic.NAMED_NOT_ASKED) are
// its unit's `notAskedMechanisms` (js/types/).

/** A signed survey whose skip logic shared/ would refuse. */
export class SkipMismatch extends Error {
  constructor(message) { super(message); this.name = "SkipMismatch"; }
}

/** Whether any question of the survey has a condition (then the skip modules are loaded). */
export const hasConditions = (survey) => survey.questions.some((q) => q.relevant !== undefined);

/**
 * Each question's skip logic: Map(question id -> {condition, notAsked}), `condition` null
 * without `relevant`. Throws SkipMismatch for a condition that does not parse or a
 * combination shared/skip_logic.py refuses.
 */
export function skipPlan(survey) {
  const plan = new Map();
  const byId = new Map(survey.questions.map((q) => [q.id, q]));
  survey.questions.forEach((q, index) => {
    if (q.relevant === undefined) {
      plan.set(q.id, { condition: null, notAsked: false });
      return;
    }
    const { ConditionError, parseCondition } = loaded("conditions");
    let condition;
    try {
      if (typeof q.relevant !== "string") throw new ConditionError("syntax", 0, "not text");
      condition = parseCondition(q.relevant, survey.questions, index);
    } catch (err) {
      if (!(err instanceof ConditionError)) throw err;
      throw new SkipMismatch(`the condition of question “${q.text}” is not valid: ${err.message}`);
    }
    const hidden = condition.references.some(
      (id) => byId.get(id).disclosed === true ? plan.get(id).notAsked : true);
    // a question whose type has no "not asked" value (location) cannot be hidden either
    if (hidden && (q.disclosed === true || q.optional === true ||
                   !unitOf(q).notAskedMechanisms.length)) {
      throw new SkipMismatch(`question “${q.text}” depends on randomized answers, which a ` +
                             "disclosed, optional or location question cannot");
    }
    plan.set(q.id, { condition, notAsked: hidden });
  });
  return plan;
}

/** Whether a question is asked, given the answers so far (a Map; not asked ones absent). */
export function applies(plan, q, answers) {
  const entry = plan.get(q.id);
  return !entry || entry.condition === null || entry.condition.evaluate(answers);
}

/**
 * The values the device randomizes, Map(question id -> value): each applicable answer (a
 * skipped optional one left out), NOT_ASKED for each question that does not apply and has a
 * "not asked" value, nothing for one that does not apply otherwise (resolve_answers).
 */
export function resolveAnswers(survey, plan, answers) {
  const known = new Map();
  const out = new Map();
  for (const q of survey.questions) {
    const value = answers.get(q.id);
    if (!applies(plan, q, known)) {
      if (plan.get(q.id).notAsked) out.set(q.id, NOT_ASKED);
      continue;
    }
    if (value === null || value === undefined) continue;
    out.set(q.id, value);
    known.set(q.id, value);
  }
  return out;
}

/** The values without NOT_ASKED: what conditions read (not asked = missing). */
export function askedValues(values) {
  return new Map([...values].filter(([, v]) => v !== NOT_ASKED));
}

/** Whether the review leaves a question out of its list: it does not apply (`values` as
 * resolveAnswers gives them). */
export function notApplying(plan, q, values) {
  if (values.get(q.id) === NOT_ASKED) return true;
  const entry = plan.get(q.id);
  return !values.has(q.id) && entry !== undefined && entry.condition !== null &&
    !entry.condition.evaluate(askedValues(values));
}

const notAskedCache = new WeakMap();

/** The ids of a verified survey's questions with a "not asked" value (cached per survey). */
export function notAskedIds(survey) {
  let ids = notAskedCache.get(survey);
  if (ids === undefined) {
    ids = new Set([...skipPlan(survey)].filter(([, e]) => e.notAsked).map(([id]) => id));
    notAskedCache.set(survey, ids);
  }
  return ids;
}
