// A survey's text in one language, falling back string by string to its base language:
// shared/translations.py (SurveyText, best_language, canonical_tag) in JavaScript, proven
// equal by the shared vectors of tests/web/test_survey_text_vectors.py. docs/languages.md says
// what the page does with it. Pure functions of the verified survey: nothing is fetched.

export const DEFAULT_LANGUAGE = "en";

// RFC 5646 langtag, well-formed (shared/translations.py _LANGTAG: 2-3 letter languages only).
const LANGTAG = new RegExp(
  "^([A-Za-z]{2,3}(?:-[A-Za-z]{3}){0,3})" +
  "(?:-([A-Za-z]{4}))?" +
  "(?:-([A-Za-z]{2}|[0-9]{3}))?" +
  "((?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*" +
  "(?:-[0-9A-WYZa-wyz](?:-[A-Za-z0-9]{2,8})+)*" +
  "(?:-[Xx](?:-[A-Za-z0-9]{1,8})+)?)$");

/** The tag in BCP 47's canonical case, or null if it is not a well-formed tag ("_" is "-"). */
export function canonicalTag(tag) {
  if (typeof tag !== "string") return null;
  const m = LANGTAG.exec(tag.trim().replaceAll("_", "-"));
  if (m === null) return null;
  const parts = [m[1].toLowerCase()];
  if (m[2]) parts.push(m[2][0].toUpperCase() + m[2].slice(1).toLowerCase());
  if (m[3]) parts.push(m[3].toUpperCase());
  return parts.join("-") + m[4].toLowerCase();
}

/** The survey's languages: its base language first, then its translations. */
export function languages(survey) {
  return [survey.language ?? DEFAULT_LANGUAGE, ...Object.keys(survey.translations ?? {})];
}

/** The available tag that best matches the first preference that matches any (e.g.
 * navigator.languages), by BCP 47 prefix: exact (case-insensitive), else the longest available
 * prefix of the preference (es-MX -> es), else the first available tag the preference is a
 * prefix of (es -> es-419). null when none matches: the caller shows the base language. */
export function bestLanguage(available, preferences) {
  const byLower = new Map(available.map((tag) => [tag.toLowerCase(), tag]));
  for (const raw of preferences) {
    const wanted = canonicalTag(raw);
    if (wanted === null) continue;
    const want = wanted.toLowerCase();
    if (byLower.has(want)) return byLower.get(want);
    const parts = want.split("-");
    for (let n = parts.length - 1; n > 0; n--) {
      const prefix = parts.slice(0, n).join("-");
      if (byLower.has(prefix)) return byLower.get(prefix);
    }
    const longer = available.find((tag) => tag.toLowerCase().startsWith(want + "-"));
    if (longer !== undefined) return longer;
  }
  return null;
}

// Only a question whose type takes options (groups, regions) has them: the signed canonical
// form holds a type's own keys alone (js/types/), so the text asks the question, not its type.
// A translated string by its name (an option, group or region named "constructor" is a name
// like any other, not Object.prototype's).
const own = (table, name) => (table && Object.hasOwn(table, name) ? table[name] : undefined);

/** Whether a string reads the same in every language: it has no letter, only digits,
 * punctuation, symbols and spaces ("18-24", "10+", "50 %"). Untranslated, it is not missing
 * and is shown without "(in English)" (shared/translations.py same_in_every_language). */
export const sameInEveryLanguage = (text) => !/\p{L}/u.test(text);

/** A survey's display text in one language. Each accessor returns {text, language, fellBack}:
 * the chosen language's text where the translation gives it, else the base language's with
 * fellBack true (the page says so only there), unless it has no letters (sameInEveryLanguage).
 * A hint only in the chosen language is shown there only; a question with no hint in either
 * has none (null). */
export class SurveyText {
  constructor(survey, language = null) {
    this.base = survey.language ?? DEFAULT_LANGUAGE;
    const translations = survey.translations ?? {};
    this.language = language === null || language === this.base ? this.base : language;
    if (this.language !== this.base && !(this.language in translations)) {
      throw new RangeError(`the survey has no text in ${this.language}`);
    }
    this.survey = survey;
    this.questions = new Map(survey.questions.map((q) => [q.id, q]));
    this.t = translations[this.language] ?? {};
  }

  /** The best language of the survey for these preferences (base when none matches). */
  static choose(survey, preferences) {
    return new SurveyText(survey, bestLanguage(languages(survey), preferences));
  }

  get translated() {
    return this.language !== this.base;
  }

  title() {
    return this.#pick(this.t.title, this.survey.title ?? "");
  }

  description() {
    return this.#pick(this.t.description, this.survey.description ?? "");
  }

  question(id) {
    return this.#pick(this.#qt(id).text, this.questions.get(id).text);
  }

  hint(id) {
    const base = this.questions.get(id)?.hint ?? null;
    const mine = this.#qt(id).hint ?? null;
    if (mine === null && base === null) return null;
    if (base === null) return { text: mine, language: this.language, fellBack: false };
    return this.#pick(mine, base);
  }

  option(id, label) {
    const q = this.questions.get(id);
    if (q === undefined || !(q.options ?? []).includes(label) &&
        !Object.values(q.special ?? {}).includes(label)) {
      throw new RangeError(`${JSON.stringify(label)} is not an option of ${id}`);
    }
    return this.#pick(own(this.#qt(id).options, label), label);
  }

  /** A categorical/ordinal question's group name as shown (the name itself in the base
   * language); RangeError for a name that is not one of its groups. */
  group(id, name) {
    const q = this.questions.get(id);
    if (q === undefined || !Object.hasOwn(q.groups ?? {}, name)) {
      throw new RangeError(`${JSON.stringify(name)} is not a group of ${id}`);
    }
    return this.#pick(own(this.#qt(id).groups, name), name);
  }

  /** A location question's region name as shown (the name itself in the base language);
   * RangeError for a name that is not one of its regions. */
  region(id, name) {
    const q = this.questions.get(id);
    if (q === undefined || !Object.hasOwn(q.regions ?? {}, name)) {
      throw new RangeError(`${JSON.stringify(name)} is not a region of ${id}`);
    }
    return this.#pick(own(this.#qt(id).regions, name), name);
  }

  /** Every string shown in the base language for want of a translation. */
  fallbacks() {
    if (!this.translated) return [];
    const out = [];
    for (const [name, shown] of [["title", this.title()], ["description", this.description()]]) {
      if (shown.fellBack && shown.text) out.push(name);
    }
    for (const [id, q] of this.questions) {
      if (this.question(id).fellBack) out.push(`questions.${id}.text`);
      const hint = this.hint(id);
      if (hint !== null && hint.fellBack) out.push(`questions.${id}.hint`);
      for (const label of q.options ?? []) {
        if (this.option(id, label).fellBack) out.push(`questions.${id}.options.${label}`);
      }
      for (const name of Object.keys(q.groups ?? {})) {
        if (this.group(id, name).fellBack) out.push(`questions.${id}.groups.${name}`);
      }
      for (const name of Object.keys(q.regions ?? {})) {
        if (this.region(id, name).fellBack) out.push(`questions.${id}.regions.${name}`);
      }
    }
    return out;
  }

  #qt(id) {
    if (!this.questions.has(id)) throw new RangeError(`no question ${id}`);
    return own(this.t.questions, id) ?? {};
  }

  #pick(mine, base) {
    if (!this.translated) return { text: base, language: this.base, fellBack: false };
    if (mine === undefined || mine === null) {
      return { text: base, language: this.base, fellBack: !sameInEveryLanguage(base) };
    }
    return { text: mine, language: this.language, fellBack: false };
  }
}

// --- the canonical form of the translations (canonical.js) ----------------------------------

const isTable = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

/** Only the given keys of a table, each a string (Translation.to_dict keeps what is set). */
function picked(table, keys) {
  const d = {};
  for (const key of keys) {
    if (table[key] == null) continue;
    if (typeof table[key] !== "string") throw new TypeError(`a translation's ${key} is text`);
    d[key] = table[key];
  }
  return d;
}

/** Translation.to_dict() of every language (canonical.js, the signed bytes): title, description, questions' text, hint,
 * option texts, group and region names, each only when given. */
export function canonicalTranslations(all) {
  if (!isTable(all)) throw new TypeError("translations is a table of languages");
  const out = {};
  for (const [tag, t] of Object.entries(all)) {
    if (!isTable(t)) throw new TypeError("a translation is a table");
    const d = picked(t, ["title", "description"]);
    if (t.questions != null) {
      if (!isTable(t.questions)) throw new TypeError("a translation's questions is a table");
      d.questions = {};
      for (const [id, q] of Object.entries(t.questions)) {
        if (!isTable(q)) throw new TypeError("a question's translation is a table");
        const e = picked(q, ["text", "hint"]);
        // option labels, group and region names -> shown text, each only when given
        for (const key of ["options", "groups", "regions"]) {
          if (q[key] == null) continue;
          if (!isTable(q[key])) throw new TypeError(`translated ${key} are a table`);
          e[key] = picked(q[key], Object.keys(q[key]));
        }
        d.questions[id] = e;
      }
    }
    out[tag] = d;
  }
  return out;
}
