// The questions as an accessible form (one fieldset and legend per question, native radios,
// selects and text inputs, errors tied to their question) and reading the answers back.

import { el } from "./dom.js";
import { quoted, t } from "./i18n.js";
import { hasPipes, loaded } from "./optional.js";  // skip_form.js, piping.js: when needed
import { questionPrivacy } from "./odds.js";
import { hintOf, optionText, questionOf, shown, shownAttrs, shownString } from "./shown.js";
import { applies, hasConditions } from "./skip_logic.js";
import { unitOf } from "./types/index.js";  // each question's inputs and reading (js/types/)

const SELECT_ABOVE = 12; // more options than this: a <select> instead of radios
const SKIP = "__skip__";

const fieldName = (index) => `q${index}`;

/** The answer a respondent sees for a domain value of a question (in the shown language). */
export const answerText = (q, value) => unitOf(q).answerText(q, value);

function hintFor(q) {
  const parts = [q.disclosed === true ? t("form.disclosed") : questionPrivacy(q.epsilon)];
  if (q.optional) parts.push(t(unitOf(q).optionalKey));
  const groups = Object.entries(q.groups || {});
  if (groups.length) {
    parts.push(t("form.groups", { groups: groups.map(([name, members]) =>
      `${quoted(name)} (${members.map((m) => optionText(q, m)).join(", ")})`).join("; ") }));
  }
  return parts.join(" ");
}

function choice(name, position, value, text, attrs = {}) {
  const id = `${name}-${position}`;
  return el("div", { class: "choice" },
    el("input", { type: "radio", name, id, value }),
    el("label", { for: id, ...attrs }, text));
}

/** One radio per value (a <select> past SELECT_ABOVE of them), and a "skip" radio for an
 * optional question: the inputs of a question that picks one value. `values`: [value, shown
 * text (shown.js)] pairs. */
export function choiceInputs(q, name, describedBy, values) {
  if (values.length > SELECT_ABOVE) {
    const id = `${name}-select`;
    return [
      el("label", { for: id, class: "inline" }, t("form.chooseOne")),
      el("select", { id, name, "aria-describedby": describedBy },
        el("option", { value: "" }, t(q.optional ? "form.skipOption" : "form.chooseOption")),
        values.map(([value, item]) => el("option", { value, ...shownAttrs(item) },
                                         shownString(item)))),
    ];
  }
  const radios = values.map(([value, item], i) => choice(name, i, value, shown(item, true)));
  if (q.optional) radios.push(choice(name, "skip", SKIP, t("form.skip")));
  return [el("div", { class: `choices ${q.type}` }, radios)];
}

/** The survey's questions as a <form>; `onSubmit` gets no arguments; `hint(q)` the text under
 * each question (the two-server mode passes its own); `plan` the survey's skip logic
 * (skip_logic.js skipPlan): a question shows only while its condition holds; `state` what an
 * earlier form held (formState), restored before the skip logic first runs (a new language);
 * `carried` the invitation's values of the carried questions (invite.js carriedAnswers). */
export function renderForm(survey, onSubmit, hint = hintFor, plan = null, state = null,
                           carried = null) {
  const form = el("form", { id: "answers", novalidate: true });
  survey.questions.forEach((q, index) => {
    const name = fieldName(index);
    const hintId = `${name}-hint`;
    const errorId = `${name}-error`;
    const designer = hintOf(q);
    form.append(el("fieldset", { class: "question", id: `${name}-fieldset`,
                                 "aria-describedby": `${hintId} ${errorId}` },
      el("legend", {}, `${index + 1}. `, shown(questionOf(q), true),
         q.optional ? el("span", { class: "optional" }, ` ${t("form.optional")}`) : null),
      designer ? el("p", { class: "qhint" }, shown(designer, true)) : null,
      el("p", { class: "hint", id: hintId }, hint(q)),
      carried ? carried.inputs(q, name) : unitOf(q).inputs(q, name, `${hintId} ${errorId}`),
      el("p", { class: "error", id: errorId, hidden: true })));
  });
  if (state) restoreForm(form, state);
  if (plan && hasConditions(survey)) {  // skip_form.js, loaded for skip logic only
    const live = loaded("skipForm").attachSkipLogic(form, survey, plan,
      (index) => form.querySelector(`#${fieldName(index)}-fieldset`),
      (q, index) => readOne(form, q, index).value);
    if (live) form.append(live);
  }
  if (survey.questions.some((q) => q.filter != null)) {  // option_filter.js: cascading options
    loaded("optionFilter").attachFilters(form, survey, (q, index) => readOne(form, q, index).value,
      (index) => form.querySelector(`#${fieldName(index)}-fieldset`));
  }
  if (hasPipes(survey)) {  // piping.js: earlier answers in the texts, after skip logic's
    loaded("piping").attachPiping(form, survey, (q, index) => readOne(form, q, index).value,
      (index) => form.querySelector(`#${fieldName(index)}-fieldset`));
  }
  form.append(el("button", { type: "submit", class: "primary" }, t("form.review")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    onSubmit();
  });
  return form;
}

/** The field's text ({raw}), or what an empty or skipped field means: {value: null} for an
 * optional question, else {error}. A unit's `read` starts here (js/types/). */
export function rawAnswer(form, q, name) {
  const field = form.elements[name];
  const raw = field ? (field.value ?? "") : "";
  if (raw === "" || raw === SKIP) {
    if (q.optional) return { value: null };
    return { error: t("form.required") };
  }
  return { raw };
}

const readOne = (form, q, index) => unitOf(q).read(form, q, fieldName(index));

/** {answers: Map(question id -> value or null when skipped), firstError: element or null};
 * shows or clears each question's error message. With a skip `plan`, a question that does not
 * apply is left out (no value, no error). */
export function readAnswers(form, survey, plan = null) {
  const answers = new Map();
  let firstError = null;
  survey.questions.forEach((q, index) => {
    const name = fieldName(index);
    const on = !plan || applies(plan, q, answers);
    const { value, error } = on ? readOne(form, q, index) : { value: undefined, error: null };
    const message = form.querySelector(`#${name}-error`);
    const fieldset = form.querySelector(`#${name}-fieldset`);
    message.textContent = error || "";
    message.hidden = !error;
    fieldset.classList.toggle("invalid", Boolean(error));
    for (const control of fieldset.querySelectorAll("input, select")) {
      if (error) control.setAttribute("aria-invalid", "true");
      else control.removeAttribute("aria-invalid");
    }
    if (error && !firstError) {
      firstError = fieldset.querySelector(
        "input:not([type=hidden]), select, [role=gridcell][tabindex='0']");
    }
    if (!error && on) answers.set(q.id, value);
  });
  return { answers, firstError };
}

/** Whether a control holds a checked state (a radio or a checkbox), not a value. */
const checkable = (control) => ["radio", "checkbox"].includes(control.type);

/** What a form holds (every control's value or checked state), to rebuild it in another
 * language with the same answers: they are labels, numbers and cells, never shown text. */
export function formState(form) {
  const state = new Map();
  form.querySelectorAll("input, select").forEach((c, i) => {
    state.set(`${c.name} ${c.id} ${i}`, checkable(c) ? c.checked : c.value);
  });
  return { state, invalid: form.querySelector(".invalid") !== null };
}

function restoreForm(form, { state }) {
  form.querySelectorAll("input, select").forEach((c, i) => {
    const value = state.get(`${c.name} ${c.id} ${i}`);
    if (value === undefined) return;
    if (checkable(c)) c.checked = value;
    else if (c.restore) c.restore(value);  // the grid picker's cell
    else c.value = value;
  });
}
