// Before sending: each answer, and in plain words the exact chances of what the device will
// send for it (nothing is drawn yet); after sending: each randomized report in plain words.

import { el } from "./dom.js";
import { answerText } from "./form.js";
import { pct, totalEpsilon } from "./mechanisms.js";
import { epsilonText, questionPrivacy } from "./odds.js";
import { notApplying } from "./skip_logic.js";
import { notAskedChances, skippedLines } from "./skip_review.js";

const LIST_ALL_UP_TO = 8;  // an ordinal question with at most this many options: every chance

const quote = (text) => `“${text}”`;
const yesNo = (value) => (value ? "‘yes’" : "‘no’");

/** What the device will send for this answer, with the exact chances, in plain words. */
export function chances(q, mechanism, answer) {
  if (mechanism.notAsked) {  // skip logic: options + "not asked" (skip_review.js)
    return notAskedChances(q, mechanism, answer) ?? mechanism.describe().text;
  }
  const d = mechanism.describe(answer);
  if (q.type === "multiselect") return d.text;
  if (mechanism.name === "binary_rr" || mechanism.name === "grr") {
    if (q.type === "binary") {
      return `Your device will send ${yesNo(answer)} (your real answer) with probability ` +
             `${pct(d.truthful)}, and ${yesNo(!answer)} with probability ${pct(d.other)}.`;
    }
    const others = q.options.length - 1;
    return `Your device will send ${quote(answer)} (your real answer) with probability ` +
           `${pct(d.truthful)}, otherwise one of the other ${others} options, each with ` +
           `probability ${pct(d.other)}.`;
  }
  if (mechanism.name === "geometric") return numberChances(q, answer, d);
  if (mechanism.name === "ordinal_exp" && q.options.length <= LIST_ALL_UP_TO) {
    const at = q.options.indexOf(answer);
    const weights = q.options.map((_, y) => d.stepFactor ** -Math.abs(at - y));
    const total = weights.reduce((a, b) => a + b, 0);
    return "Your device will send one of the options, the nearer to your real answer the " +
           "likelier: " + q.options.map((o, y) => `${quote(o)}${y === at ? " (yours)" : ""} ` +
                                                  `${pct(weights[y] / total)}`).join(", ") + ".";
  }
  return d.text;
}

function numberChances(q, answer, d) {
  const x = Number(answer);
  const same = d.unchanged;
  const next = (2 * same) / d.stepFactor;  // one step up or down, together
  const further = Math.max(0, 1 - same - next);
  return `Your device will add random noise to your number and send the result: ${x} itself ` +
         `with probability ${pct(same)}, ${x - 1} or ${x + 1} with probability ${pct(next)}, ` +
         `a number further away with probability ${pct(further)} (each further step is ` +
         `${stepWords(d.stepFactor)} less likely than the one before). The number sent can ` +
         `be below ${q.min} or above ${q.max}: that is the noise, as expected.`;
}

function stepWords(factor) {
  return factor < 1.0001 ? "very slightly" : `${factor.toPrecision(3)} times`;
}

/** The integer report's note when the noise took it outside the question's range. */
function outsideNote(q, report) {
  if (q.type !== "integer" || Array.isArray(report) || (report >= q.min && report <= q.max)) {
    return null;  // a pair (a question with a "not asked" value) says it in its own words
  }
  return ` (outside ${q.min} to ${q.max}: that is the random noise, as expected; it is what ` +
         "keeps your real number private, and the survey's results allow for it)";
}

function epsilonLine(q, charge) {
  if (q.disclosed === true) {
    return el("p", { class: "cost" }, "Disclosed: no ε, because it is not randomized; it " +
                                      "can help identify you.");
  }
  return el("p", { class: "cost" }, charge && charge.reused
    ? "Privacy spent: ε = 0 (the same answer as in an earlier round of this series: the " +
      "report this device kept for it is sent again, which reveals nothing new)"
    : questionPrivacy(q.epsilon));
}

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
      return el("li", {}, el("p", { class: "qtext" }, q.text),
        el("p", {}, "Skipped: nothing is sent for this question (the server sees that it " +
                    "was skipped). Privacy spent: ε = 0."));
    }
    return el("li", { value: index + 1 },
      el("p", { class: "qtext" }, q.text),
      el("p", { class: "mine" }, q.disclosed === true ? "Your answer (sent as you give it): "
        : "Your answer (stays on this device): ",
         el("strong", {}, answerText(q, answer))),
      el("p", { class: "how" }, chances(q, mechanisms.get(q.id), answer)),
      epsilonLine(q, charged.get(q.id)));
  }));
}

/** The review's words on the questions that do not apply (none: an empty list). */
export function skippedNotes(survey, values, plan) {
  const total = (questions) => epsilonText(totalEpsilon({ questions }));
  return skippedLines(survey.questions, values, (q) => notApplying(plan, q, values), total)
    .map((text) => el("p", { class: "skipped" }, text));
}

/** After sending: per question the randomized report the device stored and sent. */
export function sentList(survey, reports, mechanisms) {
  return el("ol", { class: "review sent" }, survey.questions.map((q) => {
    if (!Object.hasOwn(reports, q.id)) {
      return el("li", {}, el("p", { class: "qtext" }, q.text),
        el("p", {}, "Skipped: nothing was sent for it."));
    }
    const report = reports[q.id];
    return el("li", {},
      el("p", { class: "qtext" }, q.text),
      el("p", { class: "sent" }, "Your device sent: ",
         el("strong", {}, mechanisms.get(q.id).explainReport(report)), outsideNote(q, report)));
  }));
}
