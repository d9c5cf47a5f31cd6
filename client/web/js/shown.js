// The survey's own text as shown: in the chosen language (survey_text.js, for a survey with
// translations), a fallen-back string marked only where it falls back.

import { el } from "./dom.js";
import { directionOf, t, wordsLanguage } from "./i18n.js";
import { loaded } from "./optional.js";  // piping.js, for a survey that pipes

let text = null;  // a SurveyText, or null: the survey's own text

/** Show the survey through a SurveyText, or (null) as it is. */
export function showText(surveyText) {
  text = surveyText;
}

const own = (s) => ({ text: s, language: null, fellBack: false });

export const titleOf = (survey) => (text ? text.title() : own(survey.title));
export const descriptionOf = (survey) => (text ? text.description() : own(survey.description));
export const questionOf = (q) => (text ? text.question(q.id) : own(q.text));
export const hintOf = (q) => (text ? text.hint(q.id) : q.hint ? own(q.hint) : null);
export const specialLabels = (q) => (q.special != null && typeof q.special === "object"
  ? Object.values(q.special) : []);

/** An option label's shown text (anything else as it is: yes/no, a number, a cell). */
export const optionOf = (q, label) => (text && ((Array.isArray(q.options) &&
  q.options.includes(label)) || specialLabels(q).includes(label))
  ? text.option(q.id, label) : own(label));

/** The text alone, for sentences. */
export const questionText = (q) => questionOf(q).text;
export const optionText = (q, label) => optionOf(q, label).text;

/** A language's name in the page's language ("inglés" for en in Spanish). */
export function languageName(tag, inLanguage = wordsLanguage()) {
  try {
    return new Intl.DisplayNames([inLanguage], { type: "language" }).of(tag) ?? tag;
  } catch {
    return tag;
  }
}

const note = (item) => t("lang.fellBack", { language: languageName(item.language) });

/** A shown string as DOM: when it fell back, in its language (lang, dir) and said so.
 * `piped`: a question's text, hint or option, whose `${id}` references become spans that
 * piping.js refreshPipes writes the earlier answers into. */
export function shown(item, piped = false) {
  const words = piped && pipes(item.text) ? loaded("piping").pipedNodes(item.text) : [item.text];
  if (!item.fellBack) return words.length === 1 ? words[0] : el("span", {}, words);
  const out = document.createDocumentFragment();
  out.append(el("span", { class: "untranslated", lang: item.language,
                          dir: directionOf(item.language) }, words),
             " ", el("small", { class: "fallback" }, note(item)));
  return out;
}

/** Whether a text may pipe an answer (optional.js hasPipes loads piping.js for it). */
const pipes = (text) => typeof text === "string" && text.includes("${");

/** The same for an <option>: its attributes (a piped option's template too: refreshPipes
 * writes its text), its text. */
export const shownAttrs = (item) => ({ ...(item.fellBack ? { lang: item.language } : {}),
                                       ...(pipes(item.text) ? { "data-piped": shownString(item) } : {}) });
export const shownString = (item) => (item.fellBack ? `${item.text} ${note(item)}` : item.text);
