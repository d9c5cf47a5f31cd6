// The language switcher of a survey with translations (loaded only for one, optional.js): a
// labelled native <select> listing the survey's languages each by its own name ("Español",
// "Français", Intl.DisplayNames where the browser has it), operable by keyboard like any
// <select>. A change speaks the new language at once; the page keeps every answer given
// (page.js draws its screen again; answers are labels, the same in every language).

import { el } from "./dom.js";
import { t, wordsLanguage } from "./i18n.js";
import { languageName } from "./shown.js";
import { languages } from "./survey_text.js";

const KEY = "ldpsurvey.language";  // language.js reads it

// This module's style (as grid_picker.js does: only a survey with translations downloads it).
const STYLE = `
.language { display: flex; flex-wrap: wrap; justify-content: flex-end; align-items: center;
            gap: 0.5rem; }
.language select { width: auto; }
.words-note { flex-basis: 100%; margin: 0; font-size: 0.9rem; color: var(--muted); }
.fallback { color: var(--muted); }
`;

/** Keep the switcher's choice in this browser, for every survey (never sent). */
function remember(tag) {
  try {
    localStorage.setItem(KEY, tag);
  } catch {
    // not kept: the next visit asks the browser again
  }
}

/** A language's own name, capitalized as a menu item ("español" -> "Español"). */
export function ownName(tag) {
  let name = tag;
  try {
    name = new Intl.DisplayNames([tag], { type: "language" }).of(tag) ?? tag;
  } catch {
    // no DisplayNames for it: the tag itself
  }
  return name.charAt(0).toLocaleUpperCase(tag) + name.slice(1);
}

/** The switcher for `survey`, showing `current`; `onChange(tag)` when another is chosen. */
export function switcher(survey, current, onChange) {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(STYLE);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  const label = el("label", { for: "language" });
  const select = el("select", { id: "language" }, languages(survey).map((tag) =>
    el("option", { value: tag, lang: tag, selected: tag === current }, ownName(tag))));
  const note = el("p", { class: "words-note", id: "words-note" });
  const box = el("div", { class: "language", id: "language-switch" }, label, select, note);
  const name = () => {  // in the page's words, and whether they are the chosen language's
    label.textContent = t("lang.label");
    const tag = document.documentElement.lang;
    note.hidden = tag.split("-")[0] === wordsLanguage();
    note.lang = wordsLanguage();
    note.textContent = note.hidden ? "" : t("lang.noWords", { language: languageName(tag) });
  };
  name();
  select.addEventListener("change", async () => {
    remember(select.value);
    await onChange(select.value);
    name();
  });
  return box;
}
