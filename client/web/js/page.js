// The respondent page: verify the survey, ask, review the answers and what sending means, and
// only on Send randomize on this device, store (ledger + outbox) and send. Nothing is
// randomized before every check passed, and nothing is randomized for the review (see send()).

import { el, replace } from "./dom.js";
import { formState, readAnswers, renderForm } from "./form.js";
import { N, say, t, tNodes, wordsLocale } from "./i18n.js";
import { chooseLanguage, firstCatalogue, markWords, preferences, speak } from "./language.js";
import { DEFAULT_MAX_EPSILON, Refusal, verifyDocument } from "./manifest.js";
import { totalEpsilon } from "./mechanisms.js";
import { capitalized, epsilonText, oddsSentence } from "./odds.js";
import { descriptionOf, showText, shown, titleOf } from "./shown.js";
import { hasConditions, resolveAnswers } from "./skip_logic.js";
import { AlreadyAnswered, FAILED, INVITE, PENDING, SENT, StorageUnavailable, answered,
         chargedEpsilons, getRecord, recordSubmission, records } from "./store.js";
import { checkTrust } from "./trust.js";
import { later, laterFor, loadModules, loadRefusals, loaded, moduleNamed,
         uploadFor } from "./optional.js";
import { surveyRequest, where as found } from "./where.js";

const RETRY_SECONDS = 30;

// What reviewing and sending need (review.js, composition.js, outbox.js), loaded once the
// questions are on screen (optional.js later): not on the way to the first question.
const deliver = (record) => loaded("outbox").deliver(record);
const flush = (server) => loaded("outbox").flush(server);
const reviewList = (...args) => loaded("review").reviewList(...args);
const sentList = (...args) => loaded("review").sentList(...args);
const skippedNotes = (...args) => loaded("review").skippedNotes(...args);
const compositionDetails = (...args) => loaded("composition").compositionDetails(...args);

/** How many questions of a survey are disclosed (sent as given, not randomized). */
const disclosedCount = (survey) => survey.questions.filter((q) => q.disclosed === true).length;
const titleEl = document.getElementById("title");
const statusEl = document.getElementById("status");
const contentEl = document.getElementById("content");
const mainEl = document.getElementById("main");

const where = { ...found, maxEpsilon: found.maxEpsilon ?? DEFAULT_MAX_EPSILON };
let randomSource = null;  // start() sets it: every report's noise comes from it
let twoServer = null;  // twoserver/flow.js, loaded (optional.js) for a two-server survey only
let invite = null;  // invite.js (its header says when)
let inviteOnly = false;
let inviteCarries = [];  // what the survey's codes carry (doc.invite_carries; invite.js)
let carried = null;  // the carried questions' values and inputs (invite.js carriedAnswers)

// What the page shows can be drawn again in another language (the switcher): `redraw(true)`
// draws the screen shown now, `drawStatus()` the status line, each from what it was given
// (answers, records, errors), never from text already on the page.
let redraw = null;
// The record of the receipt shown (showDelivery draws it again when its status changes: "will
// send" while it waits, "sent" once the server has it).
let receiptRecord = null;
let drawStatus = null;
let form = null;  // the questions' form, kept (hidden) while the review is shown
let reviewing = false;

/** Show a screen: `draw(again)` builds it; `again` is a language switch (no focus moves). */
function screen(draw) {
  redraw = draw;
  draw(false);
  markWords(mainEl);
}

function setStatus(draw) {
  drawStatus = draw;
  if (draw) draw();
  else replace(statusEl);
  markWords(mainEl);
}

const status = (key) => setStatus(() => replace(statusEl, el("p", {}, t(key))));

function setTitle(content, focus) {
  replace(titleEl, content);
  if (focus) titleEl.focus();
}

/** The page's words now, for text it keeps (a receipt's local time). */
const localTime = (iso) => new Date(iso).toLocaleString(wordsLocale());

/** `words()` from the lazily loaded `refusals` part, or a line saying they could not load. */
function orUnsaid(words) {
  try {
    return words();
  } catch {
    return t("page.unsaid");
  }
}

/** Refuse to go on; `words()` says why, in the page's language of the moment. */
async function refuse(words) {
  await loadRefusals().catch(() => {});  // said below if they could not load
  const why = () => orUnsaid(words);
  document.body.dataset.state = "refused";
  replace(contentEl);
  screen((again) => setTitle(t("page.refusedTitle"), !again));
  setStatus(() => replace(statusEl, el("div", { class: "refusal", role: "alert" },
    el("p", {}, why()), el("p", {}, t("page.nothingSent")))));
}

function deliveryText(record) {
  const error = record.last_words ? t(record.last_words.key, record.last_words.params)
    : record.last_error;
  if (record.status === SENT) return t(record.duplicate ? "delivery.duplicate" : "delivery.sent");
  if (record.status === FAILED) return t("delivery.failed", { error });
  return t(error ? "delivery.pendingWhy" : "delivery.pending", { error });
}

async function useInvite() {
  if (!invite) {
    await loadModules(["invite"]);
    invite = loaded("invite");
    await invite.setup({ server: where.server, surveyId: where.surveyId, invited: inviteOnly,
                         carries: inviteCarries },
                       { setTitle, setStatus, status, showDelivery, fail, statusEl });
  }
}

/** Show where the submission stands, then mark it on the body (data-delivery): the mark
 * says what the screen shows. A refused code's screen may wait for invite.js and its words
 * (a survey made invite-only after the page was opened never loaded them); marked before,
 * the state would claim a title and a field that are not there yet (issue 39). */
function showDelivery(record) {
  // the receipt says "sent" only once the server has it: drawn again when that changes
  if (receiptRecord?.submission_id === record.submission_id &&
      receiptRecord.status !== record.status) {
    receiptRecord.status = record.status;
    redraw?.(true);
    markWords(mainEl);
  }
  const mark = () => { document.body.dataset.delivery = record.status; };
  if (record.status === INVITE) {
    return useInvite().then(() => {
      invite.refused(record, twoServer !== null);
      mark();
    });
  }
  invite?.accepted();
  setStatus(() => replace(statusEl, el("p", { id: "delivery" }, deliveryText(record)),
    record.status === PENDING ? el("button", { type: "button", id: "retry",
      onclick: () => retryNow(record) }, t("delivery.retry")) : null));
  mark();
}

async function retryNow(record) {
  status("page.sending");
  const fresh = await getRecord(record.submission_id);
  showDelivery(fresh.status === PENDING ? await deliver(fresh) : fresh);
}

/** Keep trying the pending ones: when the browser comes back online, and now and then. */
function keepDelivering(submissionId) {
  const again = async () => {
    const results = await flush(where.server);
    const mine = results.find((r) => r && r.submission_id === submissionId);
    if (mine) await showDelivery(mine);
  };
  window.addEventListener("online", again);
  setInterval(again, RETRY_SECONDS * 1000);
}

function receipt(verified, record) {
  receiptRecord = record;
  const sent = record.status === SENT;
  const section = verified.twoServer ? twoServer.receipt(verified, record, where.server) : el(
    "section", { id: "receipt", "aria-labelledby": "receipt-title" },
    el("h2", { id: "receipt-title" }, t("receipt.title", {
      sent: sent ? "yes" : "no", disclosed: disclosedCount(verified.survey) ? "yes" : "no" })),
    el("p", {}, t("receipt.when", { time: localTime(record.created) })),
    sentList(verified.survey, record.body.answers, verified.mechanisms, sent),
    el("details", { class: "technical" },
      el("summary", {}, t("page.technical")),
      el("p", {}, t("receipt.details", { id: record.submission_id, survey: record.survey_id,
                                         version: record.body.version,
                                         created: record.created })),
      el("pre", { class: "wire" }, JSON.stringify(record.body, null, 2))));
  if (record.invited && invite) section.querySelector("details").append(invite.receiptNote());
  return section;
}

async function alreadyAnswered(verified, entry) {
  await loadModules(later(verified.survey));  // its receipt and delivery
  const record = await getRecord(entry.submission_id);
  await loadRefusals().catch(() => {});  // its words are a rare state's (orUnsaid)
  screen(() => replace(contentEl,
    el("p", { class: "notice" }, orUnsaid(() => t("page.answered", {
      version: entry.version, time: localTime(entry.time) }))),
    record ? receipt(verified, record) : null));
  document.body.dataset.state = "answered";
  if (record) {
    await showDelivery(record.status === PENDING ? await deliver(record) : record);
    keepDelivering(record.submission_id);
  } else {
    setStatus(null);
  }
}

/** What each answered question costs the ledger. In a series, an answer whose keyed tag was
 * charged before costs nothing more (the ledger decides again when it records). Draws no
 * report randomness: the review can be shown as often as the respondent likes. */
async function chargesFor(verified, answers) {
  const { survey, mechanisms } = verified;
  const series = survey.series ?? null;
  const memo = series === null ? undefined
    : { secret: await loaded("memo").deviceSecret(), series };  // memo.js: a series only
  const known = memo ? await loaded("memo").chargedTags() : new Set();
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
    await uploadFor(survey);  // loaded before the review was shown
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
  const code = invite?.code();
  if (code) Object.assign(record, { invite: code, invited: true });
  try {
    await recordSubmission({ survey: survey.id, version: survey.version, record, charges,
                             sha256: verified.sha256 });
  } catch (err) {
    if (err instanceof AlreadyAnswered) return alreadyAnswered(verified, err.record);
    throw err;
  }
  invite?.stored();
  answers.clear();
  reviewing = false;
  screen((again) => {
    setTitle(t("page.thanks"), !again);
    replace(contentEl, receipt(verified, record));
  });
  status("page.sending");
  await showDelivery(await deliver(record));
  keepDelivering(record.submission_id);
}

/** The review of the form's answers; `again`: drawn anew in another language (no focus). */
function review(verified, again = false) {
  const read = readAnswers(form, verified.survey, verified.skip);
  const wrong = invite?.invalid() || read.firstError;
  if (wrong) {
    status("page.attention");
    wrong.focus();
    return;
  }
  // Skip logic: what the device randomizes, a randomized "not asked" for each question that
  // does not apply and depends on randomized answers (skip_logic.js).
  const answers = resolveAnswers(verified.survey, verified.skip, read.answers);
  // two servers: the review waits for the upload's code (Prio3, HPKE; asked for when the
  // respondent started answering), so a page that shows it can send offline
  const charged = verified.twoServer ? uploadFor(verified.survey).then(() => ({
    charges: twoServer.charges(verified.survey, answers) }), () => {
    throw new Refusal("refusal.noCode");
  }) : chargesFor(verified, answers);
  const shownForm = form;
  Promise.all([charged, chargedEpsilons()]).then(([{ charges }, before]) => {
    if (form !== shownForm) return;  // drawn again meanwhile (a language switch)
    // the odds come from the exact total, never from its rounded display (4.49998 shown as
    // "4.5" would say "91 times" where the top of the page says 90)
    const exact = totalEpsilon({ questions: charges.map(
      (c) => ({ epsilon: c.reused ? 0 : c.epsilon })) });
    const epsilons = { total: N(epsilonText(exact)), limit: N(epsilonText(where.maxEpsilon)) };
    const sendButton = el("button", { type: "button", class: "primary", id: "send" },
                          t("review.send"));
    const back = el("button", { type: "button", id: "edit" }, t("review.change"));
    sendButton.addEventListener("click", () =>
      send(verified, answers, [sendButton, back]).catch(fail));
    back.addEventListener("click", () => {  // nothing was drawn yet: nothing to drop
      reviewing = false;
      section.remove();
      form.hidden = false;
      setStatus(null);
      form.querySelector("input, select").focus();
    });
    const section = el("section", { id: "review", "aria-labelledby": "review-title" },
      el("h2", { id: "review-title", tabindex: "-1" }, t("review.title")),
      ...(verified.twoServer ? [
        el("p", {}, t("two.reviewIntro")),
        twoServer.reviewList(verified, answers, where.server),
        ...(hasConditions(verified.survey) ? loaded("skipReview").twoServerSkippedLines(
          verified.survey.questions, answers) : []).map((text) => el("p", { class: "skipped" }, text)),
        el("p", { class: "total" }, t("two.total", epsilons)),
      ] : [
        el("p", {}, t(disclosedCount(verified.survey) ? "review.introDisclosed"
          : "review.intro")),
        reviewList(verified.survey, answers, charges, verified.mechanisms, verified.skip),
        ...skippedNotes(verified.survey, answers, verified.skip),
        el("p", { class: "total" }, t("review.total", { odds: oddsSentence(exact),
                                                        ...epsilons })),
      ]),
      invite?.reviewLine(),
      el("div", { class: "actions" }, sendButton, back),
      compositionDetails(before, charges.map((c) => (c.reused ? 0 : c.epsilon))));
    form.hidden = true;
    reviewing = true;
    contentEl.append(section);
    markWords(section);
    status("review.check");
    if (!again) section.querySelector("h2").focus();
  }).catch(fail);
}

function fail(err) {
  if (err instanceof Refusal) return refuse(() => say(err));
  if (err instanceof StorageUnavailable) {
    return refuse(() => t("page.storage", { reason: say(err) }));
  }
  console.error(err);
  document.body.dataset.state = "error";
  setStatus(() => replace(statusEl, el("p", { role: "alert" },
    t("page.wrong", { error: say(err) }))));
}

/** The survey in the page's language: its title, the lead line, the page's title. */
function chrome(verified) {
  const title = titleOf(verified.survey);
  document.title = title.text;
  setTitle(shown(title), false);
  const lead = document.querySelector("p.lead");
  if (lead) lead.textContent = t(verified.twoServer ? "two.lead" : "page.lead");
  markWords(mainEl);
}

/** The words before a survey is known: the respondent's first language the page speaks. */
async function firstWords(prefs) {
  await speak(firstCatalogue(prefs));
  document.title = t("page.survey");
  document.querySelector("p.lead").textContent = t("page.lead");
  if (!document.body.dataset.state) status("page.checking");
}

/** Show the survey in `tag` (one of its languages): the page's words, the survey's text. */
async function useLanguage(verified, tag) {
  const { survey } = verified;
  await speak(tag);
  showText(survey.translations ? new (loaded("surveyText").SurveyText)(survey, tag) : null);
  chrome(verified);
}

async function main() {
  const prefs = preferences();
  const words = firstWords(prefs).catch(() => {});  // meanwhile: English, as index.html is
  if (!where.surveyId) {
    await words;
    return refuse(() => t("page.noSurvey"));
  }
  // earlier submissions still waiting (outbox.js loaded for them only)
  records(where.server).then((waiting) => waiting.length && loadModules(["outbox"])
    .then(() => flush(where.server))).catch(() => {});
  let doc;
  try {
    doc = await surveyRequest;  // asked for as the page started (where.js)
    performance.mark("ldpsurvey-fetched");  // the phases bench/bench_first_question.py prints
  } catch (err) {
    await words;
    // api.js: imported by where.js to ask (an exported page), not before the first question on
    // the page the aggregator serves; a page that could not load it is as good as offline
    const { CorsRefused, Unreachable } = await moduleNamed("api").catch(() => ({}));
    if (CorsRefused && err instanceof CorsRefused) {
      await loadRefusals().catch(() => {});  // the page's own files load (orUnsaid if not)
      document.body.dataset.state = "cors";
      screen((again) => setTitle(orUnsaid(() => t("page.corsTitle")), !again));
      setStatus(() => replace(statusEl, el("div", { class: "refusal", role: "alert" },
        el("p", {}, orUnsaid(() => t("page.cannotLoad", { reason: say(err) }))),
        el("p", {}, orUnsaid(() => tNodes("page.corsFix", { command: el("code", {},
          `ldpsurvey serve … --allow-origin ${window.location.origin}`) }))))));
      return;
    }
    if (!Unreachable || err instanceof Unreachable) {
      document.body.dataset.state = "offline";
      setStatus(() => replace(statusEl, el("p", { role: "alert" },
        t("page.cannotLoadRetry", { reason: say(err) }))));
      window.addEventListener("online", () => window.location.reload(), { once: true });
      return;
    }
    return refuse(() => t("page.serverRefused", { reason: say(err) }));
  }
  await words;
  inviteOnly = doc.invite_only === true;
  if (Array.isArray(doc.invite_carries)) inviteCarries = doc.invite_carries;
  const inviting = inviteOnly || window.location.hash.includes("invite=") ? useInvite() : null;
  const verified = await verifyDocument(doc, where.surveyId);
  performance.mark("ldpsurvey-verified");
  await inviting;
  if (verified.twoServer) twoServer = loaded("twoServer");
  const { survey } = verified;
  await useLanguage(verified, chooseLanguage(survey, preferences()));
  if (survey.translations) {
    titleEl.before(loaded("switcher").switcher(survey, document.documentElement.lang,
      async (tag) => {
        await useLanguage(verified, tag);
        redraw?.(true);
        drawStatus?.();
      }));
  }
  const { firstUse } = await checkTrust(verified, { origin: where.server, ...where });
  const previous = await answered(survey.id, survey.version);
  performance.mark("ldpsurvey-checked");  // trust and ledger (IndexedDB)
  if (previous) return alreadyAnswered(verified, previous);
  if (verified.status !== "open") {
    return refuse(() => t("page.closed", { status: verified.status }));
  }
  if (verified.twoServer && twoServer.leaderMismatch(verified, where.server)) {
    return refuse(() => twoServer.leaderMismatch(verified, where.server));
  }
  const names = survey.questions.filter((q) => q.carried === true).map((q) => q.id);
  carried = names.length ? invite?.carriedAnswers(survey) : null;  // sensitive-module.md
  if (names.length && !carried) {
    return refuse(() => t("form.carriedMissing", { names: names.join(", ") }));
  }
  ask(verified, firstUse);
  setStatus(null);
  performance.mark("ldpsurvey-question");  // the questions on screen (bench_first_question.py)
  if (verified.twoServer) {  // the upload's code once the respondent starts answering
    const start = () => uploadFor(survey).catch(() => {});  // the review says a failure
    for (const type of ["input", "change"]) contentEl.addEventListener(type, start, { once: true });
  }
  try {
    await laterFor(survey);  // what reviewing and sending need
  } catch {
    throw new Refusal("refusal.noCode");
  }
  // from here on the page needs the network no more (a two-server survey: once the respondent
  // has started answering, its upload's code loaded then)
  document.body.dataset.state = "ready";
  performance.mark("ldpsurvey-ready");  // verified, checked and rendered (bench/bench_page.py)
}

/** The questions, with the privacy explanation above them. */
function ask(verified, firstUse) {
  const { survey } = verified;
  form = null;
  reviewing = false;
  screen((again) => {
    const state = again && form ? formState(form) : null;
    form = renderForm(survey, () => review(verified),
                      verified.twoServer ? twoServer.hint : undefined, verified.skip, state,
                      carried);
    form.hidden = reviewing;
    const description = descriptionOf(survey);
    replace(contentEl,
      description.text ? el("p", { class: "description" }, shown(description)) : null,
      ...(verified.twoServer
        ? [...twoServer.explanation(verified, where.server), keyLine(verified, firstUse)]
        : ldpIntro(verified, firstUse)),
      invite?.invitation(Boolean(verified.twoServer)), form);
    if (state && state.invalid) readAnswers(form, survey, verified.skip);
    if (reviewing) review(verified, true);
  });
}

/** The LDP mode's privacy paragraph and details, above the questions. */
function ldpIntro(verified, firstUse) {
  const { survey } = verified;
  const total = totalEpsilon(survey);
  const disclosed = disclosedCount(survey);
  return [
    el("p", { class: "budget", id: "privacy" }, disclosed
      ? t("privacy.disclosed", { count: disclosed, odds: oddsSentence(total) })
      : t("privacy.all", { odds: capitalized(oddsSentence(total)) })),
    el("details", { class: "technical", id: "survey-details" },
      el("summary", {}, t("details.summary")),
      el("p", {}, t("details.epsilon", { total: N(epsilonText(total)),
                                         limit: N(epsilonText(where.maxEpsilon)) })),
      keyLine(verified, firstUse)),
  ];
}

function keyLine(verified, firstUse) {
  return el("p", { class: "key" }, tNodes(
    where.fingerprint ? "key.pinned" : firstUse ? "key.first" : "key.same",
    { fingerprint: el("code", { id: "fingerprint" }, verified.fingerprint) }));
}

/** Run the page; `source` draws every report's noise (app.js: the browser's CSPRNG). */
export function start(source) {
  randomSource = source;
  main().catch(fail);
}
