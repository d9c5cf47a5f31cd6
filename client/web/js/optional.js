// The modules and catalogue parts only some surveys need, imported once the signed survey
// says so (manifest.js loadFor, before any mechanism is built; synchronous code takes them from
// `loaded`). docs/web.md, "Modules loaded on demand"; docs/languages.md, "The page".

import { addWords, wordsLanguage } from "./i18n.js";

const IMPORTS = Object.freeze({
  location: () => import("./location.js"),
  gridPicker: () => import("./grid_picker.js"),
  twoServerVerify: () => import("./twoserver/verify.js"),
  twoServer: () => import("./twoserver/flow.js"),
  multiselect: () => import("./multiselect.js"),
  conditions: () => import("./conditions.js"),
  skipReview: () => import("./skip_review.js"),
  skipForm: () => import("./skip_form.js"),
  designs: () => import("./designs.js"),
  surveyText: () => import("./survey_text.js"),
  switcher: () => import("./switcher.js"),
  invite: () => import("./invite.js"),
  // the randomizers' cores (CORE_MODULES)
  bitmaps: () => import("./bitmaps.js"),
  hashing: () => import("./hashing.js"),
  ordinal: () => import("./ordinal.js"),
  askedGeometric: () => import("./asked_geometric.js"),
  geoExp: () => import("./geo_exp.js"),
  twoLayer: () => import("./two_layer.js"),
  setCores: () => import("./set_cores.js"),
  sha256: () => import("./sha256.js"),  // the memo of a survey with a series
  twoServerSets: () => import("./twoserver/multiselect.js"),
});

/** The module of each core loaded for a survey naming its mechanism (mechanisms.js has the
 * others; geo_exp's and psfo_grr's come with their type's module). */
const CORE_MODULES = Object.freeze({
  oue: "bitmaps", sue: "bitmaps", ss: "bitmaps", olh: "hashing", hr: "hashing",
  ordinal_exp: "ordinal", asked_geometric: "askedGeometric", option_rr: "setCores",
  set_ue: "setCores", psfo_olh: "setCores",
  warner: "designs", crosswise: "designs", forced_response: "designs",
  unrelated_question: "designs", matrix: "designs",
});

/** The message catalogue's files: per language, per part (i18n.js; docs/languages.md). */
const WORDS = Object.freeze({
  en: {
    multiselect: () => import("./messages/en/multiselect.js"),
    location: () => import("./messages/en/location.js"),
    twoserver: () => import("./messages/en/twoserver.js"),
    skip: () => import("./messages/en/skip.js"),
    designs: () => import("./messages/en/designs.js"),
    cores: () => import("./messages/en/cores.js"),
    disclosed: () => import("./messages/en/disclosed.js"),
    switcher: () => import("./messages/en/switcher.js"),
    refusals: () => import("./messages/en/refusals.js"),
    invite: () => import("./messages/en/invite.js"),
  },
  es: {
    core: () => import("./messages/es/core.js"),
    multiselect: () => import("./messages/es/multiselect.js"),
    location: () => import("./messages/es/location.js"),
    twoserver: () => import("./messages/es/twoserver.js"),
    skip: () => import("./messages/es/skip.js"),
    designs: () => import("./messages/es/designs.js"),
    cores: () => import("./messages/es/cores.js"),
    disclosed: () => import("./messages/es/disclosed.js"),
    switcher: () => import("./messages/es/switcher.js"),
    refusals: () => import("./messages/es/refusals.js"),
    invite: () => import("./messages/es/invite.js"),
  },
  fr: {
    core: () => import("./messages/fr/core.js"),
    multiselect: () => import("./messages/fr/multiselect.js"),
    location: () => import("./messages/fr/location.js"),
    twoserver: () => import("./messages/fr/twoserver.js"),
    skip: () => import("./messages/fr/skip.js"),
    designs: () => import("./messages/fr/designs.js"),
    cores: () => import("./messages/fr/cores.js"),
    disclosed: () => import("./messages/fr/disclosed.js"),
    switcher: () => import("./messages/fr/switcher.js"),
    refusals: () => import("./messages/fr/refusals.js"),
    invite: () => import("./messages/fr/invite.js"),
  },
});
/** The part of the words each optional module speaks with. */
const PART = Object.freeze({ multiselect: "multiselect", gridPicker: "location",
                             twoServer: "twoserver", conditions: "skip",
                             skipReview: "skip", designs: "designs", invite: "invite",
                             bitmaps: "cores", hashing: "cores", ordinal: "cores",
                             twoLayer: "cores", setCores: "cores", switcher: "switcher" });
const parts = new Set(["core"]);
const added = new Set(["en core"]);

/** Load the page's words in `lang` (a catalogue's language): every part the page needs. */
export async function loadWords(lang) {
  await Promise.all([...parts].map(async (part) => {
    if (added.has(`${lang} ${part}`)) return;
    addWords(lang, (await WORDS[lang][part]()).default);
    added.add(`${lang} ${part}`);
  }));
}

/** Load the words of refusals (a page that refuses needs them; one that answers does not). */
export async function loadRefusals() {
  parts.add("refusals");
  await loadWords(wordsLanguage());
}

export async function loadModules(names) {
  for (const name of names) if (PART[name]) parts.add(PART[name]);
  await Promise.all([...names.map(async (name) => {
    modules[name] ??= await IMPORTS[name]();
  }), loadWords(wordsLanguage())]);
}

const modules = {};

/** The optional modules a survey (its questions checked for shape) needs, by name. */
export function needed(survey) {
  const names = [];
  if (survey.questions.some((q) => q && q.type === "location")) names.push("location", "gridPicker", "geoExp");
  if (survey.questions.some((q) => q && q.type === "multiselect")) names.push("multiselect");
  if (survey.questions.some((q) => q && q.relevant !== undefined)) {
    names.push("conditions", "skipReview", "skipForm");
  }
  if (survey.collection !== undefined || survey.two_server !== undefined) {
    names.push("twoServerVerify", "twoServer");
    if (names.includes("multiselect")) names.push("twoServerSets");
  }
  if (survey.translations !== undefined) names.push("surveyText", "switcher");
  if (survey.series != null) names.push("sha256");
  for (const q of survey.questions) {
    if (q && Object.hasOwn(CORE_MODULES, q.mechanism)) names.push(CORE_MODULES[q.mechanism]);
    if (q && q.instantaneous_epsilon != null) names.push("twoLayer");
  }
  return [...new Set(names)];
}

/** Load what `survey` needs, each module once, and its words in the page's language. */
export async function loadFor(survey) {
  // a disclosed question's words (no module: form, review and page say them)
  if (survey.questions.some((q) => q && q.disclosed === true)) parts.add("disclosed");
  await loadModules(needed(survey));
}

/** Load every optional module and its words (tests and benches that build mechanisms without a
 * survey). */
export async function loadAll() {
  parts.add("disclosed");
  await loadModules(Object.keys(IMPORTS));
}

/** A loaded optional module; throws (a bug in the page, not the survey's fault) if it is not. */
export function loaded(name) {
  const module = modules[name];
  if (!module) throw new Error(`the ${name} module is not loaded (optional.js loadFor)`);
  return module;
}
