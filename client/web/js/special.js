// Special values ("Don't know", "Prefer not to say": docs/special-values.md), what only a
// survey that has them needs: the check of a signed `special`, a number's radios.

import { el } from "./dom.js";
import { isText } from "./manifest.js";
import { optionOf, shown, specialLabels } from "./shown.js";
import { NOT_ASKED } from "./skip_logic.js";

/** Whether `special` is what fields.special allows, on a type that takes it. */
export function specialFits(q, unit) {
  const s = q.special;
  if (s === null || typeof s !== "object" || Array.isArray(s)) return false;
  const labels = Object.values(s);
  return labels.length >= 1 && labels.length <= 4 && q.disclosed !== true &&
    unit.takesSpecial && Object.keys(s).every((n) => /^[a-z0-9_]{1,63}$/.test(n)) &&
    labels.every((l) => isText(l, 500) && l !== NOT_ASKED && !(q.options ?? []).includes(l)) &&
    new Set(labels).size === labels.length;
}

/** A number's special values as radios below its box: choosing one empties the box, typing
 * a number unchecks them (integer.js read takes a checked one). */
export function numberRadios(q, name, box) {
  const radios = specialLabels(q).map((label, i) => el("input", {
    type: "radio", name: `${name}-special`, id: `${name}-special-${i}`, value: label,
    onchange: () => { box.value = ""; } }));
  box.addEventListener("input", () => radios.forEach((r) => { r.checked = false; }));
  return el("div", { class: "choices special" }, radios.map((radio, i) => el("div",
    { class: "choice" }, radio, el("label", { for: radio.id },
                                   shown(optionOf(q, specialLabels(q)[i]), true)))));
}
