// Which language the page speaks (docs/languages.md, "The page"): the switcher's choice, kept
// in localStorage for every survey, then navigator.languages, else the survey's base language.

import { CATALOGUES, directionOf, useWords } from "./i18n.js";
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
