// Cascading options (shared/option_filter.py; docs/survey-format.md, "Options filtered by an
// earlier answer"): a categorical question with a `filter` shows only the options that go with
// an earlier answer. Loaded only for a survey with one (optional.js needed). What is SHOWN
// changes, never what is sent: the question's mechanism ranges over its full option list, as
// the signed survey says, so the report says nothing about the filter's answer beyond its ε.
// Every option shows when the filter cannot narrow (the earlier question not asked, skipped,
// answered with a special value, or no option going with its answer), as in Python.

import { unitOf } from "./types/index.js";

/** The options of question `by` its answer holds (none: no answer, "not asked", a special
 * value), as shared/option_filter.py chosen. */
export function chosen(by, answer) {
  const options = new Set(by.options);
  if (typeof answer === "string") return new Set(options.has(answer) ? [answer] : []);
  if (Array.isArray(answer)) return new Set(answer.filter((a) => options.has(a)));
  return new Set();
}

/** The options of `q` shown when `by` was answered `answer` (shared/option_filter.py
 * shown_options): those whose values meet the answer, or all of them when none does. */
export function shownOptions(q, by, answer) {
  if (q.filter == null || by === undefined) return q.options;
  const picked = chosen(by, answer);
  const shown = q.options.filter((o) => (q.filter.values[o] ?? []).some((v) => picked.has(v)));
  return shown.length ? shown : q.options;
}

/** Whether the signed `filter` of `q` has the shape Python writes (null: it does). */
export function filterMismatch(q, earlier) {
  const f = q.filter;
  if (typeof f !== "object" || f === null || Array.isArray(f) || typeof f.by !== "string") {
    return "filter must be {by, values}";  // not words: a ManifestMismatch detail
  }
  const by = earlier.find((p) => p.id === f.by);
  if (!by || !unitOf(by).filterReads) {
    const name = JSON.stringify(f.by);
    return `filter.by ${name} is not an earlier question with options`;  // not words: a ManifestMismatch detail
  }
  const values = f.values;
  if (typeof values !== "object" || values === null || Array.isArray(values)
      || Object.keys(values).length !== q.options.length
      || q.options.some((o) => !Array.isArray(values[o]) || !values[o].length
                         || values[o].some((v) => !by.options.includes(v)))) {
    return "filter.values must list each option's answers of filter.by";  // not words: a ManifestMismatch detail
  }
  return null;
}

/** Show, in the fieldset of a question, only its `shown` options (radios or a <select>); an
 * option that hides is unchecked, since a hidden option is never the answer. Returns whether
 * the answer was cleared. */
function narrow(fieldset, q, shown) {
  const own = new Set(q.options);  // special values and "skip" are never filtered
  const visible = new Set(shown);
  let cleared = false;
  for (const input of fieldset.querySelectorAll("input[type=radio]")) {
    if (!own.has(input.value)) continue;
    const hide = !visible.has(input.value);
    const row = input.closest(".choice") ?? input;
    if (row.hidden !== hide) row.hidden = hide;
    if (hide && input.checked) {
      input.checked = false;
      cleared = true;
    }
  }
  for (const option of fieldset.querySelectorAll("select option")) {
    if (!own.has(option.value)) continue;
    const hide = !visible.has(option.value);
    option.hidden = hide;
    option.disabled = hide;
    if (hide && option.selected) {
      option.parentElement.value = "";
      cleared = true;
    }
  }
  return cleared;
}

/** Keep each filtered question showing the options that go with the answer above it, now and
 * after every change (after skip logic's listener, attached first). `peek(q, index)`: a
 * question's current value (undefined when not valid); `fieldsetOf(index)`: its fieldset,
 * hidden while it does not apply. A cleared answer is a change (a later filter or condition
 * may read it): the form hears it again. */
export function attachFilters(form, survey, peek, fieldsetOf) {
  const at = new Map(survey.questions.map((q, index) => [q.id, [q, index]]));
  const answerOf = (id) => {
    const [q, index] = at.get(id);
    return fieldsetOf(index).hidden ? undefined : peek(q, index);
  };
  const update = () => {
    let cleared = false;
    survey.questions.forEach((q, index) => {  // in order: a chain reads the narrowed answers
      if (q.filter == null) return;
      const by = at.get(q.filter.by)?.[0];
      cleared = narrow(fieldsetOf(index), q, shownOptions(q, by, answerOf(q.filter.by)))
        || cleared;
    });
    if (cleared) form.dispatchEvent(new Event("change"));
  };
  update();
  form.addEventListener("change", update);
}
