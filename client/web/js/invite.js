// Invitation codes on the page (docs/web.md, "Invitation links"). Loaded by optional.js only
// for a survey whose public document says invite_only, a link that carries a code, or a
// stored submission whose code the server refused: a plain survey's page never loads it.
//
// - The code comes from the link's fragment, `#invite=CODE`: a browser never sends the
//   fragment when it asks for the page, so the code is in no access log of the page request.
//   It is taken out of the address bar (and so out of the history) at once, and kept in this
//   tab's sessionStorage until the submission is stored, so that a reload does not lose it.
// - Without one, a survey that takes invited answers only shows a labelled field for it.
// - The code is stored in the outbox record beside the body (record.invite), sent with every
//   attempt (outbox.js deliver) and forgotten once the server acknowledged the submission.
// - A code the server refuses (403 invite_refused: unknown, used, missing) leaves the stored
//   submission as it is, in status INVITE (store.js): the respondent enters another code, and
//   the SAME randomized body is sent with it (it was never accepted); nothing is randomized
//   again. A refusal whose reason is other_code (the server holds this very submission id,
//   bound to another code) means it was delivered: outbox.js marks it sent.

import { postSubmission } from "./api.js";
import { adoptStyle, el, replace } from "./dom.js";
import { t, tNodes } from "./i18n.js";
import { deliver } from "./outbox.js";
import { PENDING, updateRecord } from "./store.js";
import { unitOf } from "./types/index.js";

const PARAM = "invite";  // not words: the fragment's key, #invite=CODE
const MAX_LENGTH = 64;  // server/invites.py MAX_CODE_LENGTH
const PREFIX = "inv_";  // not words: server/invites.py PREFIX
const STYLE = `
input.code { font: inherit; font-family: ui-monospace, "DejaVu Sans Mono", monospace;
             padding: 0.5rem; min-height: 2.75rem; border: 1px solid var(--line);
             border-radius: 0.375rem; width: 100%; max-width: 24rem;
             background: var(--bg); color: var(--text); }
.invite-fix { margin: 0.75rem 0; }`;

let storageKey = null;
let fromLink = null;  // the code the link carried
let inviteOnly = false;
let typed = "";  // what the field holds, kept when the page is drawn again in another language
let field = null;  // {input, error} of the field above the questions, while shown
let page = null;  // page.js's {setTitle, setStatus, status, showDelivery, fail, statusEl}
let refusedShown = false;  // the page's title says that the code was refused
// What the code carries (a sensitive module beside a main survey, docs/sensitive-module.md):
// {names, values (null until known), error}; null when the survey's codes carry nothing.
let carried = null;

function session(action) {
  try {
    return action(window.sessionStorage);
  } catch {
    return null;  // storage refused (a private mode): the code lives in this page only
  }
}

/** The code in a fragment such as "#invite=CODE" (other keys kept apart), or null. */
export function fragmentCode(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  return params.get(PARAM);
}

/** Take the code out of the link: read it from the fragment, remove it from the address bar
 * (and so from the history), keep it in this tab until the submission is stored. When the
 * survey's codes carry disclosed values (`carries`, their names), ask the server what this
 * code carries, to show it before the questions. */
export async function setup({ server, surveyId, invited, carries }, hooks) {
  page = hooks;
  inviteOnly = invited === true;
  storageKey = `ldpsurvey.invite ${server} ${surveyId}`;  // not words: a storage key
  const { hash, pathname, search } = window.location;
  const code = fragmentCode(hash);
  if (code !== null) {
    const params = new URLSearchParams(hash.slice(1));
    params.delete(PARAM);
    const rest = params.toString();
    window.history.replaceState(window.history.state, "",
                                pathname + search + (rest ? `#${rest}` : ""));
    if (normalized(code)) session((s) => s.setItem(storageKey, normalized(code)));
  }
  fromLink = normalized(code ?? session((s) => s.getItem(storageKey)) ?? "") || null;
  carried = Array.isArray(carries) && carries.length
    ? { names: carries.map(String), values: null, error: null } : null;
  if (carried && fromLink) {
    try {
      const answer = await postSubmission(server, surveyId, { invite: fromLink }, "/invitation");
      carried.values = answer && typeof answer.carries === "object" ? answer.carries : {};
    } catch (err) {
      carried.error = err.message;  // the names are shown without their values
    }
  }
}

/** What travels with the code: each carried name with this code's value, as the server
 * links them to the answers (not randomized), or the names alone when not known. */
function carriedList() {
  if (!carried) return [];
  const { names, values, error } = carried;
  const items = names.map((name) => el("li", {}, el("span", { class: "carried-name" }, name),
    values && typeof values[name] === "string"
      ? [": ", el("strong", { class: "carried-value" }, values[name])] : []));
  return [
    el("p", { id: "invite-carries-lead" }, t("invite.carries")),
    el("ul", { id: "invite-carries", "aria-describedby": "invite-carries-lead" }, ...items),
    ...(error ? [el("p", { class: "hint" }, t("invite.carriesUnknown", { error }))] : []),
  ];
}

/**
 * The values of a survey's carried questions (carried = true: docs/sensitive-module.md,
 * "Values a condition reads") from what the link's code carries, with `inputs(q, name)`, the
 * form's inputs of each question (form.js): a carried one is not asked; its value is shown and
 * held in a hidden field that its unit reads as it reads a typed answer. Null when a value is
 * missing (no code from a link, the server could not say) or is not a whole number in its
 * question's range: the page refuses then, the value being the main interview's.
 */
export function carriedAnswers(survey) {
  const values = {};
  for (const q of survey.questions.filter((x) => x.carried === true)) {
    const text = carried?.values?.[q.id];
    const value = /^-?[0-9]+$/.test(text ?? "") ? Number(text) : NaN;
    if (!Number.isSafeInteger(value) || value < q.min || value > q.max) return null;
    values[q.id] = value;
  }
  return {
    values,
    inputs(q, name) {
      const hidden = el("input", { type: "hidden", name, value: String(values[q.id]) });
      return q.id in values ? [el("p", { class: "carried", id: `${name}-carried` },
        t("form.carried", { value: String(values[q.id]) })), hidden]
        : unitOf(q).inputs(q, name, `${name}-hint ${name}-error`);
    },
  };
}

/** What a respondent typed, as a code: trimmed, a pasted link's code taken out of it, the
 * prefix's case mended (a phone capitalizes the first letter); "" if it cannot be a code. */
export function normalized(text) {
  let code = String(text).trim();
  const inLink = /[#&]invite=([^&\s]*)/.exec(code);
  if (inLink) code = decodeURIComponent(inLink[1]);
  if (code.slice(0, PREFIX.length).toLowerCase() === PREFIX) {
    code = PREFIX + code.slice(PREFIX.length);
  }
  const ok = code.length > PREFIX.length && code.length <= MAX_LENGTH &&
    code.startsWith(PREFIX) && /^[\x21-\x7e]+$/.test(code);
  return ok ? code : "";
}

/** The code to send with a new submission: the link's, or the field's; null if none. */
export function code() {
  return fromLink || normalized(typed) || null;
}

/** The submission is stored with its code (the outbox keeps it now): this tab forgets it. */
export function stored() {
  session((s) => s.removeItem(storageKey));
}

const mode = (twoServer) => ({ mode: twoServer ? "two" : "one" });

function codeInput(id, describedBy, value) {
  adoptStyle(STYLE);
  return el("input", { type: "text", id, class: "code", value, autocomplete: "off",
                       autocapitalize: "none", autocorrect: "off", spellcheck: "false",
                       maxlength: 300, "aria-describedby": describedBy });
}

/** Above the questions: what the link's code means, or the field to enter one (only for a
 * survey that takes invited answers only); null when neither applies. */
export function invitation(twoServer) {
  field = null;
  const why = el("p", { class: "hint", id: "invite-why" }, t("invite.why", mode(twoServer)));
  if (fromLink) {
    return el("div", { class: "notice", id: "invite" },
      el("p", {}, t("invite.fromLink")), ...carriedList(), why);
  }
  if (!inviteOnly) return null;
  const input = codeInput("invite-code", "invite-hint invite-why invite-error", typed);
  input.addEventListener("input", () => { typed = input.value; });
  const error = el("p", { class: "error", id: "invite-error", hidden: true });
  field = { input, error };
  return el("fieldset", { class: "question", id: "invite" },
    el("legend", {}, t("invite.label")),
    el("label", { for: "invite-code", class: "inline" }, t("invite.enter")),
    input,
    el("p", { class: "hint", id: "invite-hint" }, t("invite.hint")),
    ...carriedList(), why, error);
}

function showError(target, key) {
  target.error.textContent = key ? t(key) : "";
  target.error.hidden = !key;
  target.error.closest("fieldset")?.classList.toggle("invalid", Boolean(key));
  if (key) target.input.setAttribute("aria-invalid", "true");
  else target.input.removeAttribute("aria-invalid");
}

function problem(value) {
  if (!value.trim()) return "invite.required";
  return normalized(value) ? null : "invite.malformed";
}

/** Before the review: the field's input if its code is missing or cannot be a code (its
 * error shown), else null. */
export function invalid() {
  if (!field) return null;
  const key = problem(field.input.value);
  showError(field, key);
  return key ? field.input : null;
}

/** The review's line: the code this submission will be sent with. */
export function reviewLine() {
  const sent = code();
  return sent ? el("p", { id: "invite-review" },
    tNodes("invite.review", { code: el("code", {}, sent) })) : null;
}

/** For the receipt's technical details: the code went (or goes) beside the bytes shown. */
export const receiptNote = () => el("p", {}, t("invite.receipt"));

const REFUSED = Object.freeze({ unknown: "invite.unknown", used: "invite.used",
                                missing: "invite.missing" });

/**
 * The status shown while a stored submission waits for a code the server accepts: why the
 * server refused it, that the answers are kept as they were drawn, and a field for another
 * code; `resend(code)` sends the same stored body with it. `twoServer`: the upload's words.
 */
function correction(record, resend, twoServer) {
  const input = codeInput("invite-fix-code", "invite-refused invite-kept invite-fix-error",
                          fromLink && fromLink !== record.invite ? fromLink : "");
  const error = el("p", { class: "error", id: "invite-fix-error", hidden: true });
  const button = el("button", { type: "submit", class: "primary", id: "invite-send" },
                    t("invite.send"));
  const form = el("form", { class: "invite-fix", id: "invite-fix", novalidate: true },
    el("label", { for: "invite-fix-code", class: "inline" }, t("invite.label")),
    input, error, el("div", { class: "actions" }, button));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const key = problem(input.value);
    showError({ input, error }, key);
    if (key) {
      input.focus();
      return;
    }
    button.disabled = true;
    input.readOnly = true;
    resend(normalized(input.value));
  });
  return [
    el("div", { class: "refusal", role: "alert" },
      el("p", { id: "invite-refused" }, t(REFUSED[record.refused] || "invite.refused",
                                          { error: record.last_error })),
      el("p", { id: "invite-kept" }, t("invite.kept", mode(twoServer)))),
    form,
  ];
}

/** A stored submission whose code the server refused (outbox.js: status INVITE): the title and
 * status say why and ask for another code, with which the SAME stored body is sent. */
export function refused(record, twoServer) {
  refusedShown = true;
  page.setStatus(() => {
    page.setTitle(t("invite.title"), false);
    replace(page.statusEl, correction(record, (code) => resend(record, code).catch(page.fail),
                                      twoServer));
  });
  document.getElementById("invite-fix-code").focus();
}

async function resend(record, code) {
  page.status("page.sending");
  await page.showDelivery(await deliver(await updateRecord(record.submission_id,
                                                           { status: PENDING, invite: code })));
}

/** Another code was accepted (or the delivery goes on): the title is the page's again. */
export function accepted() {
  if (refusedShown) page.setTitle(t("page.thanks"), false);
  refusedShown = false;
}
