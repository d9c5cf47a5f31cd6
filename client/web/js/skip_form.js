// Skip logic in the form: a question is shown only while its condition holds on the answers
// above it; a change is announced in a polite live region, focus never moves on its own, and a
// hidden question keeps what was entered but is not read. docs/skip-logic.md.

import { el } from "./dom.js";
import { t } from "./i18n.js";
import { questionText } from "./shown.js";
import { applies } from "./skip_logic.js";

/** Which questions apply to the answers entered so far: an array of booleans, in order.
 * `peek(q, index)` reads a question's current value (undefined when not given or invalid). */
export function applicable(survey, plan, peek) {
  const known = new Map();
  return survey.questions.map((q, index) => {
    const on = applies(plan, q, known);
    if (on) {
      const value = peek(q, index);
      if (value !== undefined && value !== null) known.set(q.id, value);
    }
    return on;
  });
}

/**
 * Show only the questions that apply, now and after every change. `fieldsetOf(index)` is a
 * question's fieldset, `peek` as in `applicable`. Returns the live region to append to the
 * form (null when the survey has no conditions).
 */
export function attachSkipLogic(form, survey, plan, fieldsetOf, peek) {
  if (![...plan.values()].some((entry) => entry.condition !== null)) return null;
  const live = el("p", { class: "visually-hidden", id: "skip-live", "aria-live": "polite" });
  const update = (announce) => {
    const shown = applicable(survey, plan, peek);
    const said = [];
    shown.forEach((on, index) => {
      const fieldset = fieldsetOf(index);
      if (fieldset.hidden === !on) return;
      fieldset.hidden = !on;
      fieldset.dataset.applies = String(on);
      said.push(on ? t("skip.applies", { n: index + 1, text: questionText(survey.questions[index]) })
        : t("skip.noLonger", { n: index + 1 }));
    });
    if (announce && said.length) live.textContent = said.join(" ");
  };
  update(false);
  form.addEventListener("change", () => update(true));
  form.addEventListener("input", () => update(true));
  return live;
}
