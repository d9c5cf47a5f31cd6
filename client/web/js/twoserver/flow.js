// The respondent page's two-server pieces (page.js calls them when the signed survey says
// collection = "two-server"): the plain-words explanation shown before anything is sent, the
// review, the ledger charges, the one sealed upload (built only on Send, from the page's random
// source), and the receipt. The upload is stored in the outbox like any submission and resent
// unchanged: it is never sharded again (fresh shares of the same answers could be combined).

import { el } from "../dom.js";
import { answerText } from "../form.js";
import { epsilonText, oddsFactor, reachText } from "../odds.js";
import { NOT_ASKED } from "../skip_logic.js";
import { PENDING } from "../store.js";
import { UPLOAD_PATH, buildUpload, crosstabKey, crosstabsSent, questionOf } from "./upload.js";

const hostOf = (url) => new URL(url).host;

/** The two organizations, as the respondent sees them: the leader's and the helper's hosts. */
export function organizations(verified, server) {
  const t = verified.twoServer;
  return { leader: hostOf(t.leaderUrl || server), helper: hostOf(t.helperUrl) };
}

/** Refuse (a message) when the signed leader is not the server this page talks to. */
export function leaderMismatch(verified, server) {
  const leader = verified.twoServer.leaderUrl;
  if (leader && leader.replace(/\/+$/, "") !== server) {
    return `The survey sends its answers to ${leader}, but this page can only talk to ` +
           `${server}; answer it from a page served by ${leader}.`;
  }
  return null;
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

function collusionWords(survey) {
  const local = survey.questions.filter((q) => q.local_epsilon != null);
  if (local.length === survey.questions.length) {
    const worst = Math.max(...local.map((q) => q.local_epsilon));
    return "If both organizations conspired, they could put your two halves together, but " +
           "your device randomizes every answer before splitting it: even then they could be " +
           `at most ${oddsFactor(worst)} times more sure of any one answer, for example from ` +
           `50% to ${reachText(worst)} (local ε0 up to ${epsilonText(worst)} per question).`;
  }
  if (local.length) {
    return "If both organizations conspired, they could put your two halves together and " +
           "read your answers to the questions your device does not randomize first (the " +
           "others stay randomized: local ε0 is shown with each question).";
  }
  return "If both organizations conspired, they could put your two halves together and read " +
         "your answers: this survey relies on them not doing so.";
}

/** The page's lead line (index.html speaks of the LDP mode) for a two-server survey. */
export const LEAD = "Your answers are split on this device into two sealed halves before " +
  "anything is sent. Neither organization alone ever sees a true answer.";

/** The explanation shown above the questions, before anything is sent. */
export function explanation(verified, server) {
  const { survey } = verified;
  const { leader, helper } = organizations(verified, server);
  const all = new Set(survey.questions.map((q) => q.id));
  const total = sum([...survey.questions.map((q) => q.central_epsilon),
                     ...crosstabsSent(survey, all).map(([, epsilon]) => epsilon)]);
  return [
    el("div", { class: "budget", id: "privacy" },
      el("p", {}, "Your answers are split on this device into two meaningless halves, one for " +
         `each of two organizations: ${leader} and ${helper}. Each half alone looks like ` +
         "random numbers. The organizations add up the halves of many respondents and each " +
         "adds its own random noise, so only a noisy total is ever revealed, never your " +
         "answers."),
      el("p", { id: "collusion" }, collusionWords(survey))),
    el("details", { class: "technical", id: "two-server-details" },
      el("summary", {}, "Details: two-server privacy"),
      el("p", {}, `Against ${leader}, ${helper} or the analyst alone, each question is ` +
         `protected by central differential privacy (ε per question shown with it; ` +
         `ε = ${epsilonText(total)} for the whole survey${(survey.crosstabs || []).length
           ? ", its declared crosstabs included" : ""}). The halves are encrypted to each ` +
         "organization's key as signed by the survey's designer; a proof sent with them " +
         "lets the two check that your answers are valid without seeing them.")),
  ];
}

/** What the two organizations could learn of this one answer if they worked together:
 * read it, when the device does not randomize it first (client/review.py
 * two_server_collusion, the same words). */
export function collusion(q, together) {
  return q.local_epsilon != null
    ? `Even ${together} could be at most ${oddsFactor(q.local_epsilon)} times more sure of ` +
      `this answer, for example from 50% to ${reachText(q.local_epsilon)}.`
    : `But ${together} could put the two halves back together and read this answer.`;
}

/** The hint under each question (form.js) in the two-server mode. */
export function hint(q) {
  const local = q.local_epsilon != null
    ? ` Your device also randomizes it first (local ε0 = ${epsilonText(q.local_epsilon)}).` : "";
  return `Only the noisy total of all answers to this question is revealed (central ε = ` +
         `${epsilonText(q.central_epsilon)}).${local} ` +
         collusion(q, "both organizations together") +
         (q.optional ? " Optional: skip it if you like (the organizations will see that you did)." : "");
}

/** The review: each answer (stays here until split) and what happens to it. */
export function reviewList(verified, answers, server) {
  const { leader, helper } = organizations(verified, server);
  const listed = verified.survey.questions.map((q, index) => [q, index])
    .filter(([q]) => answers.get(q.id) !== NOT_ASKED);  // said after the list (skip logic)
  return el("ol", { class: "review" }, listed.map(([q, index]) => {
    const answer = answers.get(q.id);
    if (answer === null || answer === undefined) {
      return el("li", {}, el("p", { class: "qtext" }, q.text),
        el("p", {}, "Skipped: nothing is sent for this question (the organizations see that " +
                    "it was skipped)."));
    }
    const how = q.local_epsilon != null
      ? `Your device will first randomize it, then split it into two halves, one for ` +
        `${leader} and one for ${helper}. Even if both conspired, they could be at most ` +
        `${oddsFactor(q.local_epsilon)} times more sure of your answer, for example from 50% ` +
        `to ${reachText(q.local_epsilon)} (ε0 = ${epsilonText(q.local_epsilon)}); apart, they ` +
        `see only a noisy total (central ε = ` +
        `${epsilonText(q.central_epsilon)}).`
      : `Your device will split it into two meaningless halves, one for ${leader} and one ` +
        `for ${helper}; only a noisy total over everyone is revealed (central ε = ` +
        `${epsilonText(q.central_epsilon)}). ${collusion(q, `${leader} and ${helper} together`)}`;
    return el("li", { value: index + 1 },
      el("p", { class: "qtext" }, q.text),
      el("p", { class: "mine" }, "Your answer: ", el("strong", {}, answerText(q, answer))),
      el("p", { class: "how" }, how));
  }));
}

/** The ledger's charges: central ε, with both guarantees written in the entry; a declared
 * crosstab both of whose questions are answered is a noisy release of its own (client/
 * two_server.py build_upload). */
export function charges(survey, answers) {
  const answered = new Set(survey.questions.filter((q) => answers.get(q.id) != null)
    .map((q) => q.id));
  const out = survey.questions.filter((q) => answered.has(q.id)).map((q) => ({
    question: q.id, epsilon: q.central_epsilon, series: null, tag: null, reused: false,
    collection: "two-server", central_epsilon: q.central_epsilon,
    local_epsilon: q.local_epsilon ?? "none" }));
  for (const [spec, epsilon] of crosstabsSent(survey, answered)) {
    const exposed = [spec.rows, spec.cols].some((id) => questionOf(survey, id).local_epsilon == null);
    out.push({ question: crosstabKey(spec), epsilon, series: null, tag: null, reused: false,
               collection: "two-server", central_epsilon: epsilon,
               local_epsilon: exposed ? "none" : 0, crosstab: [spec.rows, spec.cols] });
  }
  return out;
}

/** The outbox record of ONE sealed upload (drawn here, on Send, from `source`). */
export async function record(verified, answers, source, server) {
  const { survey } = verified;
  const plain = Object.fromEntries([...answers].filter(([, v]) => v !== null && v !== undefined));
  const upload = await buildUpload(survey, plain, { source });
  return { submission_id: upload.submissionId, survey_id: survey.id, server,
           path: `/${UPLOAD_PATH}`, body: upload.body, status: PENDING, attempts: 0,
           created: new Date().toISOString(), last_error: null };
}

/** How many answers and declared crosstabs (a "combination" of two answers, a noisy release of
 * its own) an upload holds, counted apart, each with its own singular or plural. */
export function includedSentence(answers, combinations) {
  if (combinations === 0) {
    return answers === 1 ? "1 answer was included" : `${answers} answers were included`;
  }
  if (answers === 1) {
    return combinations === 1 ? "1 answer and 1 combination were included"
      : `1 answer and ${combinations} combinations were included`;
  }
  return combinations === 1 ? `${answers} answers and 1 combination were included`
    : `${answers} answers and ${combinations} combinations were included`;
}

/** After Send: what left (or will leave) this device. */
export function receipt(verified, rec, server) {
  const { leader, helper } = organizations(verified, server);
  const keys = Object.keys(rec.body.public_shares);
  const crosstabs = new Set((verified.survey.crosstabs || []).map(crosstabKey));
  const combinations = keys.filter((key) => crosstabs.has(key)).length;
  return el("section", { id: "receipt", "aria-labelledby": "receipt-title" },
    el("h2", { id: "receipt-title" }, "What this device sent (split and sealed)"),
    el("p", {}, `Split and sealed once on this device on ${new Date(rec.created).toLocaleString()}: ` +
       `one half for ${leader}, one for ${helper}, both sent to ${leader}, which cannot open ` +
       `${helper}'s half. ${includedSentence(keys.length - combinations, combinations)}; ` +
       "a resend sends exactly these bytes again."),
    el("details", { class: "technical" },
      el("summary", {}, "Technical details"),
      el("p", {}, `Receipt ${rec.submission_id} (survey ${rec.survey_id}, version ` +
                  `${rec.body.version}), stored ${rec.created} (UTC). The exact bytes sent:`),
      el("pre", { class: "wire" }, JSON.stringify(rec.body, null, 2))));
}
