// The modules and catalogue parts only some surveys need, imported once the signed survey
// says so (manifest.js loadFor, before any mechanism is built; synchronous code takes them from
// `loaded`). docs/web.md, "Modules loaded on demand"; docs/languages.md, "The page".

import { addWords, wordsLanguage } from "./i18n.js";
import {
  TYPE_NAMES, hasUnit, modulesOf, register, twoServerModulesOf, typesOf, wordsOf,
} from "./types/index.js";

/** Each question type's unit (js/types/; the registry, types/index.js, names the types). */
const TYPE_IMPORTS = Object.freeze({
  binary: () => import("./types/binary.js"),
  categorical: () => import("./types/categorical.js"),
  integer: () => import("./types/integer.js"),
  ordinal: () => import("./types/ordinal.js"),
  location: () => import("./types/location.js"),
  multiselect: () => import("./types/multiselect.js"),
  decimal: () => import("./types/decimal.js"),
});

const IMPORTS = Object.freeze({
  // what the question types' units import (types/index.js modulesOf), asked for with them
  location: () => import("./location.js"),
  geoExp: () => import("./geo_exp.js"),
  gridPicker: () => import("./grid_picker.js"),
  multiselect: () => import("./multiselect.js"),
  geometric: () => import("./geometric.js"),
  decimalNumber: () => import("./decimal_number.js"),
  numericMechanisms: () => import("./numeric_mechanisms.js"),
  numberGrid: () => import("./number_grid.js"),
  squareWave: () => import("./square_wave.js"),
  twoServerVerify: () => import("./twoserver/verify.js"),
  twoServer: () => import("./twoserver/flow.js"),
  twoServerCrosstabs: () => import("./twoserver/crosstabs.js"),  // the ε limit's (trust.js)
  twoServerUpload: () => import("./twoserver/upload.js"),  // Prio3 and HPKE: to send
  // what reviewing and sending need (every survey; `later`)
  review: () => import("./review.js"),
  composition: () => import("./composition.js"),
  outbox: () => import("./outbox.js"),
  api: () => import("./api.js"),  // the outbox's and invite.js's (where.js: an exported page's)
  conditions: () => import("./conditions.js"),
  skipReview: () => import("./skip_review.js"),
  special: () => import("./special.js"),
  skipForm: () => import("./skip_form.js"),
  designs: () => import("./designs.js"),
  surveyText: () => import("./survey_text.js"),
  switcher: () => import("./switcher.js"),
  invite: () => import("./invite.js"),
  piping: () => import("./piping.js"),
  optionFilter: () => import("./option_filter.js"),
  // the randomizers' cores (CORE_MODULES)
  bitmaps: () => import("./bitmaps.js"),
  hashing: () => import("./hashing.js"),
  ordinal: () => import("./ordinal.js"),
  askedGeometric: () => import("./asked_geometric.js"),
  askedGrid: () => import("./asked_grid.js"),
  twoLayer: () => import("./two_layer.js"),
  setCores: () => import("./set_cores.js"),
  memo: () => import("./memo.js"),  // a survey with a series (its memo, with sha256.js)
  sha256: () => import("./sha256.js"),
  twoServerSets: () => import("./twoserver/multiselect.js"),
  // a number on a grid in the two-server mode: a type's `twoServer` modules (js/types/index.js)
  twoServerGrid: () => import("./twoserver/fixed_point.js"),
  bytes: () => import("./bytes.js"),  // base64url (twoserver/verify.js)
});

/** The optional modules each of those imports statically (what every page loads aside), asked
 * for alongside it rather than once it has arrived: one round trip on a slow network, not two
 * (tests/client/test_web_files.py holds this table to the modules' imports; a two-server
 * upload's Prio3 and HPKE files, which load at the respondent's first answer, aside). */
const ALONGSIDE = Object.freeze({
  twoServerVerify: ["bytes"], twoServer: ["twoServerCrosstabs"], geoExp: ["location"],
  numberGrid: ["decimalNumber"], switcher: ["surveyText"], invite: ["outbox", "api"],
  outbox: ["api"],
  setCores: ["multiselect", "hashing"], memo: ["sha256"], twoServerSets: ["multiselect"],
});

/** `names` with the modules each imports (ALONGSIDE), each once. */
const withAlongside = (names) => [...new Set(names.flatMap((name) => [name,
  ...(Object.hasOwn(ALONGSIDE, name) ? ALONGSIDE[name] : [])]))];

/** The module(s) of each core loaded for a survey naming its mechanism (mechanisms.js has the
 * others; geo_exp's and psfo_grr's come with their type's unit, js/types/; geometric's with
 * the integer unit, and for a decimal question that names it). */
const CORE_MODULES = Object.freeze({
  oue: "bitmaps", sue: "bitmaps", ss: "bitmaps", olh: "hashing", hr: "hashing",
  ordinal_exp: "ordinal", asked_geometric: "askedGeometric", option_rr: "setCores",
  set_ue: "setCores", psfo_olh: "setCores",
  warner: "designs", crosswise: "designs", forced_response: "designs",
  unrelated_question: "designs", matrix: "designs",
  // the number grid's (number_grid.js: a decimal imports it, an integer naming one loads it)
  duchi: ["numericMechanisms", "numberGrid"], piecewise: ["numericMechanisms", "numberGrid"],
  hybrid: ["numericMechanisms", "numberGrid"], one_bit_mean: ["numericMechanisms", "numberGrid"],
  geometric: "geometric", square_wave: ["squareWave", "numberGrid"],
  // a decimal follow-up on a randomized answer: the asked bit and its mean part's module
  asked_grid: ["askedGrid", "numericMechanisms"],
  // a number's mean and distribution: its mean part's module (params.mean) and the square wave
  mean_and_distribution: (q) => [CORE_MODULES[q.params?.mean], "squareWave", "numberGrid"]
    .flat(),
});

/** The message catalogue's files: per language, per part (i18n.js; docs/languages.md). */
const WORDS = Object.freeze({
  en: {
    multiselect: () => import("./messages/en/multiselect.js"),
    decimal: () => import("./messages/en/decimal.js"),
    location: () => import("./messages/en/location.js"),
    twoserver: () => import("./messages/en/twoserver.js"),
    skip: () => import("./messages/en/skip.js"),
    special: () => import("./messages/en/special.js"),
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
    decimal: () => import("./messages/es/decimal.js"),
    location: () => import("./messages/es/location.js"),
    twoserver: () => import("./messages/es/twoserver.js"),
    skip: () => import("./messages/es/skip.js"),
    special: () => import("./messages/es/special.js"),
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
    decimal: () => import("./messages/fr/decimal.js"),
    location: () => import("./messages/fr/location.js"),
    twoserver: () => import("./messages/fr/twoserver.js"),
    skip: () => import("./messages/fr/skip.js"),
    special: () => import("./messages/fr/special.js"),
    designs: () => import("./messages/fr/designs.js"),
    cores: () => import("./messages/fr/cores.js"),
    disclosed: () => import("./messages/fr/disclosed.js"),
    switcher: () => import("./messages/fr/switcher.js"),
    refusals: () => import("./messages/fr/refusals.js"),
    invite: () => import("./messages/fr/invite.js"),
  },
});
/** The part of the words each optional module speaks with. */
const PART = Object.freeze({ twoServer: "twoserver", conditions: "skip", numberGrid: "decimal",
                             skipReview: "skip", special: "special", designs: "designs",
                             invite: "invite",
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

export async function loadModules(asked, words = []) {
  const names = withAlongside(asked);
  for (const name of names) if (PART[name]) parts.add(PART[name]);
  for (const part of words) parts.add(part);
  await Promise.all([...names.map(async (name) => {
    modules[name] ??= await IMPORTS[name]();
  }), loadWords(wordsLanguage())]);
}

const modules = {};

/** The optional module `name`, imported once, without words: where.js's api.js, to ask an
 * exported page's server for its survey as the page starts (loadModules would wait for the
 * page's first words too). */
export const moduleNamed = async (name) => (modules[name] ??= await IMPORTS[name]());

/** Whether a survey's texts may pipe earlier answers (`${id}`: piping.js, docs/piping.md):
 * any "${" in its questions or translations loads the module (one more than needed at worst). */
export function hasPipes(survey) {
  if (!piping.has(survey)) {
    piping.set(survey, JSON.stringify([survey.questions, survey.translations ?? null])
      .includes("${"));
  }
  return piping.get(survey);
}
const piping = new WeakMap();  // survey -> whether it pipes (read once)

/** The optional modules a survey (its questions checked for shape) needs to show its
 * questions, by name (its questions' types' units are loaded apart: js/types/index.js; what
 * only reviewing and sending need comes later). */
export function needed(survey) {
  const names = modulesOf(typesOf(survey));
  if (survey.questions.some((q) => q && q.relevant !== undefined)) {
    names.push("conditions", "skipForm");
  }
  if (survey.questions.some((q) => q && q.special !== undefined)) names.push("special");
  if (survey.collection !== undefined || survey.two_server !== undefined) {
    names.push("twoServerVerify", "twoServer", "twoServerCrosstabs");
  }
  if (survey.translations !== undefined) names.push("surveyText", "switcher");
  if (hasPipes(survey)) names.push("piping");
  if (survey.questions.some((q) => q && q.filter !== undefined)) names.push("optionFilter");
  if (survey.series != null) names.push("memo", "sha256");
  for (const q of survey.questions) {
    const core = q && Object.hasOwn(CORE_MODULES, q.mechanism) ? CORE_MODULES[q.mechanism]
      : null;
    if (core) names.push(...[typeof core === "function" ? core(q) : core].flat());
    if (q && q.instantaneous_epsilon != null) names.push("twoLayer");
  }
  // a module named by what the (not yet verified) survey says is one of this page's own
  return withAlongside(names.filter((name) => typeof name === "string" &&
                                              Object.hasOwn(IMPORTS, name)));
}

/** Import the units of the given types (registered in types/index.js), each once; their
 * common module (types/base.js, which every unit imports) is asked for alongside them, not one
 * round trip after. */
async function loadTypes(names) {
  const missing = names.filter((name) => !hasUnit(name));
  if (!missing.length) return;
  await Promise.all([import("./types/base.js"), ...missing.map(async (name) => {
    if (!hasUnit(name)) register((await TYPE_IMPORTS[name]()).default);
  })]);
}

/** Start importing the modules an arrived, not yet verified survey will need (its types'
 * units, the optional modules) and their words in `lang` (the page's first language), so that
 * they load while the rest of the page does (where.js). Only this page's own files are asked
 * for, by name; nothing from the document runs, and loadFor decides again once the survey is
 * verified. */
export function prefetch(survey, lang) {
  const types = typesOf(survey);
  const names = needed(survey);  // not what only sending needs: after the questions (later)
  for (const load of [() => import("./types/base.js"), ...types.map((name) => TYPE_IMPORTS[name]),
                      ...names.map((name) => IMPORTS[name])]) {
    load().catch(() => {});  // loadFor says it if a module cannot load
  }
  // every part loadFor will load, so that none is asked for only once the survey is verified
  const speaking = [...wordsFor(survey, types), ...names.map((name) => PART[name]).filter(Boolean)];
  if (speaking.length) {
    for (const part of speaking) parts.add(part);
    loadWords(lang).catch(() => {});
  }
}

/** What reviewing and sending need, for every survey. */
const SENDING = Object.freeze(["review", "composition", "outbox"]);

/** Whether `survey`'s review and receipt speak of questions not asked (skip logic, special
 * values: skip_review.js and the "skip" words; the words load with the questions, since the
 * form and the mechanisms speak them too). */
const reviewsSkips = (survey) => survey.questions.some((q) => q && (q.relevant !== undefined ||
                                                                    q.special !== undefined));

/** The modules `survey` needs only to review and send (and to show an earlier answer's
 * receipt), not to show its questions: loaded (laterFor) once they are on screen, before the
 * page says it is ready. */
export const later = (survey) => [...SENDING, ...(reviewsSkips(survey) ? ["skipReview"] : [])];

/** Load what reviewing and sending `survey` need (later), each module once. */
export const laterFor = (survey) => loadModules(later(survey));

/** The modules only a two-server survey's upload needs (Prio3 and HPKE, the types' two-server
 * measurements: about 12 kB compressed, a sixth of such a page): loaded (uploadFor) once the
 * respondent starts answering, and awaited before the review is shown, not before the
 * questions; none for a survey collected by one server. */
export function upload(survey) {
  if (survey.collection === undefined && survey.two_server === undefined) return [];
  return ["twoServerUpload", ...twoServerModulesOf(typesOf(survey))];
}

/** Load what `survey`'s upload needs (upload), each module once. */
export const uploadFor = (survey) => loadModules(upload(survey));

/** Load what `survey` needs, each module once: the units of its questions' types, the
 * optional modules, and their words in the page's language. */
export async function loadFor(survey) {
  const types = typesOf(survey);
  await Promise.all([loadTypes(types), loadModules(needed(survey), wordsFor(survey, types))]);
}

/** The catalogue parts `survey` speaks with besides its optional modules' (PART): its types'
 * (`types`), a disclosed question's (no module: form, review and page say them) and, where its
 * review speaks of questions not asked, the "skip" part (reviewsSkips). */
function wordsFor(survey, types) {
  return [...wordsOf(types),
          ...(survey.questions.some((q) => q && q.disclosed === true) ? ["disclosed"] : []),
          ...(reviewsSkips(survey) ? ["skip"] : [])];
}

/** Load every optional module, every question type's unit and their words (tests and benches
 * that build mechanisms without a survey). */
export async function loadAll() {
  parts.add("disclosed");
  await Promise.all([loadTypes(TYPE_NAMES), loadModules(Object.keys(IMPORTS),
                                                        wordsOf(TYPE_NAMES))]);
}

/** A loaded optional module; throws (a bug in the page, not the survey's fault) if it is not. */
export function loaded(name) {
  const module = modules[name];
  if (!module) throw new Error(`the ${name} module is not loaded (optional.js loadFor)`);
  return module;
}
