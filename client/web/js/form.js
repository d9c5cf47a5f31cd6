// The questions as an accessible form (one fieldset and legend per question, native radios,
// selects and text inputs, errors tied to their question) and reading the answers back.

import { el } from "./dom.js";
import { DISCLOSED_WORDS } from "./mechanisms.js";
import { loaded } from "./optional.js";  // grid_picker.js, multiselect.js: only if needed
import { questionPrivacy } from "./odds.js";
import { attachSkipLogic } from "./skip_form.js";
import { applies } from "./skip_logic.js";

const SELECT_ABOVE = 12; // more options than this: a <select> instead of radios
const SKIP = "__skip__";

const fieldName = (index) => `q${index}`;

/** The answer a respondent sees for a domain value of a question. */
export function answerText(q, value) {
  if (q.type === "binary") return value ? "Yes" : "No";
  if (q.type === "location") return loaded("gridPicker").cellText(q, value);
  if (q.type === "multiselect") return loaded("multiselect").answerText(value);
  return String(value);
}

function hintFor(q) {
  const parts = [q.disclosed === true
    ? `Disclosed: ${DISCLOSED_WORDS}. It costs no ε, but it can help identify you.`
    : questionPrivacy(q.epsilon)];
  if (q.optional) {
    const how = q.type === "integer" ? "leave it empty"
      : q.type === "multiselect" ? "check “Skip this question”" : "choose “Skip”";
    parts.push(`Optional: ${how} to skip ` +
               "it (the server will see that you did).");
  }
  const groups = Object.entries(q.groups || {});
  if (groups.length) {
    parts.push("Results also combine " + groups.map(
      ([name, members]) => `“${name}” (${members.join(", ")})`).join("; ") + ".");
  }
  return parts.join(" ");
}

function choice(name, position, value, text) {
  const id = `${name}-${position}`;
  return el("div", { class: "choice" },
    el("input", { type: "radio", name, id, value }),
    el("label", { for: id }, text));
}

function inputsFor(q, name, describedBy) {
  if (q.type === "location") return loaded("gridPicker").gridInputs(q, name, describedBy);
  if (q.type === "multiselect") return loaded("multiselect").checkboxInputs(q, name, describedBy);
  if (q.type === "integer") {
    const id = `${name}-input`;
    return [
      el("label", { for: id, class: "inline" }, `A whole number from ${q.min} to ${q.max}`),
      el("input", { type: "text", id, name, inputmode: q.min >= 0 ? "numeric" : "text",
                    autocomplete: "off", "aria-describedby": describedBy, class: "number" }),
    ];
  }
  const values = q.type === "binary" ? [["true", "Yes"], ["false", "No"]]
    : q.options.map((o) => [o, o]);
  if (values.length > SELECT_ABOVE) {
    const id = `${name}-select`;
    return [
      el("label", { for: id, class: "inline" }, "Choose one"),
      el("select", { id, name, "aria-describedby": describedBy },
        el("option", { value: "" }, q.optional ? "— skip this question —" : "— choose —"),
        values.map(([value, text]) => el("option", { value }, text))),
    ];
  }
  const radios = values.map(([value, text], i) => choice(name, i, value, text));
  if (q.optional) radios.push(choice(name, "skip", SKIP, "Skip this question"));
  return [el("div", { class: `choices ${q.type}` }, radios)];
}

/** The survey's questions as a <form>; `onSubmit` gets no arguments; `hint(q)` the text under
 * each question (the two-server mode passes its own); `plan` the survey's skip logic
 * (skip_logic.js skipPlan): a question shows only while its condition holds. */
export function renderForm(survey, onSubmit, hint = hintFor, plan = null) {
  const form = el("form", { id: "answers", novalidate: true });
  survey.questions.forEach((q, index) => {
    const name = fieldName(index);
    const hintId = `${name}-hint`;
    const errorId = `${name}-error`;
    form.append(el("fieldset", { class: "question", id: `${name}-fieldset`,
                                 "aria-describedby": `${hintId} ${errorId}` },
      el("legend", {}, `${index + 1}. ${q.text}`,
         q.optional ? el("span", { class: "optional" }, " (optional)") : null),
      el("p", { class: "hint", id: hintId }, hint(q)),
      inputsFor(q, name, `${hintId} ${errorId}`),
      el("p", { class: "error", id: errorId, hidden: true })));
  });
  if (plan) {
    const live = attachSkipLogic(form, survey, plan,
      (index) => form.querySelector(`#${fieldName(index)}-fieldset`),
      (q, index) => readOne(form, q, index).value);
    if (live) form.append(live);
  }
  form.append(el("button", { type: "submit", class: "primary" }, "Review what will be sent"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    onSubmit();
  });
  return form;
}

function readOne(form, q, index) {
  const name = fieldName(index);
  if (q.type === "multiselect") return loaded("multiselect").readChecked(form, q, name);
  const field = form.elements[name];
  const raw = field ? (field.value ?? "") : "";
  if (raw === "" || raw === SKIP) {
    if (q.optional) return { value: null };
    return { error: "Please answer this question (it is required)." };
  }
  if (q.type === "binary") return { value: raw === "true" };
  if (q.type === "location") return loaded("gridPicker").readCell(q, raw);
  if (q.type === "integer") {
    const text = raw.trim();
    if (!/^[-+]?[0-9]+$/.test(text)) return { error: "Please enter a whole number." };
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < q.min || value > q.max) {
      return { error: `Please enter a whole number from ${q.min} to ${q.max}.` };
    }
    return { value };
  }
  return q.options.includes(raw) ? { value: raw } : { error: "Please choose one option." };
}

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
