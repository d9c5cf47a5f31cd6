// The page's own words: one catalogue, js/messages/<language>/<part>.js (docs/languages.md,
// "The page"). English's core is built in; the rest comes with optional.js loadWords.

import CORE from "./messages/en/core.js";

/** The languages with a complete catalogue. */
export const CATALOGUES = Object.freeze(["en", "es", "fr"]);

const words = { en: { ...CORE } };
let language = "en";
let locale = "en";
let plurals = null;
const compiled = new Map();

/** The catalogue's language in use and the locale its numbers follow. */
export const wordsLanguage = () => language;
export const wordsLocale = () => locale;

/** Add one part's messages of a language. */
export function addWords(lang, messages) {
  words[lang] = { ...words[lang], ...messages };
  compiled.clear();
}

/** Speak `lang`, numbers per `tag`. */
export function useWords(lang, tag = lang) {
  language = lang;
  locale = tag;
  plurals = null;
}

/** A number English writes as `text` ("3.14", "12.5%"): per locale elsewhere, same digits. */
class Decimal {
  constructor(text) { this.text = String(text); }
  toString() { return this.text; }
}
export const N = (text) => new Decimal(text);

const DECIMAL = /^-?([\d,]*)(?:\.(\d+))?(?:e[-+]?\d+)?(%?)$/;

function decimal(text) {
  const m = DECIMAL.exec(text);
  if (language === "en" || !m) return text;
  const value = Number(text.replace(/[,%]/g, ""));
  const options = { useGrouping: text.includes(",") };
  if (text.includes("e")) {
    const digits = text.split("e")[0].replace(/\D/g, "").replace(/^0+/, "").length || 1;
    options.minimumSignificantDigits = options.maximumSignificantDigits = digits;
    options.notation = "scientific";
  } else {
    options.minimumFractionDigits = options.maximumFractionDigits = (m[2] ?? "").length;
  }
  if (m[3]) options.style = "percent";
  return new Intl.NumberFormat(locale, options).format(m[3] ? value / 100 : value);
}

function shown(value) {
  if (value instanceof Decimal) return decimal(value.text);
  if (value instanceof Worded) return t(value.key, value.params);
  if (typeof value === "number" || typeof value === "bigint") {
    return language === "en" ? String(value)
      : new Intl.NumberFormat(locale, { useGrouping: false }).format(value);
  }
  return String(value ?? "");
}

// --- the message syntax ------------------------------------------------------------------------

const ARG = /\{\s*(\w+)\s*(?:,\s*(plural|select)\s*,)?\s*/y;
const CASE = /\s*(=\d+|\w+)\s*\{/y;

/** A message as nodes: text, {arg}, {arg, type, cases}, {hash}; or SyntaxError. */
export function parseMessage(source) {
  let i = 0;
  const syntaxError = (why) => {
    throw new SyntaxError(`${why} at ${i} in ${JSON.stringify(source)}`);
  };
  function nodes(count, nested) {
    const out = [];
    let text = "";
    while (i < source.length && !(nested && source[i] === "}")) {
      const c = source[i];
      if (c === "#" && count !== null) {
        out.push(text, { hash: count });
        text = "";
        i++;
      } else if (c === "{") {
        out.push(text);
        text = "";
        ARG.lastIndex = i;
        const m = ARG.exec(source) ?? syntaxError("a placeholder needs a name");
        i = ARG.lastIndex;
        if (!m[2]) {
          if (source[i++] !== "}") syntaxError("a placeholder ends with }");
          out.push({ arg: m[1] });
          continue;
        }
        const cases = {};
        for (;;) {
          CASE.lastIndex = i;
          const c2 = CASE.exec(source);
          if (!c2) break;
          i = CASE.lastIndex;
          cases[c2[1]] = nodes(m[2] === "plural" ? m[1] : count, true);
          if (source[i++] !== "}") syntaxError("a case ends with }");
        }
        while (source[i] === " ") i++;
        if (source[i++] !== "}" || !cases.other) syntaxError(`${m[2]} needs an "other" case and a }`);
        out.push({ arg: m[1], type: m[2], cases });
      } else if (c === "}") {
        syntaxError("an unmatched }");
      } else {
        text += c;
        i++;
      }
    }
    out.push(text);
    return out.filter((n) => n !== "");
  }
  const out = nodes(null, false);
  if (i !== source.length) syntaxError("an unmatched }");
  return out;
}

function render(nodes, params) {
  let out = "";
  for (const n of nodes) {
    if (typeof n === "string") out += n;
    else if (n.hash !== undefined) out += shown(params[n.hash]);
    else if (!n.type) out += shown(params[n.arg]);
    else {
      const v = params[n.arg];
      plurals ??= new Intl.PluralRules(locale);
      const key = n.type === "plural" ? n.cases[`=${v}`] ?? n.cases[plurals.select(Number(v))]
        : n.cases[String(v)];
      out += render(key ?? n.cases.other, params);
    }
  }
  return out;
}

/** The message `key` in the page's language, filled in. */
export function t(key, params = {}) {
  const id = `${language} ${key}`;
  let nodes = compiled.get(id);
  if (nodes === undefined) {
    const source = words[language]?.[key] ?? words.en[key];
    if (source === undefined) throw new Error(`no message ${key}`);
    nodes = parseMessage(source);
    compiled.set(id, nodes);
  }
  return render(nodes, params);
}

/** The message with its Node params kept as nodes, for el(). */
export function tNodes(key, params) {
  const nodes = [];
  const marks = {};
  for (const [name, value] of Object.entries(params)) {
    marks[name] = value instanceof Node ? `\u0000${nodes.push(value) - 1}\u0000` : value;
  }
  return t(key, marks).split("\u0000").map((part, i) => (i % 2 ? nodes[part] : part));
}

/** “text”, quoted as the page's language quotes. */
export const quoted = (text) => t("word.quoted", { text });

/** "ltr" or "rtl": the direction of a language's script. */
export function directionOf(tag) {
  try {
    const locale = new Intl.Locale(tag);
    const info = locale.getTextInfo?.() ?? locale.textInfo;
    if (info?.direction) return info.direction;
  } catch {
    // unknown to Intl: the subtags decide
  }
  return /^(ar|ckb|dv|fa|he|ps|sd|ug|ur|yi)\b|-(Arab|Hebr|Syrc|Thaa)\b/i.test(tag) ? "rtl" : "ltr";
}

/** An error in the page's words: `key`, `params` say it again in another language; its
 * message is said when read (a refusal's words load only once one is shown). */
export class Worded extends Error {
  constructor(key, params = {}) {
    super();
    this.key = key;
    this.params = params;
  }

  get message() { return t(this.key, this.params); }
}

/** An error's words in the page's language now. */
export const say = (err) => (err.key ? t(err.key, err.params) : err.message);
