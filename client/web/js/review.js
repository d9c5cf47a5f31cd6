// Before anything is sent: each randomized report in plain words, how it was randomized, and
// the ε it spends; after sending, what the server acknowledged.

import { el } from "./dom.js";
import { answerText } from "./form.js";
import { g } from "./manifest.js";

/** One list item per question: the true answer (stays here), the report, how, and the ε
 * charged (0 for an answer a series already charged). */
export function reviewList(survey, answers, { reports, charges }, mechanisms) {
  const charged = new Map(charges.map((c) => [c.question, c]));
  return el("ol", { class: "review" }, survey.questions.map((q) => {
    const answer = answers.get(q.id);
    if (answer === null || answer === undefined) {
      return el("li", {}, el("p", { class: "qtext" }, q.text),
        el("p", {}, "Skipped: nothing is sent for this question (the server sees that it " +
                    "was skipped). ε spent: 0."));
    }
    const report = reports[q.id];
    const mechanism = mechanisms.get(q.id);
    return el("li", {},
      el("p", { class: "qtext" }, q.text),
      el("p", { class: "mine" }, "Your answer (stays on this device): ",
         el("strong", {}, answerText(q, answer))),
      el("p", { class: "sent" }, "Your device will send: ",
         el("strong", {}, mechanism.explainReport(report)), " ",
         el("code", {}, JSON.stringify(report))),
      el("p", { class: "how" }, mechanism.describe().text),
      el("p", { class: "cost" }, charged.get(q.id).reused
        ? "ε spent: 0 (the same answer as in an earlier round of this series: its memoized " +
          "report is sent again, which reveals nothing new)"
        : `ε spent: ${g(q.epsilon)}`));
  }));
}
