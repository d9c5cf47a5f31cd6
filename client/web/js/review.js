// Before sending: each answer, and in plain words the exact chances of what the device will
// send for it (nothing is drawn yet); after sending: each randomized report in plain words.

import { el } from "./dom.js";
import { answerText } from "./form.js";
import { quoted, t, tNodes } from "./i18n.js";
import { P, stepWords, totalEpsilon } from "./mechanisms.js";
import { epsilonText, questionPrivacy } from "./odds.js";
import { loaded } from "./optional.js";  // skip_review.js: for skip logic only
import { optionText, questionOf, shown } from "./shown.js";
import { hasConditions, notApplying } from "./skip_logic.js";

const LIST_ALL_UP_TO = 8;  // an ordinal question with at most this many options: every chance

const yesNo = (value) => t(value ? "word.yesQuoted" : "word.noQuoted");

/** What the device will send for this answer, with the exact chances, in plain words. */
export function chances(q, mechanism, answer) {
  if (mechanism.notAsked) {  // skip logic: options + "not asked" (skip_review.js)
    return loaded("skipReview").notAskedChances(q, mechanism, answer) ?? mechanism.describe().text;
  }
  const d = mechanism.describe(answer);
  if (q.type === "multiselect") return d.text;
  if (mechanism.name === "binary_rr" || mechanism.name === "grr") {
    if (q.type === "binary") {
      return t("review.binary", { answer: yesNo(answer), other: yesNo(!answer),
                                  p: P(d.truthful), q: P(d.other) });
    }
    return t("review.grr", { answer: quoted(optionText(q, answer)), p: P(d.truthful),
                             others: q.options.length - 1, q: P(d.other) });
  }
  if (mechanism.name === "geometric") return numberChances(q, answer, d);
  if (mechanism.name === "ordinal_exp" && q.options.length <= LIST_ALL_UP_TO) {
    const at = q.options.indexOf(answer);
    const weights = q.options.map((_, y) => d.stepFactor ** -Math.abs(at - y));
    const total = weights.reduce((a, b) => a + b, 0);
    return t("review.ordinal", { list: q.options.map((o, y) => t(
      y === at ? "review.ordinalYours" : "review.ordinalOther",
      { option: quoted(optionText(q, o)), p: P(weights[y] / total) })).join(", ") });
  }
  return d.text;
}

/** The noise on a number, its parameters for the sentences that say it (review.number and
 * skip_review.js's asked_geometric): chances of x itself, of x ± 1, of further away. */
export function noiseParams(q, x, same, stepFactor) {
  const next = (2 * same) / stepFactor;  // one step up or down, together
  return { x, below: x - 1, above: x + 1, same: P(same), next: P(next),
           further: P(Math.max(0, 1 - same - next)), step: stepWords(stepFactor),
           min: q.min, max: q.max };
}

function numberChances(q, answer, d) {
  return t("review.number", noiseParams(q, Number(answer), d.unchanged, d.stepFactor));
}

function epsilonLine(q, charge) {
  return el("p", { class: "cost" }, q.disclosed === true ? t("review.disclosedCost")
    : charge && charge.reused ? t("review.reused") : questionPrivacy(q.epsilon));
}

const qtext = (q) => el("p", { class: "qtext" }, shown(questionOf(q)));

/** The review before sending: per question the true answer (stays here), what sending it
 * means with the exact chances, and the ε charged (0 for an answer a series already
 * charged). No report exists yet. With a skip `plan`, `answers` are what the device
 * randomizes (skip_logic.js resolveAnswers) and only the questions that apply are listed
 * (numbered as in the form); `skippedNotes` says what happens to the others. */
export function reviewList(survey, answers, charges, mechanisms, plan = null) {
  const charged = new Map(charges.map((c) => [c.question, c]));
  const listed = survey.questions.map((q, index) => [q, index])
    .filter(([q]) => plan === null || !notApplying(plan, q, answers));
  return el("ol", { class: "review" }, listed.map(([q, index]) => {
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
    const outside = q.disclosed !== true && q.type === "integer" && !Array.isArray(report) &&
      (report < q.min || report > q.max);
    const key = q.disclosed === true ? "review.sentDisclosed"
      : outside ? "review.sentOutside" : "review.sent";
    return el("li", {}, qtext(q),
      el("p", { class: "sent" }, tNodes(key, {
        report: el("strong", {}, mechanisms.get(q.id).explainReport(report)),
        min: q.min, max: q.max, sent: said })));
  }));
}
