// Which language the page speaks (docs/languages.md, "The page"): the switcher's choice, kept
// in localStorage for every survey, then navigator.languages, else the survey's base language.

import { CATALOGUES, directionOf, useWords, wordsLanguage } from "./i18n.js";
import { loadWords, loaded } from "./optional.js";

const KEY = "ldpsurvey.language";

/** The respondent's languages, the switcher's choice first. */
export function preferences() {
  let chosen = null;
  try {
    chosen = localStorage.getItem(KEY);
  } catch {
    // storage refused: the browser's languages alone
  }
  return [...(chosen ? [chosen] : []), ...(navigator.languages ?? [navigator.language])];
}

const primary = (tag) => String(tag).split(/[-_]/)[0].toLowerCase();

/** The first preferred language with a catalogue, else English (before a survey is known). */
export function firstCatalogue(prefs) {
  return prefs.map(primary).find((lang) => CATALOGUES.includes(lang)) ?? "en";
}

/** The survey's language for these preferences, else its base. */
export function chooseLanguage(survey, prefs) {
  const base = survey.language ?? "en";
  if (!survey.translations) return base;
  const { bestLanguage, languages } = loaded("surveyText");
  return bestLanguage(languages(survey), prefs) ?? base;
}

/** The locale of numbers and dates: the respondent's variant of `tag` (es-MX for es). */
function localeOf(tag, prefs) {
  const lower = tag.toLowerCase();
  const own = prefs.find((p) => {
    const x = String(p).replaceAll("_", "-").toLowerCase();
    return x === lower || x.startsWith(`${lower}-`);
  });
  try {
    return Intl.getCanonicalLocales(own ?? tag)[0];
  } catch {
    return tag;
  }
}

/** Speak `tag`: `lang`, `dir`, the page's words in its language (else English). */
export async function speak(tag) {
  let lang = CATALOGUES.includes(primary(tag)) ? primary(tag) : "en";
  try {
    await loadWords(lang);
  } catch {
    lang = "en";  // not loaded (a missing file, the connection dropped)
  }
  useWords(lang, localeOf(lang === primary(tag) ? tag : lang, preferences()));
  document.documentElement.lang = tag;
  document.documentElement.dir = directionOf(tag);
}

// The blocks that hold the page's words alone (docs/languages.md, "The page").
const WORDS = "#status, .lead, .budget, .key, .hint, .how, .cost, .total, .notice, .error, " +
  ".limit, .how-many, .refusal, summary, button, #review > p, #receipt > p, h2";

/** In a language without a catalogue, the page's words are English: their blocks say so
 * (lang), for screen readers and hyphenation. */
export function markWords(root) {
  const lang = wordsLanguage();
  const other = primary(document.documentElement.lang) !== lang;
  for (const node of root.querySelectorAll(WORDS)) {
    if (other) node.lang = lang;
    else node.removeAttribute("lang");
  }
}
