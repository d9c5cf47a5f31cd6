// The respondent page: verify the survey, ask, review the answers and what sending means, and
// only on Send randomize on this device, store (ledger + outbox) and send. Nothing is
// randomized before every check passed, and nothing is randomized for the review (see send()).

import { CorsRefused, Unreachable, fetchSurvey } from "./api.js";
import { compositionDetails } from "./composition.js";
import { config } from "./config.js";
import { el, replace } from "./dom.js";
import { readAnswers, renderForm } from "./form.js";
import { DEFAULT_MAX_EPSILON, Refusal, verifyDocument } from "./manifest.js";
import { totalEpsilon } from "./mechanisms.js";
import { deliver, flush } from "./outbox.js";
import { capitalized, epsilonText, oddsSentence } from "./odds.js";
import { reviewList, sentList, skippedNotes } from "./review.js";
import { resolveAnswers } from "./skip_logic.js";
import { twoServerSkippedLines } from "./skip_review.js";
import { AlreadyAnswered, FAILED, PENDING, SENT, StorageUnavailable, answered, chargedEpsilons,
         chargedTags, deviceSecret, getRecord, recordSubmission } from "./store.js";
import { checkTrust } from "./trust.js";
import { loaded } from "./optional.js";

const RETRY_SECONDS = 30;

/** How many questions of a survey are disclosed (sent as given, not randomized). */
const disclosedCount = (survey) => survey.questions.filter((q) => q.disclosed === true).length;
const titleEl = document.getElementById("title");
const statusEl = document.getElementById("status");
const contentEl = document.getElementById("content");

/** Where the survey comes from: the exported page's pinned config, or this page's own URL. */
export function target(cfg, loc) {
  if (cfg.server) {
    return { server: cfg.server.replace(/\/+$/, ""), surveyId: cfg.survey,
             fingerprint: cfg.fingerprint || null,
             maxEpsilon: cfg.maxEpsilon ?? DEFAULT_MAX_EPSILON };
  }
  const segments = loc.pathname.split("/").filter(Boolean);
  return { server: loc.origin, surveyId: decodeURIComponent(segments.at(-1) || ""),
           fingerprint: null, maxEpsilon: DEFAULT_MAX_EPSILON };
}

const where = target(config, window.location);
let randomSource = null;  // start() sets it: every report's noise comes from it
let twoServer = null;  // twoserver/flow.js, loaded (optional.js) for a two-server survey only

function status(...children) {
  replace(statusEl, el("p", {}, ...children));
}

function focusTitle(text) {
  titleEl.textContent = text;
  titleEl.focus();
}

function refuse(message) {
  document.body.dataset.state = "refused";
  focusTitle("This survey cannot be answered here");
  replace(statusEl, el("div", { class: "refusal", role: "alert" },
    el("p", {}, message),
    el("p", {}, "Nothing was randomized or sent.")));
  replace(contentEl);
}

function deliveryText(record) {
  if (record.status === SENT) {
    return record.duplicate ? "Sent: the server already had it (an earlier attempt arrived)."
      : "Sent: the server acknowledged it.";
  }
  if (record.status === FAILED) {
    return `The server refused it: ${record.last_error}. It is kept on this device.`;
  }
  return "Saved on this device, not delivered yet" +
    (record.last_error ? ` (${record.last_error})` : "") +
    ". It will be sent when the connection is back, without being randomized again; " +
    "you can close this page and come back later.";
}

function showDelivery(record) {
  document.body.dataset.delivery = record.status;
  const retry = record.status === PENDING
    ? el("button", { type: "button", id: "retry", onclick: () => retryNow(record) },
         "Try sending now") : null;
  replace(statusEl, el("p", { id: "delivery" }, deliveryText(record)), retry);
}

async function retryNow(record) {
  status("Sending…");
  const fresh = await getRecord(record.submission_id);
  showDelivery(fresh.status === PENDING ? await deliver(fresh) : fresh);
}

/** Keep trying the pending ones: when the browser comes back online, and now and then. */
function keepDelivering(submissionId) {
  const again = async () => {
    const results = await flush(where.server);
    const mine = results.find((r) => r && r.submission_id === submissionId);
    if (mine) showDelivery(mine);
  };
  window.addEventListener("online", again);
  setInterval(again, RETRY_SECONDS * 1000);
}

function receipt(verified, record) {
  if (verified.twoServer) return twoServer.receipt(verified, record, where.server);
  return el("section", { id: "receipt", "aria-labelledby": "receipt-title" },
    el("h2", { id: "receipt-title" }, "What this device sent (randomized)"),
    el("p", {}, `Randomized once and stored on this device on ` +
                `${new Date(record.created).toLocaleString()}. A report may differ from your ` +
                "answer: that is the randomization protecting you, and it is never redrawn."),
    sentList(verified.survey, record.body.answers, verified.mechanisms),
    el("details", { class: "technical" },
      el("summary", {}, "Technical details"),
      el("p", {}, `Receipt ${record.submission_id} (survey ${record.survey_id}, version ` +
                  `${record.body.version}), stored ${record.created} (UTC). The exact bytes ` +
                  "sent:"),
      el("pre", { class: "wire" }, JSON.stringify(record.body, null, 2))));
}

async function alreadyAnswered(verified, entry) {
  document.body.dataset.state = "answered";
  const record = await getRecord(entry.submission_id);
  replace(contentEl,
    el("p", { class: "notice" }, `You already answered this survey (version ${entry.version})` +
       ` in this browser on ${new Date(entry.time).toLocaleString()}. Answering again would ` +
       "spend its privacy budget twice, so this page will not. (Clearing this site's data in " +
       "the browser forgets this, and the signing key this page remembered.)"),
    record ? receipt(verified, record) : null);
  if (record) {
    showDelivery(record.status === PENDING ? await deliver(record) : record);
    keepDelivering(record.submission_id);
  } else {
    replace(statusEl);
  }
}

/** What each answered question costs the ledger. In a series, an answer whose keyed tag was
 * charged before costs nothing more (the ledger decides again when it records). Draws no
 * report randomness: the review can be shown as often as the respondent likes. */
async function chargesFor(verified, answers) {
  const { survey, mechanisms } = verified;
  const series = survey.series ?? null;
  const memo = series === null ? undefined : { secret: await deviceSecret(), series };
  const known = memo ? await chargedTags() : new Set();
  const charges = [];
  for (const q of survey.questions) {
    const answer = answers.get(q.id);
    if (answer === null || answer === undefined) continue;
    const tag = memo ? mechanisms.get(q.id).answerTag(answer, memo) : null;
    const reused = tag !== null && known.has(`${series} ${q.id} ${tag}`);
    charges.push({ question: q.id, epsilon: q.disclosed === true ? 0 : q.epsilon, series, tag,
                   reused, ...(q.disclosed === true ? { disclosed: true } : {}) });
  }
  return { charges, memo };
}

/** The randomized reports: exactly one draw per answered question, made only by send(). In a
 * series the permanent value is memoized under the device secret (mechanisms.js). */
function draw(verified, answers, memo) {
  const reports = {};
  for (const q of verified.survey.questions) {
    const answer = answers.get(q.id);
    if (answer === null || answer === undefined) continue;
    reports[q.id] = verified.mechanisms.get(q.id).perturb(answer, randomSource, memo);
  }
  return reports;
}

/**
 * Randomize, store, then show. The draw happens here and nowhere else: after Send is pressed,
 * never for the review. The drawn reports go into the ledger and the outbox in one durable
 * transaction before the respondent sees them, so no report a respondent has seen can be
 * replaced by a fresh draw (re-rolling until the device says "no" would make the report chosen,
 * not random). A draw that is not stored (another tab answered first, storage failed) is
 * dropped unseen.
 */
async function send(verified, answers, buttons) {
  for (const button of buttons) button.disabled = true;
  const { survey } = verified;
  let charges;
  let record;
  if (verified.twoServer) {  // one sealed upload, split on this device (twoserver/flow.js)
    charges = twoServer.charges(survey, answers);
    record = await twoServer.record(verified, answers, randomSource, where.server);
  } else {
    const { charges: ldpCharges, memo } = await chargesFor(verified, answers);
    charges = ldpCharges;
    const body = { submission_id: crypto.randomUUID(), version: survey.version,
                   answers: draw(verified, answers, memo) };
    record = { submission_id: body.submission_id, survey_id: survey.id,
               server: where.server, body, status: PENDING, attempts: 0,
               created: new Date().toISOString(), last_error: null };
  }
  try {
    await recordSubmission({ survey: survey.id, version: survey.version, record, charges,
                             sha256: verified.sha256 });
  } catch (err) {
    if (err instanceof AlreadyAnswered) return alreadyAnswered(verified, err.record);
    throw err;
  }
  answers.clear();
  focusTitle("Thank you");
  replace(contentEl, receipt(verified, record));
  status("Sending…");
  showDelivery(await deliver(record));
  keepDelivering(record.submission_id);
}

function review(verified, form) {
  const read = readAnswers(form, verified.survey, verified.skip);
  if (read.firstError) {
    status("Some answers need attention.");
    read.firstError.focus();
    return;
  }
  // Skip logic: what the device randomizes, a randomized "not asked" for each question that
  // does not apply and depends on randomized answers (skip_logic.js).
  const answers = resolveAnswers(verified.survey, verified.skip, read.answers);
  const charged = verified.twoServer ? Promise.resolve({ charges: twoServer.charges(
    verified.survey, answers) }) : chargesFor(verified, answers);
  Promise.all([charged, chargedEpsilons()]).then(([{ charges }, before]) => {
    // the odds come from the exact total, never from its rounded display (4.49998 shown as
    // "4.5" would say "91 times" where the top of the page says 90)
    const exact = totalEpsilon({ questions: charges.map(
      (c) => ({ epsilon: c.reused ? 0 : c.epsilon })) });
    const total = epsilonText(exact);
    const sendButton = el("button", { type: "button", class: "primary", id: "send" }, "Send");
    const back = el("button", { type: "button", id: "edit" }, "Change my answers");
    sendButton.addEventListener("click", () =>
      send(verified, answers, [sendButton, back]).catch(fail));
    back.addEventListener("click", () => {  // nothing was drawn yet: nothing to drop
      section.remove();
      form.hidden = false;
      status("");
      form.querySelector("input, select").focus();
    });
    const section = el("section", { id: "review", "aria-labelledby": "review-title" },
      el("h2", { id: "review-title", tabindex: "-1" }, "Before you send"),
      ...(verified.twoServer ? [
        el("p", {}, "Nothing has been split or sent yet. When you press Send, your device " +
                    "splits your answers once into two sealed halves, keeps them, and sends " +
                    "only those."),
        twoServer.reviewList(verified, answers, where.server),
        ...twoServerSkippedLines(verified.survey.questions, answers)
          .map((text) => el("p", { class: "skipped" }, text)),
        el("p", { class: "total" }, `Only noisy totals are revealed: central ε = ${total} in ` +
                                    `total; this page's limit is ε = ${epsilonText(where.maxEpsilon)}.`),
      ] : [
        el("p", {}, "Nothing has been randomized yet. When you press Send, your device " +
                    "randomizes each answer once, keeps the result, and sends only that; " +
                    (disclosedCount(verified.survey) ?
                      "your true answers never leave this device, except the disclosed ones, " +
                      "which are sent as you give them." :
                      "your true answers never leave this device.")),
        reviewList(verified.survey, answers, charges, verified.mechanisms, verified.skip),
        ...skippedNotes(verified.survey, answers, verified.skip),
        el("p", { class: "total" }, `In total, ${oddsSentence(exact)} (ε = ${total} ` +
                                    `in total; this page's limit is ε = ${epsilonText(where.maxEpsilon)}).`),
      ]),
      el("div", { class: "actions" }, sendButton, back),
      compositionDetails(before, charges.map((c) => (c.reused ? 0 : c.epsilon))));
    form.hidden = true;
    contentEl.append(section);
    status("Check your answers and what sending means, then send.");
    section.querySelector("h2").focus();
  }).catch(fail);
}

function fail(err) {
  if (err instanceof Refusal) return refuse(err.message);
  if (err instanceof StorageUnavailable) {
    return refuse(`This page cannot answer here: ${err.message}, so it could not keep your ` +
                  "privacy ledger or resend a lost submission. Try a normal (not private) " +
                  "window or another browser.");
  }
  console.error(err);
  document.body.dataset.state = "error";
  replace(statusEl, el("p", { role: "alert" }, `Something went wrong: ${err.message}`));
}

async function main() {
  if (!where.surveyId) return refuse("This page's address names no survey.");
  flush(where.server).catch(() => {});  // earlier submissions still waiting
  let doc;
  try {
    doc = await fetchSurvey(where.server, where.surveyId);
  } catch (err) {
    if (err instanceof CorsRefused) {
      document.body.dataset.state = "cors";
      focusTitle("This page is not allowed to reach its survey server");
      replace(statusEl, el("div", { class: "refusal", role: "alert" },
        el("p", {}, `Cannot load the survey: ${err.message}. Nothing was randomized or sent.`),
        el("p", {}, "What the survey's operator must do: restart the survey server with ",
           el("code", {}, `ldpsurvey serve … --allow-origin ${window.location.origin}`),
           " (the address this page is served from), then reload this page.")));
      return;
    }
    if (err instanceof Unreachable) {
      document.body.dataset.state = "offline";
      replace(statusEl, el("p", { role: "alert" }, `Cannot load the survey: ${err.message}. `,
        "The page tries again when the connection is back; you can also reload it."));
      window.addEventListener("online", () => window.location.reload(), { once: true });
      return;
    }
    return refuse(`The server did not give the survey: ${err.message}.`);
  }
  const verified = await verifyDocument(doc, where.surveyId);
  if (verified.twoServer) twoServer = loaded("twoServer");
  const { firstUse } = await checkTrust(verified, { origin: where.server, ...where });
  const { survey } = verified;
  document.title = survey.title;
  titleEl.textContent = survey.title;
  const lead = document.querySelector("p.lead");
  if (verified.twoServer && lead) lead.textContent = twoServer.LEAD;  // not "randomized"
  const previous = await answered(survey.id, survey.version);
  if (previous) return alreadyAnswered(verified, previous);
  if (verified.status !== "open") {
    return refuse(`This survey is ${verified.status}: it takes no more answers.`);
  }
  if (verified.twoServer) {
    const mismatch = twoServer.leaderMismatch(verified, where.server);
    if (mismatch) return refuse(mismatch);
  }
  const form = renderForm(survey, () => review(verified, form),
                          verified.twoServer ? twoServer.hint : undefined, verified.skip);
  replace(contentEl,
    survey.description ? el("p", { class: "description" }, survey.description) : null,
    ...(verified.twoServer
      ? [...twoServer.explanation(verified, where.server), keyLine(verified, firstUse)]
      : ldpIntro(verified, firstUse)),
    form);
  document.body.dataset.state = "ready";
  replace(statusEl);
  performance.mark("ldpsurvey-ready");  // verified, checked and rendered (bench/bench_page.py)
}

/** The LDP mode's privacy paragraph and details, above the questions. */
function ldpIntro(verified, firstUse) {
  const { survey } = verified;
  return [
    el("p", { class: "budget", id: "privacy" }, "Your privacy: your device randomizes " +
       (disclosedCount(survey) ?
         `every answer before sending it, except the ${disclosedCount(survey)} disclosed ` +
         "ones, which are sent as you give them. About the others, " +
         `${oddsSentence(totalEpsilon(survey))}` :
         `every answer before sending it. ${capitalized(oddsSentence(totalEpsilon(survey)))}`) +
       ", even if you answer every question."),
    el("details", { class: "technical", id: "survey-details" },
      el("summary", {}, "Details: privacy budget and signing key"),
      el("p", {}, `In technical terms, answering every question spends ε = ` +
         `${epsilonText(totalEpsilon(survey))} of privacy (local differential privacy: “at ` +
         "most N times more sure” means odds at most N = e^ε times the odds before, so from " +
         "50% to at most e^ε/(1 + e^ε)). This page refuses surveys above " +
         `ε = ${epsilonText(where.maxEpsilon)}. Smaller ε means more noise and more privacy.`),
      keyLine(verified, firstUse)),
  ];
}

function keyLine(verified, firstUse) {
  return el("p", { class: "key" }, "The survey is signed by the key with fingerprint ",
    el("code", { id: "fingerprint" }, verified.fingerprint),
    where.fingerprint ? " (the key this page trusts)."
      : firstUse ? " (first time this browser sees this survey: key remembered; compare " +
                   "it with the fingerprint the survey's designer publishes)."
        : " (the same key as before).");
}

/** Run the page; `source` draws every report's noise (app.js: the browser's CSPRNG). */
export function start(source) {
  randomSource = source;
  main().catch(fail);
}
