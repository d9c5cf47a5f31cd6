// Piped text: `${id}` in a question's text, hint or option labels shows the respondent's own
// earlier answer (shared/piping.py; docs/piping.md). Loaded only for a survey that pipes
// (optional.js hasPipes). The signed survey keeps the template; the answer is written here,
// on this device, as text (textContent, never parsed as HTML), and nothing about it is stored
// or sent. A reference whose question was not asked (skip logic) or is not answered (yet)
// shows FALLBACK.

import { el } from "./dom.js";
import { answerText } from "./form.js";
import { NOT_ASKED } from "./skip_logic.js";

const REFERENCE = /\$\{([^{}]*)\}/g;
export const FALLBACK = "\u2026";  // "…", as shared/piping.py

/** The text with each `${id}` replaced by `answerOf(id)`, FALLBACK where that is null. */
export function substitute(text, answerOf) {
  return text.replace(REFERENCE, (_, id) => answerOf(id) ?? FALLBACK);
}

/** The text as nodes: its words as text, each reference a <span class="piped"> that shows
 * FALLBACK until `refreshPipes` writes the answer into it (shown.js). */
export function pipedNodes(text) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(REFERENCE)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    nodes.push(el("span", { class: "piped", "data-pipe": match[1] }, FALLBACK));
    last = match.index + match[0].length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

/** Write the answers into every piped span under `root`, and into every <option> whose
 * text is piped (an <option> holds text only: its template is its data-piped attribute).
 * `answerOf(id)`: the answer as the respondent sees it, or null (not asked, not answered). */
export function refreshPipes(root, answerOf) {
  for (const span of root.querySelectorAll("span.piped[data-pipe]")) {
    const text = answerOf(span.dataset.pipe) ?? FALLBACK;
    if (span.textContent !== text) span.textContent = text;
  }
  for (const option of root.querySelectorAll("option[data-piped]")) {
    option.textContent = substitute(option.dataset.piped, answerOf);
  }
}

/** How an answer is shown in a piped text: as the review names it (answerText, in the
 * language shown); null for none (skipped, not asked). */
const said = (q, value) => (q === undefined || value === undefined || value === null ||
  value === NOT_ASKED ? null : answerText(q, value));

/** Keep the form's piped texts showing the answers above them, now and after every change
 * (after skip logic's own listener, attached first). `peek(q, index)`: a question's current
 * value (undefined when not valid); `fieldsetOf(index)`: its fieldset, hidden while it does
 * not apply. */
export function attachPiping(form, survey, peek, fieldsetOf) {
  const at = new Map(survey.questions.map((q, index) => [q.id, [q, index]]));
  const answerOf = (id) => {
    const [q, index] = at.get(id) ?? [];
    return q === undefined || fieldsetOf(index).hidden ? null : said(q, peek(q, index));
  };
  const update = () => refreshPipes(form, answerOf);
  update();
  form.addEventListener("change", update);
  form.addEventListener("input", update);
}

/** Write `answers` (question id -> value, as the device randomizes them) into the piped texts
 * under `root` (the review). */
export function pipeAnswers(root, survey, answers) {
  const byId = new Map(survey.questions.map((q) => [q.id, q]));
  refreshPipes(root, (id) => said(byId.get(id), answers.get(id)));
}
