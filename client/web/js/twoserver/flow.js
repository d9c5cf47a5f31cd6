// The respondent page's two-server pieces (page.js calls them when the signed survey says
// collection = "two-server"): the plain-words explanation shown before anything is sent, the
// review, the ledger charges, the one sealed upload (built only on Send, from the page's random
// source), and the receipt. The upload is stored in the outbox like any submission and resent
// unchanged: it is never sharded again (fresh shares of the same answers could be combined).

import { el } from "../dom.js";
import { answerText } from "../form.js";
import { N, t, tNodes, wordsLocale } from "../i18n.js";
import { epsilonText, oddsParams } from "../odds.js";
import { questionOf, shown } from "../shown.js";
import { NOT_ASKED } from "../skip_logic.js";
import { PENDING, SENT } from "../store.js";
import { hasPipes, loaded } from "../optional.js";  // upload.js (Prio3, HPKE), piping.js
import { crosstabKey, crosstabsSent, questionOf as ofSurvey } from "./crosstabs.js";

const hostOf = (url) => new URL(url).host;
const eps = (epsilon) => N(epsilonText(epsilon));

/** The two organizations, as the respondent sees them: the leader's and the helper's hosts. */
export function organizations(verified, server) {
  const t2 = verified.twoServer;
  return { leader: hostOf(t2.leaderUrl || server), helper: hostOf(t2.helperUrl) };
}

/** Refuse (a message) when the signed leader is not the server this page talks to. */
export function leaderMismatch(verified, server) {
  const leader = verified.twoServer.leaderUrl;
  if (leader && leader.replace(/\/+$/, "") !== server) {
    return t("two.leaderMismatch", { leader, server });
  }
  return null;
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

function collusionWords(survey) {
  const local = survey.questions.filter((q) => q.local_epsilon != null);
  if (local.length === survey.questions.length) {
    const worst = Math.max(...local.map((q) => q.local_epsilon));
    return t("two.collusionLocal", { ...oddsParams(worst), epsilon: eps(worst) });
  }
  return t(local.length ? "two.collusionSome" : "two.collusionNone");
}

/** The explanation shown above the questions, before anything is sent. */
export function explanation(verified, server) {
  const { survey } = verified;
  const { leader, helper } = organizations(verified, server);
  const all = new Set(survey.questions.map((q) => q.id));
  const total = sum([...survey.questions.map((q) => q.central_epsilon),
                     ...crosstabsSent(survey, all).map(([, epsilon]) => epsilon)]);
  return [
    el("div", { class: "budget", id: "privacy" },
      el("p", {}, t("two.split", { leader, helper })),
      el("p", { id: "collusion" }, collusionWords(survey))),
    el("details", { class: "technical", id: "two-server-details" },
      el("summary", {}, t("two.detailsSummary")),
      el("p", {}, t("two.details", { leader, helper, total: eps(total),
                                     crosstabs: (survey.crosstabs || []).length ? "yes" : "no" }))),
  ];
}

/** What the two organizations could learn of this one answer if they worked together: read
 * it, when the device does not randomize it first (client/review.py two_server_collusion, the
 * same words); `pair` names them ({leader, helper}), else "both organizations". */
export function collusion(q, pair = null) {
  const local = q.local_epsilon != null;
  return t(pair ? (local ? "two.collusionPairLocal" : "two.collusionPair")
    : local ? "two.collusionBothLocal" : "two.collusionBoth",
  { ...pair, ...(local ? oddsParams(q.local_epsilon) : {}) });
}

/** The hint under each question (form.js) in the two-server mode. */
export function hint(q) {
  return [t("two.hint", { central: eps(q.central_epsilon) }),
    q.local_epsilon != null ? t("two.hintLocal", { local: eps(q.local_epsilon) }) : null,
    collusion(q), q.optional ? t("two.optional") : null].filter(Boolean).join(" ");
}

/** The review: each answer (stays here until split) and what happens to it. */
export function reviewList(verified, answers, server) {
  const pair = organizations(verified, server);
  const listed = verified.survey.questions.map((q, index) => [q, index])
    .filter(([q]) => answers.get(q.id) !== NOT_ASKED);  // said after the list (skip logic)
  const list = el("ol", { class: "review" }, listed.map(([q, index]) => {
    const answer = answers.get(q.id);
    const qtext = el("p", { class: "qtext" }, shown(questionOf(q), true));
    if (answer === null || answer === undefined) {
      return el("li", {}, qtext, el("p", {}, t("two.skipped")));
    }
    const how = q.local_epsilon != null
      ? t("two.howLocal", { ...pair, ...oddsParams(q.local_epsilon), local: eps(q.local_epsilon),
                           central: eps(q.central_epsilon) })
      : t("two.how", { ...pair, central: eps(q.central_epsilon) });
    return el("li", { value: index + 1 }, qtext,
      el("p", { class: "mine" }, tNodes("two.mine", { answer: el("strong", {}, answerText(q, answer)) })),
      el("p", { class: "how" }, how));
  }));
  if (hasPipes(verified.survey)) {  // piped texts: the answers, on this device
    loaded("piping").pipeAnswers(list, verified.survey, answers);
  }
  return list;
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
    const exposed = [spec.rows, spec.cols].some((id) => ofSurvey(survey, id).local_epsilon == null);
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
  const { UPLOAD_PATH, buildUpload } = loaded("twoServerUpload");
  const upload = await buildUpload(survey, plain, { source });
  return { submission_id: upload.submissionId, survey_id: survey.id, server,
           path: `/${UPLOAD_PATH}`, body: upload.body, status: PENDING, attempts: 0,
           created: new Date().toISOString(), last_error: null };
}

/** How many answers and declared crosstabs (a "combination" of two answers, a noisy release of
 * its own) an upload holds, counted apart, each with its own singular or plural. */
export function includedSentence(answers, combinations) {
  return t("two.included", { answers, combinations });
}

/** After Send: what left (or will leave) this device. */
export function receipt(verified, rec, server) {
  const { leader, helper } = organizations(verified, server);
  const keys = Object.keys(rec.body.public_shares);
  const crosstabs = new Set((verified.survey.crosstabs || []).map(crosstabKey));
  const combinations = keys.filter((key) => crosstabs.has(key)).length;
  return el("section", { id: "receipt", "aria-labelledby": "receipt-title" },
    el("h2", { id: "receipt-title" }, t("two.receiptTitle", {
      sent: rec.status === SENT ? "yes" : "no" })),
    el("p", {}, t("two.receipt", { time: new Date(rec.created).toLocaleString(wordsLocale()),
                                   leader, helper,
                                   included: includedSentence(keys.length - combinations,
                                                              combinations) })),
    el("details", { class: "technical" },
      el("summary", {}, t("page.technical")),
      el("p", {}, t("receipt.details", { id: rec.submission_id, survey: rec.survey_id,
                                         version: rec.body.version, created: rec.created })),
      el("pre", { class: "wire" }, JSON.stringify(rec.body, null, 2))));
}
