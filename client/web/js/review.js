// Before sending: each answer, and in plain words the exact chances of what the device will
// send for it (nothing is drawn yet); after sending: each randomized report in plain words.

import { el } from "./dom.js";
import { answerText } from "./form.js";
import { t, tNodes } from "./i18n.js";
import { totalEpsilon } from "./mechanisms.js";
import { epsilonText, questionPrivacy } from "./odds.js";
import { hasPipes, loaded } from "./optional.js";  // skip_review.js, piping.js: when needed
import { questionOf, shown } from "./shown.js";
import { hasConditions, notApplying } from "./skip_logic.js";
import { unitOf } from "./types/index.js";

/** What the device will send for this answer, with the exact chances, in plain words (the
 * question type's words, js/types/). */
export function chances(q, mechanism, answer) {
  if (mechanism.extended) {  // options + special values + "not asked" (skip_review.js)
    return loaded("skipReview").notAskedChances(q, mechanism, answer) ?? mechanism.describe().text;
  }
  return unitOf(q).chances(q, mechanism, answer);
}

function epsilonLine(q, charge) {
  return el("p", { class: "cost" }, q.disclosed === true ? t("review.disclosedCost")
    : charge && charge.reused ? t("review.reused") : questionPrivacy(q.epsilon));
}

// piped: the review writes the answers in (piping.js pipeAnswers); after sending, the sent
// list shows the fallback, as the stored receipt keeps no true answer
const qtext = (q) => el("p", { class: "qtext" }, shown(questionOf(q), true));

/** The review before sending: per question the true answer (stays here), what sending it
 * means with the exact chances, and the ε charged (0 for an answer a series already
 * charged). No report exists yet. With a skip `plan`, `answers` are what the device
 * randomizes (skip_logic.js resolveAnswers) and only the questions that apply are listed
 * (numbered as in the form); `skippedNotes` says what happens to the others. */
export function reviewList(survey, answers, charges, mechanisms, plan = null) {
  const charged = new Map(charges.map((c) => [c.question, c]));
  const listed = survey.questions.map((q, index) => [q, index])
    .filter(([q]) => plan === null || !notApplying(plan, q, answers));
  const list = el("ol", { class: "review" }, listed.map(([q, index]) => {
    const answer = answers.get(q.id);
    if (answer === null || answer === undefined) {
      return el("li", {}, qtext(q), el("p", {}, t("review.skipped")));
    }
    return el("li", { value: index + 1 }, qtext(q),
      el("p", { class: "mine" }, tNodes(q.disclosed === true ? "review.mineDisclosed"
        : "review.mine", { answer: el("strong", {}, answerText(q, answer)) })),
      el("p", { class: "how" }, chances(q, mechanisms.get(q.id), answer)),
      epsilonLine(q, charged.get(q.id)));
  }));
  if (hasPipes(survey)) loaded("piping").pipeAnswers(list, survey, answers);
  return list;
}

/** The review's words on the questions that do not apply (none: an empty list). */
export function skippedNotes(survey, values, plan) {
  if (!hasConditions(survey)) return [];
  const total = (questions) => epsilonText(totalEpsilon({ questions }));
  return loaded("skipReview").skippedLines(survey.questions, values,
                                           (q) => notApplying(plan, q, values), total)
    .map((text) => el("p", { class: "skipped" }, text));
}

/** After storing: per question the report the device stored, randomized, and sent (`sent`)
 * or will send once delivered (a submission still waiting offline); a disclosed answer is
 * said to be sent as given, not randomized; an integer report the noise took outside the
 * question's range is said to be expected noise. */
export function sentList(survey, reports, mechanisms, sent = true) {
  const said = sent ? "yes" : "no";
  return el("ol", { class: "review sent" }, survey.questions.map((q) => {
    if (!Object.hasOwn(reports, q.id)) {
      return el("li", {}, qtext(q), el("p", {}, t("review.sentSkipped")));
    }
    const report = reports[q.id];
    // a pair (a question with a "not asked" value) says it in its own words
    const outside = q.disclosed !== true && unitOf(q).reportOutside(q, report);
    const key = q.disclosed === true ? "review.sentDisclosed"
      : outside ? "review.sentOutside" : "review.sent";
    return el("li", {}, qtext(q),
      el("p", { class: "sent" }, tNodes(key, {
        report: el("strong", {}, mechanisms.get(q.id).explainReport(report)),
        min: q.min, max: q.max, sent: said })));
  }));
}
